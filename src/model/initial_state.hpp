// Initial states: the course's rectangle, the rectangle with small random perturbations for
// ensembles, the Python course's box and the Kokkos course's drop. Generated on the host from
// (seed, cell index) alone, so a state is the same on every backend and for every thread count, and
// any cell can be computed without the others.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "model/model.hpp"

namespace grayscott {

// Each start is u = 1, v = 0 everywhere except in one shape, which holds the start's own values
// (InitialState::values replaces them).
enum class InitialKind {
  Rectangle,  // the seed rectangle (u = 0, v = 1): see seed_rectangle
  Noise,      // the rectangle plus uniform noise of +-noise_amplitude on u and v, clamped to [0, 1]
  Box,        // the Python course's box (u = 0.70, v = 0.25) on the grid's own mesh: see box_cells
  // The same box on the mesh of the grid with a border of one cell around it, which the NumPy and
  // Numba versions of the Python course hold in their arrays and never compute: their run on an
  // (R + 2) x (C + 2) array is this start on R x C.
  BoxBordered,
  Drop,  // the Kokkos course's 2 x 2 drop (u = 0, v = 1): see drop_cells
  Cube,  // ADIOS2's Gray-Scott example's centred cube (u = 0.25, v = 0.33): see cube_cells
  // A state a front end was given (values written into a Python simulation's u and v before its
  // run): not generated, so a run file stores it (/initial_state) and a continued run reads it.
  Custom,
};

// The values inside a start's shape.
struct ShapeValues {
  double u, v;
};

struct InitialState {
  InitialKind kind = InitialKind::Rectangle;
  std::uint64_t seed = 0;               // used by Noise only
  std::optional<ShapeValues> values{};  // inside the shape; none: the kind's own
};

// The values inside the shape of `state`: its own, or the kind's (Box: 0.70, 0.25; the others:
// 0, 1).
ShapeValues shape_values(const InitialState& state);
// "U,V": two finite numbers, as --init-values takes them.
ShapeValues parse_shape_values(std::string_view text);

// The cells of the Python course's box (compute/common.py, grayscott_init) on an nx x ny mesh:
// x_i = i / (nx - 1) (linspace(0, 1, nx), so x_{nx-1} = 1), y_j = j * ymax / (ny - 1) with
// ymax = ny / (nx - 1) (linspace(0, ymax, ny), y_{ny-1} = ymax), and the box is
// 0.4 < x < 0.6, 0.4 ymax < y < 0.6 ymax, every product and comparison in float64 as NumPy does
// them. For Box the mesh is the grid (nx = rows, ny = cols); for BoxBordered it is the grid with
// its border (nx = rows + 2, ny = cols + 2) and grid cell (r, c) is mesh point (r + 1, c + 1).
// Half-open ranges of grid cells, possibly empty (a grid too small to hold one cell of the box).
SeedRectangle box_cells(const Grid& grid, bool bordered);
// The Kokkos course's drop (exercises/gray_scott/gray_scott.cpp, initialize): rows R/2 - 1 and
// R/2, columns C/2 - 1 and C/2 (integer division), clamped to the grid.
SeedRectangle drop_cells(const Grid& grid);
// ADIOS2's Gray-Scott example's cube (simulation/gray-scott.cpp, init_field): cells
// [n/2 - 6, n/2 + 6) of each axis of n cells, clamped to it; on a plane, that square.
inline constexpr std::int64_t cube_half_width = 6;
SeedRectangle cube_cells(const Grid& grid);
// The shape of `kind` in each plane of `grid` that it reaches (see shape_planes).
SeedRectangle shape_cells(const Grid& grid, InitialKind kind);
// The planes [first, end) of a volume that the shape of `kind` fills, its rows and columns being
// shape_cells' in each: the rectangle's [7D/16, 8D/16) (one plane at least), the box's the same
// linspace rule as its rows, the drop's [D/2 - 1, D/2 + 1), the cube's [D/2 - 6, D/2 + 6), all
// clamped. A plane (depth 1) is its own only plane: [0, 1).
std::pair<std::int64_t, std::int64_t> shape_planes(const Grid& grid, InitialKind kind);

// Throws InvalidInput, before any computing, for a start that cannot be made on `grid`: a box
// with no cell on it.
void check_initial_state(const Grid& grid, const InitialState& state);

// Half-width of the Noise perturbation: small next to the rectangle's unit contrast, large enough
// to break its symmetry within a few hundred steps.
inline constexpr double noise_amplitude = 0.05;

// "rectangle", "noise", "box", "box-bordered", "drop" or "cube": the starts that can be asked
// for. A file's "custom" is read by parse_recorded_initial_kind.
InitialKind parse_initial_kind(std::string_view text);
// What a run file records: one of those, or "custom".
InitialKind parse_recorded_initial_kind(std::string_view text);
std::string_view to_string(InitialKind kind);

// A counter-based hash of (seed, counter) to a double uniform in [0, 1), 53 random bits. Pure
// integer arithmetic: the same bits on every machine and compiler.
double uniform_hash(std::uint64_t seed, std::uint64_t counter);

// Fills u and v (depth*rows*cols values, plane after plane, each row-major) with the initial
// state (not a Custom one, which is read from where it was stored: std::logic_error). Values are
// computed in double and rounded once to Real. The noise of cell i (its index in that order) is
// drawn from counters 2i and 2i + 1.
template <class Real>
void fill_initial_state(const Grid& grid, const InitialState& state, std::span<Real> u,
                        std::span<Real> v);

// The same values for the block rows [row0, row0 + rows) x cols [col0, col0 + cols) of a plane's
// grid (rows*cols values each): what an MPI rank holds. Every cell's value depends only on its
// global position, so blocks of any decomposition tile the whole state exactly.
template <class Real>
void fill_initial_block(const Grid& grid, const InitialState& state, std::int64_t row0,
                        std::int64_t col0, std::int64_t rows, std::int64_t cols, std::span<Real> u,
                        std::span<Real> v);
// A volume's block: planes [plane0, plane0 + planes) of those rows and columns (planes*rows*cols
// values each, plane after plane).
template <class Real>
void fill_initial_volume_block(const Grid& grid, const InitialState& state, std::int64_t plane0,
                               std::int64_t row0, std::int64_t col0, std::int64_t planes,
                               std::int64_t rows, std::int64_t cols, std::span<Real> u,
                               std::span<Real> v);

}  // namespace grayscott
