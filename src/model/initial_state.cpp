#include "model/initial_state.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

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

// The first index i of [0, n) at which `past(i)` holds, `past` being false then true along the
// axis (a threshold crossed by a non-decreasing coordinate); n if it never holds.
template <class Past>
std::int64_t first_past(std::int64_t n, const Past& past) {
  std::int64_t low = 0, high = n;
  while (low < high) {
    const std::int64_t middle = low + (high - low) / 2;
    if (past(middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

// The points of numpy.linspace(0, stop, n) (endpoint included): i * (stop / (n - 1)), the last
// one stop itself; a single point is 0.
double linspace_point(double stop, std::int64_t n, std::int64_t i) {
  if (n > 1 && i == n - 1) return stop;
  return n > 1 ? static_cast<double>(i) * (stop / static_cast<double>(n - 1)) : 0.0;
}

// Mesh points [first, end) of the points where `lower < point < upper`, along an axis of n
// points of linspace(0, stop, n) (which never decrease).
std::pair<std::int64_t, std::int64_t> open_interval(double stop, std::int64_t n, double lower,
                                                    double upper) {
  const std::int64_t first =
      first_past(n, [&](std::int64_t i) { return linspace_point(stop, n, i) > lower; });
  const std::int64_t end =
      first_past(n, [&](std::int64_t i) { return linspace_point(stop, n, i) >= upper; });
  return {first, std::max(first, end)};
}

}  // namespace

InitialKind parse_initial_kind(std::string_view text) {
  if (text == "rectangle") return InitialKind::Rectangle;
  if (text == "noise") return InitialKind::Noise;
  if (text == "box") return InitialKind::Box;
  if (text == "box-bordered") return InitialKind::BoxBordered;
  if (text == "drop") return InitialKind::Drop;
  if (text == "cube") return InitialKind::Cube;
  throw InvalidInput("init: expected rectangle, noise, box, box-bordered, drop or cube, got '" +
                     std::string(text) + "'");
}

InitialKind parse_recorded_initial_kind(std::string_view text) {
  return text == "custom" ? InitialKind::Custom : parse_initial_kind(text);
}

std::string_view to_string(InitialKind kind) {
  switch (kind) {
    case InitialKind::Rectangle:
      return "rectangle";
    case InitialKind::Noise:
      return "noise";
    case InitialKind::Box:
      return "box";
    case InitialKind::BoxBordered:
      return "box-bordered";
    case InitialKind::Drop:
      return "drop";
    case InitialKind::Cube:
      return "cube";
    case InitialKind::Custom:
      return "custom";
  }
  return "rectangle";
}

ShapeValues shape_values(const InitialState& state) {
  if (state.values) return *state.values;
  if (state.kind == InitialKind::Box || state.kind == InitialKind::BoxBordered) return {0.70, 0.25};
  if (state.kind == InitialKind::Cube) return {0.25, 0.33};
  return {0.0, 1.0};
}

ShapeValues parse_shape_values(std::string_view text) {
  const Outside values = parse_outside(text, "init-values");
  return {values.u, values.v};
}

SeedRectangle box_cells(const Grid& grid, bool bordered) {
  const std::int64_t border = bordered ? 1 : 0;
  const std::int64_t nx = grid.rows + 2 * border, ny = grid.cols + 2 * border;
  // grayscott_init: mesh_x, step_x = linspace(0, 1, nx, retstep=True); max_y = ny * step_x. A
  // single point has no step (NumPy gives NaN), and then no y lies inside.
  const double step_x = nx > 1 ? 1.0 / static_cast<double>(nx - 1) : NAN;
  const double max_y = static_cast<double>(ny) * step_x;
  auto [x0, x1] = open_interval(1.0, nx, 0.4, 0.6);
  auto [y0, y1] = std::isnan(max_y) ? std::pair<std::int64_t, std::int64_t>{0, 0}
                                    : open_interval(max_y, ny, 0.4 * max_y, 0.6 * max_y);
  // Mesh points to grid cells: the border's points are not cells.
  const auto cells = [&](std::int64_t first, std::int64_t end, std::int64_t n) {
    first = std::clamp<std::int64_t>(first - border, 0, n);
    end = std::clamp<std::int64_t>(end - border, first, n);
    return std::pair{first, end};
  };
  std::tie(x0, x1) = cells(x0, x1, grid.rows);
  std::tie(y0, y1) = cells(y0, y1, grid.cols);
  if (x0 == x1 || y0 == y1) return {0, 0, 0, 0};
  return {x0, x1, y0, y1};
}

SeedRectangle drop_cells(const Grid& grid) {
  // The Kokkos code's drop is rows [(R + 2) / 2 - 1, (R + 2) / 2 + 1) of its array with a halo of
  // one cell, that is rows [R / 2 - 1, R / 2 + 1) of the grid; columns alike.
  const auto span = [](std::int64_t n) {
    return std::pair{std::clamp<std::int64_t>(n / 2 - 1, 0, n),
                     std::clamp<std::int64_t>(n / 2 + 1, 0, n)};
  };
  const auto [r0, r1] = span(grid.rows);
  const auto [c0, c1] = span(grid.cols);
  return {r0, r1, c0, c1};
}

namespace {

// [n / 2 - half, n / 2 + half) of an axis of n cells, clamped to it.
std::pair<std::int64_t, std::int64_t> centred(std::int64_t n, std::int64_t half) {
  return {std::clamp<std::int64_t>(n / 2 - half, 0, n),
          std::clamp<std::int64_t>(n / 2 + half, 0, n)};
}

}  // namespace

SeedRectangle cube_cells(const Grid& grid) {
  const auto [r0, r1] = centred(grid.rows, cube_half_width);
  const auto [c0, c1] = centred(grid.cols, cube_half_width);
  return {r0, r1, c0, c1};
}

std::pair<std::int64_t, std::int64_t> shape_planes(const Grid& grid, InitialKind kind) {
  const std::int64_t depth = grid.depth;
  if (depth <= 1) return {0, std::max<std::int64_t>(depth, 0)};
  switch (kind) {
    case InitialKind::Box:
    case InitialKind::BoxBordered: {
      const std::int64_t border = kind == InitialKind::BoxBordered ? 1 : 0;
      const auto [first, end] = open_interval(1.0, depth + 2 * border, 0.4, 0.6);
      const std::int64_t z0 = std::clamp<std::int64_t>(first - border, 0, depth);
      return {z0, std::clamp<std::int64_t>(end - border, z0, depth)};
    }
    case InitialKind::Drop:
      return centred(depth, 1);
    case InitialKind::Cube:
      return centred(depth, cube_half_width);
    case InitialKind::Rectangle:
    case InitialKind::Noise:
    case InitialKind::Custom:
      break;
  }
  return {7 * depth / 16, std::max(8 * depth / 16, 7 * depth / 16 + 1)};
}

SeedRectangle shape_cells(const Grid& grid, InitialKind kind) {
  switch (kind) {
    case InitialKind::Cube:
      return cube_cells(grid);
    case InitialKind::Box:
      return box_cells(grid, false);
    case InitialKind::BoxBordered:
      return box_cells(grid, true);
    case InitialKind::Drop:
      return drop_cells(grid);
    case InitialKind::Rectangle:
    case InitialKind::Noise:
    case InitialKind::Custom:
      break;
  }
  return seed_rectangle(grid);
}

void check_initial_state(const Grid& grid, const InitialState& state) {
  if (state.values && (!std::isfinite(state.values->u) || !std::isfinite(state.values->v))) {
    throw InvalidInput("init-values: the values must be finite numbers");
  }
  if (state.kind != InitialKind::Box && state.kind != InitialKind::BoxBordered) return;
  if (grid.rows <= 0 || grid.cols <= 0 || grid.depth <= 0) return;  // the grid's check names it
  const SeedRectangle box = shape_cells(grid, state.kind);
  const auto [z0, z1] = shape_planes(grid, state.kind);
  if (box.row_begin == box.row_end || box.col_begin == box.col_end || z0 == z1) {
    throw InvalidInput("init " + std::string(to_string(state.kind)) + ": a grid of " + grid.text() +
                       " is too small to hold one cell of the box (0.4 < x < 0.6 of each axis)");
  }
}

double uniform_hash(std::uint64_t seed, std::uint64_t counter) {
  const std::uint64_t bits = mix64(mix64(seed) ^ counter);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

namespace {

// The block's values in plane z of the grid (see fill_initial_block).
template <class Real>
void fill_plane_block(const Grid& grid, const InitialState& state, std::int64_t z,
                      std::int64_t row0, std::int64_t col0, std::int64_t rows, std::int64_t cols,
                      std::span<Real> u, std::span<Real> v) {
  const auto cells = static_cast<std::size_t>(rows * cols);
  if (u.size() != cells || v.size() != cells || row0 < 0 || col0 < 0 || row0 + rows > grid.rows ||
      col0 + cols > grid.cols || z < 0 || z >= grid.depth) {
    throw InvalidInput("initial state: buffers do not match the grid");
  }
  if (state.kind == InitialKind::Custom) {
    throw std::logic_error("a custom initial state is read from where it was stored, not made");
  }
  const SeedRectangle rect = shape_cells(grid, state.kind);
  const auto [z0, z1] = shape_planes(grid, state.kind);
  const bool plane_in_shape = z >= z0 && z < z1;
  const ShapeValues inside_values = shape_values(state);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t gr = row0 + r, gc = col0 + c;
      const auto global = static_cast<std::uint64_t>((z * grid.rows + gr) * grid.cols + gc);
      const bool inside = plane_in_shape && rect.contains(gr, gc);
      double u0 = inside ? inside_values.u : 1.0, v0 = inside ? inside_values.v : 0.0;
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

}  // namespace

template <class Real>
void fill_initial_block(const Grid& grid, const InitialState& state, std::int64_t row0,
                        std::int64_t col0, std::int64_t rows, std::int64_t cols, std::span<Real> u,
                        std::span<Real> v) {
  fill_plane_block(grid, state, 0, row0, col0, rows, cols, u, v);
}

template <class Real>
void fill_initial_volume_block(const Grid& grid, const InitialState& state, std::int64_t plane0,
                               std::int64_t row0, std::int64_t col0, std::int64_t planes,
                               std::int64_t rows, std::int64_t cols, std::span<Real> u,
                               std::span<Real> v) {
  const auto per_plane = static_cast<std::size_t>(rows * cols);
  if (u.size() != per_plane * static_cast<std::size_t>(planes) || v.size() != u.size()) {
    throw InvalidInput("initial state: buffers do not match the grid");
  }
  for (std::int64_t z = 0; z < planes; ++z) {
    const std::size_t offset = static_cast<std::size_t>(z) * per_plane;
    fill_plane_block<Real>(grid, state, plane0 + z, row0, col0, rows, cols,
                           u.subspan(offset, per_plane), v.subspan(offset, per_plane));
  }
}

template <class Real>
void fill_initial_state(const Grid& grid, const InitialState& state, std::span<Real> u,
                        std::span<Real> v) {
  const auto cells = static_cast<std::size_t>(grid.cells());
  if (u.size() != cells || v.size() != cells) {
    throw InvalidInput("initial state: buffers do not match the grid");
  }
  // Rows in parallel: a large grid's initial state is gigabytes of values (2 GiB for 16384 x 16384
  // in float32), written after the engine has allocated and touched its state. Every value
  // depends on its cell alone, so the split changes nothing in the result.
  const std::int64_t cols = grid.cols, rows = grid.rows * grid.depth;
#pragma omp parallel for schedule(static) if (cells >= (std::size_t(1) << 20))
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto offset = static_cast<std::size_t>(row * cols);
    fill_plane_block<Real>(grid, state, row / grid.rows, row % grid.rows, 0, 1, cols,
                           u.subspan(offset, static_cast<std::size_t>(cols)),
                           v.subspan(offset, static_cast<std::size_t>(cols)));
  }
}

template void fill_initial_block(const Grid&, const InitialState&, std::int64_t, std::int64_t,
                                 std::int64_t, std::int64_t, std::span<float>, std::span<float>);
template void fill_initial_block(const Grid&, const InitialState&, std::int64_t, std::int64_t,
                                 std::int64_t, std::int64_t, std::span<double>, std::span<double>);
template void fill_initial_volume_block(const Grid&, const InitialState&, std::int64_t,
                                        std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                        std::int64_t, std::span<float>, std::span<float>);
template void fill_initial_volume_block(const Grid&, const InitialState&, std::int64_t,
                                        std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                        std::int64_t, std::span<double>, std::span<double>);
template void fill_initial_state(const Grid&, const InitialState&, std::span<float>,
                                 std::span<float>);
template void fill_initial_state(const Grid&, const InitialState&, std::span<double>,
                                 std::span<double>);

}  // namespace grayscott
