// Initial states: the course's rectangle, and the rectangle with small random perturbations for
// ensembles. Generated on the host from (seed, cell index) alone, so a state is the same on every
// backend and for every thread count, and any cell can be computed without the others.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "model/model.hpp"

namespace grayscott {

enum class InitialKind {
  Rectangle,  // u = 1, v = 0 except the seed rectangle (u = 0, v = 1): see seed_rectangle
  Noise,      // the rectangle plus uniform noise of +-noise_amplitude on u and v, clamped to [0, 1]
};

struct InitialState {
  InitialKind kind = InitialKind::Rectangle;
  std::uint64_t seed = 0;  // used by Noise only
};

// Half-width of the Noise perturbation: small next to the rectangle's unit contrast, large enough
// to break its symmetry within a few hundred steps.
inline constexpr double noise_amplitude = 0.05;

InitialKind parse_initial_kind(std::string_view text);  // "rectangle" or "noise"
std::string_view to_string(InitialKind kind);

// A counter-based hash of (seed, counter) to a double uniform in [0, 1), 53 random bits. Pure
// integer arithmetic: the same bits on every machine and compiler.
double uniform_hash(std::uint64_t seed, std::uint64_t counter);

// Fills u and v (rows*cols values, row-major) with the initial state. Values are computed in
// double and rounded once to Real.
template <class Real>
void fill_initial_state(const Grid& grid, const InitialState& state, std::span<Real> u,
                        std::span<Real> v);

// The same values for the block rows [row0, row0 + rows) x cols [col0, col0 + cols) of the grid
// (rows*cols values each): what an MPI rank holds. Every cell's value depends only on its global
// position, so blocks of any decomposition tile the whole state exactly.
template <class Real>
void fill_initial_block(const Grid& grid, const InitialState& state, std::int64_t row0,
                        std::int64_t col0, std::int64_t rows, std::int64_t cols, std::span<Real> u,
                        std::span<Real> v);

}  // namespace grayscott
