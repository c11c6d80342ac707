// The CPU engine's building block: one output row of one step, from the three input rows around
// it. Everything the CPU engine does (one step per sweep, fused steps, batches, MPI blocks with
// ghost cells) is a loop over this function, so every path rounds identically. Each cell's 3x3
// neighbourhood is gathered by model/neighbourhood.hpp, the one rule every backend's kernels use.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/cpu/shifted_span.hpp"
#include "model/cell_update.hpp"
#include "model/neighbourhood.hpp"

// The lambdas a cell's gather is given are inlined by force: left to its heuristics, GCC kept a
// call per neighbour inside the vector loops once update_row had grown (30 times slower).
#define GRAYSCOTT_CPU_INLINE __attribute__((always_inline))

namespace grayscott::cpu {

// The rows above, at and below the output row, for u and v. A null row above or below lies beyond
// a non-periodic edge of the grid, where the boundary rule stands in for it; on a periodic grid
// the caller gives the wrapped row, and a row may be a ghost row (an MPI halo).
template <class Real>
struct RowNeighbourhood {
  const Real* u[3];
  const Real* v[3];
};

// Whether the cells left of column 0 and right of the last column are in memory (ghost cells the
// caller filled, at index -1 and `cols`: an MPI halo) or lie beyond the grid's edge, where the
// boundary rule applies (on a periodic grid: the other end of the same row).
struct RowEnds {
  bool ghost_left = false;
  bool ghost_right = false;
};

namespace detail {

// Any cell of a row, its neighbourhood gathered with every check: the row's end cells.
template <StencilKind K, Boundary B, class Real>
inline void update_end_cell(const RowNeighbourhood<Real>& in, std::int64_t j, std::int64_t cols,
                            RowEnds ends, const Coefficients<Real>& c, const Real* w, Real* out_u,
                            Real* out_v) {
  const Real cu = in.u[1][j], cv = in.v[1][j];
  Real nu[9], nv[9];
  gather_neighbourhood<B>(
      cu, cv,
      [&](int dr, int dc) GRAYSCOTT_CPU_INLINE {
        const std::int64_t k = j + dc;
        return in.u[dr + 1] != nullptr && (k >= 0 || ends.ghost_left) &&
               (k < cols || ends.ghost_right);
      },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) GRAYSCOTT_CPU_INLINE {
        std::int64_t k = j + dc;
        if constexpr (B == Boundary::Periodic) {
          if (k < 0 && !ends.ghost_left) k += cols;
          if (k >= cols && !ends.ghost_right) k -= cols;
        }
        nu_k = in.u[dr + 1][k];
        nv_k = in.v[dr + 1][k];
      },
      c, nu, nv);
  step_cell<K>(nu, nv, w, c, out_u[j], out_v[j]);
}

// A cell whose left and right neighbours are in memory; the rows above and below are there or not
// (HasUp, HasDown: beyond a non-periodic edge) for the whole row, so the gather has no test left
// once inlined and the loop over such cells vectorises.
template <StencilKind K, Boundary B, bool HasUp, bool HasDown, class Real>
GRAYSCOTT_HD void update_inner_cell(const Real* __restrict u0, const Real* __restrict u1,
                                    const Real* __restrict u2, const Real* __restrict v0,
                                    const Real* __restrict v1, const Real* __restrict v2,
                                    std::int64_t j, const Coefficients<Real>& c, const Real* w,
                                    Real* __restrict out_u, Real* __restrict out_v) {
  static_assert(B != Boundary::Periodic || (HasUp && HasDown), "a periodic grid wraps its rows");
  const Real cu = u1[j], cv = v1[j];
  Real nu[9], nv[9];
  gather_neighbourhood<B>(
      cu, cv,
      [](int dr, int) GRAYSCOTT_CPU_INLINE { return dr < 0 ? HasUp : (dr > 0 ? HasDown : true); },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) GRAYSCOTT_CPU_INLINE {
        nu_k = (dr < 0 ? u0 : (dr > 0 ? u2 : u1))[j + dc];
        nv_k = (dr < 0 ? v0 : (dr > 0 ? v2 : v1))[j + dc];
      },
      c, nu, nv);
  step_cell<K>(nu, nv, w, c, out_u[j], out_v[j]);
}

