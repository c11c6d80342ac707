// The CPU engine's building block: one output row of one step, from the three input rows around
// it. Everything the CPU engine does (one step per sweep, fused steps, batches, MPI blocks with
// ghost cells) is a loop over this function, so every path rounds identically. Each cell's 3x3
// neighbourhood is gathered by model/neighbourhood.hpp, the one rule every backend's kernels use.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/cell_update.hpp"
#include "model/neighbourhood.hpp"

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
      [&](int dr, int dc) {
        const std::int64_t k = j + dc;
        return in.u[dr + 1] != nullptr && (k >= 0 || ends.ghost_left) &&
               (k < cols || ends.ghost_right);
      },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) {
        std::int64_t k = j + dc;
        if constexpr (B == Boundary::Periodic) {
          if (k < 0 && !ends.ghost_left) k += cols;
          if (k >= cols && !ends.ghost_right) k -= cols;
        }
        nu_k = in.u[dr + 1][k];
        nv_k = in.v[dr + 1][k];
      },
      nu, nv);
  react(cu, cv, laplacian<K>(nu, w), laplacian<K>(nv, w), c, out_u[j], out_v[j]);
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
      cu, cv, [](int dr, int) { return dr < 0 ? HasUp : (dr > 0 ? HasDown : true); },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) {
        nu_k = (dr < 0 ? u0 : (dr > 0 ? u2 : u1))[j + dc];
        nv_k = (dr < 0 ? v0 : (dr > 0 ? v2 : v1))[j + dc];
      },
      nu, nv);
  react(cu, cv, laplacian<K>(nu, w), laplacian<K>(nv, w), c, out_u[j], out_v[j]);
}

// Columns [j0, j1) whose left and right neighbours are in memory: the vectorised inner loop.
// It runs in blocks of one cache line of cells, each a loop of constant length that the compiler
// turns into whole vectors with no scalar remainder; the last block is shifted left to end at j1
// and recomputes a few cells, which is harmless (the output does not alias the input) and keeps
// narrow rows (a batch of 128-wide simulations) from spending their time in scalar tails.
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
  constexpr std::int64_t block = 64 / sizeof(Real);
  if (j1 - j0 < block) {
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      update_inner_cell<K, B, HasUp, HasDown>(u0, u1, u2, v0, v1, v2, j, c, w, out_u, out_v);
    }
    return;
  }
  for (std::int64_t start = j0; start < j1; start += block) {
    const std::int64_t first = std::min(start, j1 - block);
#pragma omp simd
    for (std::int64_t k = 0; k < block; ++k) {
      update_inner_cell<K, B, HasUp, HasDown>(u0, u1, u2, v0, v1, v2, first + k, c, w, out_u,
                                              out_v);
    }
  }
}

}  // namespace detail

// Writes one row (`cols` cells) of the next step into out_u, out_v, which must not alias the input.
// B is the grid's boundary rule: what a null row above or below and a row end that is not a ghost
// cell stand for.
template <StencilKind K, Boundary B, class Real>
inline void update_row(const RowNeighbourhood<Real>& in, std::int64_t cols, RowEnds ends,
                       const Coefficients<Real>& c, const Real* w, Real* out_u, Real* out_v) {
  const std::int64_t j0 = ends.ghost_left ? 0 : 1;
  const std::int64_t j1 = ends.ghost_right ? cols : cols - 1;
  if (j1 > j0) {
    const bool up = in.u[0] != nullptr, down = in.u[2] != nullptr;
    if (up && down) {
      detail::update_span<K, B, true, true>(in, j0, j1, c, w, out_u, out_v);
    } else if constexpr (B != Boundary::Periodic) {
      if (up) {
        detail::update_span<K, B, true, false>(in, j0, j1, c, w, out_u, out_v);
      } else if (down) {
        detail::update_span<K, B, false, true>(in, j0, j1, c, w, out_u, out_v);
      } else {
        detail::update_span<K, B, false, false>(in, j0, j1, c, w, out_u, out_v);
      }
    }
  }
  if (!ends.ghost_left) detail::update_end_cell<K, B>(in, 0, cols, ends, c, w, out_u, out_v);
  if (!ends.ghost_right && (cols > 1 || ends.ghost_left)) {
    detail::update_end_cell<K, B>(in, cols - 1, cols, ends, c, w, out_u, out_v);
  }
}

}  // namespace grayscott::cpu
