#include "model/initial_state.hpp"

#include <algorithm>
#include <string>

namespace grayscott {

namespace {

// The SplitMix64 finaliser: a bijective mix of 64 bits in which every input bit affects every
// output bit. Applied twice (seed, then counter) so that nearby seeds and nearby cells give
// unrelated streams.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

InitialKind parse_initial_kind(std::string_view text) {
  if (text == "rectangle") return InitialKind::Rectangle;
  if (text == "noise") return InitialKind::Noise;
  throw InvalidInput("init: expected rectangle or noise, got '" + std::string(text) + "'");
}

std::string_view to_string(InitialKind kind) {
  return kind == InitialKind::Noise ? "noise" : "rectangle";
}

double uniform_hash(std::uint64_t seed, std::uint64_t counter) {
  const std::uint64_t bits = mix64(mix64(seed) ^ counter);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

template <class Real>
void fill_initial_block(const Grid& grid, const InitialState& state, std::int64_t row0,
                        std::int64_t col0, std::int64_t rows, std::int64_t cols, std::span<Real> u,
                        std::span<Real> v) {
  const auto cells = static_cast<std::size_t>(rows * cols);
  if (u.size() != cells || v.size() != cells || row0 < 0 || col0 < 0 || row0 + rows > grid.rows ||
      col0 + cols > grid.cols) {
    throw InvalidInput("initial state: buffers do not match the grid");
  }
  const SeedRectangle rect = seed_rectangle(grid);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t gr = row0 + r, gc = col0 + c;
      const auto global = static_cast<std::uint64_t>(gr * grid.cols + gc);
      const bool inside = rect.contains(gr, gc);
      double u0 = inside ? 0.0 : 1.0, v0 = inside ? 1.0 : 0.0;
      if (state.kind == InitialKind::Noise) {
        // Counters 2i and 2i+1 of global cell i: independent draws for u and v.
        const double du = (2.0 * uniform_hash(state.seed, 2 * global) - 1.0) * noise_amplitude;
        const double dv = (2.0 * uniform_hash(state.seed, 2 * global + 1) - 1.0) * noise_amplitude;
        u0 = std::clamp(u0 + du, 0.0, 1.0);
        v0 = std::clamp(v0 + dv, 0.0, 1.0);
      }
      const auto i = static_cast<std::size_t>(r * cols + c);
      u[i] = static_cast<Real>(u0);
      v[i] = static_cast<Real>(v0);
    }
  }
}

template <class Real>
void fill_initial_state(const Grid& grid, const InitialState& state, std::span<Real> u,
                        std::span<Real> v) {
  const auto cells = static_cast<std::size_t>(grid.cells());
  if (u.size() != cells || v.size() != cells) {
    throw InvalidInput("initial state: buffers do not match the grid");
  }
  // Bands of rows in parallel: a large grid's initial state is gigabytes of values (2 GiB for
  // 16384 x 16384 in float32), written after the engine has allocated and touched its state.
  // Every value depends on its cell alone, so the split changes nothing in the result.
  const std::int64_t cols = grid.cols;
#pragma omp parallel for schedule(static) if (cells >= (std::size_t(1) << 20))
  for (std::int64_t r = 0; r < grid.rows; ++r) {
    const auto offset = static_cast<std::size_t>(r * cols);
    fill_initial_block<Real>(grid, state, r, 0, 1, cols,
                             u.subspan(offset, static_cast<std::size_t>(cols)),
                             v.subspan(offset, static_cast<std::size_t>(cols)));
  }
}

template void fill_initial_block(const Grid&, const InitialState&, std::int64_t, std::int64_t,
                                 std::int64_t, std::int64_t, std::span<float>, std::span<float>);
template void fill_initial_block(const Grid&, const InitialState&, std::int64_t, std::int64_t,
                                 std::int64_t, std::int64_t, std::span<double>, std::span<double>);
template void fill_initial_state(const Grid&, const InitialState&, std::span<float>,
                                 std::span<float>);
template void fill_initial_state(const Grid&, const InitialState&, std::span<double>,
                                 std::span<double>);

}  // namespace grayscott