// Calls cell(j) for every column j of [j0, j1) in vector loops of whole vectors: one loop over
// the whole cache lines of cells from j0, then, for a rest shorter than a line, one more line
// shifted left to end at j1, which recomputes a few cells (harmless: the output does not alias the
// input) and keeps narrow rows (a batch of 128-wide simulations) out of scalar tails. A span
// shorter than a line is one loop of its own. One loop over the lines rather than a loop of
// one-line loops: GCC set up the neighbours' pointers again for each line of the latter, a sixth
// of a row's time once the arithmetic was folded.
template <class Real, class Cell>
GRAYSCOTT_CPU_INLINE inline void for_each_column(std::int64_t j0, std::int64_t j1,
                                                 const Cell& cell) {
  constexpr std::int64_t line = 64 / sizeof(Real);
  if (j1 - j0 < line) {
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) cell(j);
    return;
  }
  const std::int64_t whole_lines_end = j0 + (j1 - j0) / line * line;
#pragma omp simd
  for (std::int64_t j = j0; j < whole_lines_end; ++j) cell(j);
  if (whole_lines_end < j1) {
    const std::int64_t last_line = j1 - line;
#pragma omp simd
    for (std::int64_t k = 0; k < line; ++k) cell(last_line + k);
  }
}

// Which end of a row a cell lies at.
enum class RowSide { Left, Right };

// Columns [j0, j1) whose left and right neighbours are in memory: the vectorised inner loop.
template <StencilKind K, Boundary B, bool HasUp, bool HasDown, class Real>
inline void update_span(const RowNeighbourhood<Real>& in, std::int64_t j0, std::int64_t j1,
                        const Coefficients<Real>& c, const Real* w, Real* __restrict out_u,
                        Real* __restrict out_v) {
  const Real* __restrict u0 = in.u[0];
  const Real* __restrict u1 = in.u[1];
  const Real* __restrict u2 = in.u[2];
  const Real* __restrict v0 = in.v[0];
  const Real* __restrict v1 = in.v[1];
  const Real* __restrict v2 = in.v[2];
  const auto cell = [&](std::int64_t j) GRAYSCOTT_CPU_INLINE {
    update_inner_cell<K, B, HasUp, HasDown>(u0, u1, u2, v0, v1, v2, j, c, w, out_u, out_v);
  };
#if GRAYSCOTT_SHIFTED_SPAN
  if constexpr (HasUp && HasDown && has_shifted_span<K, Real>) {
    if (j1 - j0 >= VectorOps<Real>::lanes) {
      const SpanEnds<Real> beside{{u0[j0 - 1], u1[j0 - 1], u2[j0 - 1]},
                                  {v0[j0 - 1], v1[j0 - 1], v2[j0 - 1]},
                                  {u0[j1], u1[j1], u2[j1]},
                                  {v0[j1], v1[j1], v2[j1]}};
      shifted_span<K>(u0, u1, u2, v0, v1, v2, j0, j1, beside, c, out_u, out_v);
      return;
    }
  }
#endif
  for_each_column<Real>(j0, j1, cell);
}

#if GRAYSCOTT_SHIFTED_SPAN
// The value beside one end of `row` that the row's end cell reads: the ghost cell an MPI halo
// filled, the other end of the row on a periodic grid, or what beyond_edge() gives beyond the
// grid's edge to the end cell of the row `centre` (the row whose cells are stepped: the neighbours
// above and below the edge are its end cell's too).
template <Boundary B, class Real>
Real outside_cell(const Real* row, const Real* centre, std::int64_t cols, RowSide side, bool ghost,
                  Real outside) {
  const bool left = side == RowSide::Left;
  if (ghost) return row[left ? -1 : cols];
  if constexpr (B == Boundary::Periodic) {
    return row[left ? cols - 1 : 0];
  } else {
    return beyond_edge<B>(centre[left ? 0 : cols - 1], outside);
  }
}

// The column beside one end of a row that the cells at that end read (the rows above, at and
// below), each as outside_cell() gives it: gather_neighbourhood() fills the three neighbours of
// the end cell on that side alike.
template <Boundary B, class Real>
Column<Real> outside_column(const Real* const (&rows)[3], std::int64_t cols, RowSide side,
                            bool ghost, Real outside) {
  return {outside_cell<B>(rows[0], rows[1], cols, side, ghost, outside),
          outside_cell<B>(rows[1], rows[1], cols, side, ghost, outside),
          outside_cell<B>(rows[2], rows[1], cols, side, ghost, outside)};
}
#endif

// Cell `lane` of the first (Left) or last (Right) cache line of a row whose end at that side lies
// at the grid's edge, the line's cells starting at `line`: gathered as update_end_cell does, with
// the rows above and below there or not for the whole row (HasUp, HasDown) as in update_inner_cell.
// Whether a neighbour is beyond the edge depends on the lane alone, so a loop over the lanes
// vectorises: a neighbour beyond the edge is never read (the compiler masks those loads), and a
// periodic row's other end is one value for the whole line.
template <StencilKind K, Boundary B, RowSide Side, bool HasUp, bool HasDown, class Real>
inline void update_edge_line_cell(const Real* __restrict u0, const Real* __restrict u1,
                                  const Real* __restrict u2, const Real* __restrict v0,
                                  const Real* __restrict v1, const Real* __restrict v2,
                                  std::int64_t line, int lane, std::int64_t other_end,
                                  const Coefficients<Real>& c, const Real* w,
                                  Real* __restrict out_u, Real* __restrict out_v) {
  constexpr int block = 64 / sizeof(Real);
  const std::int64_t j = line + lane;
  const Real cu = u1[j], cv = v1[j];
  const auto beyond = [&](int dc) GRAYSCOTT_CPU_INLINE {
    return Side == RowSide::Left ? lane + dc < 0 : lane + dc >= block;
  };
  Real nu[9], nv[9];
  gather_neighbourhood<B>(
      cu, cv,
      [&](int dr, int dc) GRAYSCOTT_CPU_INLINE {
        return (dr < 0 ? HasUp : (dr > 0 ? HasDown : true)) && !beyond(dc);
      },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) GRAYSCOTT_CPU_INLINE {
        const Real* ru = dr < 0 ? u0 : (dr > 0 ? u2 : u1);
        const Real* rv = dr < 0 ? v0 : (dr > 0 ? v2 : v1);
        if (B == Boundary::Periodic && beyond(dc)) {
          nu_k = ru[other_end];
          nv_k = rv[other_end];
        } else {
          nu_k = ru[j + dc];
          nv_k = rv[j + dc];
        }
      },
      c, nu, nv);
  step_cell<K>(nu, nv, w, c, out_u[j], out_v[j]);
}

// The first (Left) or last (Right) cache line of cells of a row whose end at that side lies at the
// grid's edge, as one vector loop: a narrow row (a batch of 64-wide members) no longer spends a
// fifth of its time on its two end cells one at a time. The cells round as update_end_cell's.
template <StencilKind K, Boundary B, RowSide Side, bool HasUp, bool HasDown, class Real>
inline void update_edge_line(const RowNeighbourhood<Real>& in, std::int64_t cols,
                             const Coefficients<Real>& c, const Real* w, Real* __restrict out_u,
                             Real* __restrict out_v) {
  const Real* __restrict u0 = in.u[0];
  const Real* __restrict u1 = in.u[1];
  const Real* __restrict u2 = in.u[2];
  const Real* __restrict v0 = in.v[0];
  const Real* __restrict v1 = in.v[1];
  const Real* __restrict v2 = in.v[2];
  constexpr int block = 64 / sizeof(Real);
  const std::int64_t line = Side == RowSide::Left ? 0 : cols - block;
  const std::int64_t other_end = Side == RowSide::Left ? cols - 1 : 0;  // a periodic row's wrap
#pragma omp simd
  for (int lane = 0; lane < block; ++lane) {
    update_edge_line_cell<K, B, Side, HasUp, HasDown>(u0, u1, u2, v0, v1, v2, line, lane, other_end,
                                                      c, w, out_u, out_v);
  }
}

// Calls body.template operator()<HasUp, HasDown>() for the row's rows above and below (a null one
// lies beyond a non-periodic edge), so that the loops inside have no test left.
template <Boundary B, class Real, class Body>
inline void dispatch_rows_around(const RowNeighbourhood<Real>& in, const Body& body) {
  const bool up = in.u[0] != nullptr, down = in.u[2] != nullptr;
  if (up && down) {
    body.template operator()<true, true>();
  } else if constexpr (B != Boundary::Periodic) {
    if (up) {
      body.template operator()<true, false>();
    } else if (down) {
      body.template operator()<false, true>();
    } else {
      body.template operator()<false, false>();
    }
  }
}

// update_row for a row whose rows above and below are there or not as HasUp, HasDown say.
template <StencilKind K, Boundary B, bool HasUp, bool HasDown, class Real>
inline void update_row_between(const RowNeighbourhood<Real>& in, std::int64_t cols, RowEnds ends,
                               const Coefficients<Real>& c, const Real* w, Real* out_u,
                               Real* out_v) {
#if GRAYSCOTT_SHIFTED_SPAN
  if constexpr (HasUp && HasDown && has_shifted_span<K, Real>) {
    // The whole row, its end cells included, in the shifted loop: the columns beside it are the
    // ghost cells or stand for the grid's edge.
    if (cols >= VectorOps<Real>::lanes) {
      const SpanEnds<Real> beside{
          outside_column<B>(in.u, cols, RowSide::Left, ends.ghost_left, c.outside_u),
          outside_column<B>(in.v, cols, RowSide::Left, ends.ghost_left, c.outside_v),
          outside_column<B>(in.u, cols, RowSide::Right, ends.ghost_right, c.outside_u),
          outside_column<B>(in.v, cols, RowSide::Right, ends.ghost_right, c.outside_v)};
      shifted_span<K>(in.u[0], in.u[1], in.u[2], in.v[0], in.v[1], in.v[2], 0, cols, beside, c,
                      out_u, out_v);
      return;
    }
  }
#endif
  constexpr std::int64_t block = 64 / sizeof(Real);
  if (cols >= 2 * block) {
    // Each end at the grid's edge takes a vector line, the columns between the inner loop.
    std::int64_t j0 = 0, j1 = cols;
    if (!ends.ghost_left) {
      update_edge_line<K, B, RowSide::Left, HasUp, HasDown>(in, cols, c, w, out_u, out_v);
      j0 = block;
    }
    if (!ends.ghost_right) {
      update_edge_line<K, B, RowSide::Right, HasUp, HasDown>(in, cols, c, w, out_u, out_v);
      j1 = cols - block;
    }
    if (j1 > j0) update_span<K, B, HasUp, HasDown>(in, j0, j1, c, w, out_u, out_v);
    return;
  }
  // A row narrower than two lines: its end cells one at a time.
  const std::int64_t j0 = ends.ghost_left ? 0 : 1;
  const std::int64_t j1 = ends.ghost_right ? cols : cols - 1;
  if (j1 > j0) update_span<K, B, HasUp, HasDown>(in, j0, j1, c, w, out_u, out_v);
  if (!ends.ghost_left) update_end_cell<K, B>(in, 0, cols, ends, c, w, out_u, out_v);
  if (!ends.ghost_right && (cols > 1 || ends.ghost_left)) {
    update_end_cell<K, B>(in, cols - 1, cols, ends, c, w, out_u, out_v);
  }
}

}  // namespace detail

// Writes one row (`cols` cells) of the next step into out_u, out_v, which must not alias the input.
// B is the grid's boundary rule: what a null row above or below and a row end that is not a ghost
// cell stand for.
template <StencilKind K, Boundary B, class Real>
inline void update_row(const RowNeighbourhood<Real>& in, std::int64_t cols, RowEnds ends,
                       const Coefficients<Real>& c, const Real* w, Real* out_u, Real* out_v) {
  detail::dispatch_rows_around<B>(in, [&]<bool HasUp, bool HasDown>() {
    detail::update_row_between<K, B, HasUp, HasDown>(in, cols, ends, c, w, out_u, out_v);
  });
}

// Rows [r0, r1) of a grid of `cols` columns stored row after row (u, v; out_u, out_v likewise),
// every one with its rows above and below in the grid, the ends of each at the grid's edge: the
// inside rows of a batch's member, stepped as one loop, without a neighbourhood or a dispatch per
// row. Each row rounds as update_row would round it.
template <StencilKind K, Boundary B, class Real>
inline void update_inside_rows(const Real* u, const Real* v, std::int64_t r0, std::int64_t r1,
                               std::int64_t cols, const Coefficients<Real>& c, const Real* w,
                               Real* out_u, Real* out_v) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const RowNeighbourhood<Real> in{{u + (r - 1) * cols, u + r * cols, u + (r + 1) * cols},
                                    {v + (r - 1) * cols, v + r * cols, v + (r + 1) * cols}};
    detail::update_row_between<K, B, true, true>(in, cols, RowEnds{}, c, w, out_u + r * cols,
                                                 out_v + r * cols);
  }
}

}  // namespace grayscott::cpu
