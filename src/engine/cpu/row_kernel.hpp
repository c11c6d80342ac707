// The CPU engine's building block: one output row of one step, from the three input rows around
// it. Everything the CPU engine does (one step per sweep, fused steps, batches, MPI subdomains with
// ghost cells) is a loop over this function, so every path rounds identically.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/cell_update.hpp"

namespace grayscott::cpu {

// What lies left of column 0 or right of the last column of a row.
enum class EdgeRule : std::uint8_t {
  Absent,    // nothing: the neighbour contributes nothing (zero-flux)
  Constant,  // the Fixed boundary's values
  Wrap,      // the other end of the same row (periodic)
  Memory,    // a ghost cell at index -1 or `cols`, filled by the caller (MPI halo, tiles)
};

// The rows above, at and below the output row, for u and v. A null row above or below is absent
// (a zero-flux edge). A row may be the caller's constant row (Fixed boundary), a wrapped row
// (periodic) or a ghost row.
template <class Real>
struct RowNeighbourhood {
  const Real* u[3];
  const Real* v[3];
};

namespace detail {

template <class Real>
inline Real fetch(const Real* row, std::int64_t j, std::int64_t cols, EdgeRule left, EdgeRule right,
                  Real centre, Real outside) {
  if (row == nullptr) return centre;
  if (j < 0) {
    switch (left) {
      case EdgeRule::Absent:
        return centre;
      case EdgeRule::Constant:
        return outside;
      case EdgeRule::Wrap:
        return row[cols - 1];
      case EdgeRule::Memory:
        return row[-1];
    }
  }
  if (j >= cols) {
    switch (right) {
      case EdgeRule::Absent:
        return centre;
      case EdgeRule::Constant:
        return outside;
      case EdgeRule::Wrap:
        return row[0];
      case EdgeRule::Memory:
        return row[cols];
    }
  }
  return row[j];
}

// Any cell, any edge: gathers the 3x3 neighbourhood value by value. Used for edge columns.
template <StencilKind K, class Real>
inline void update_cell_general(const RowNeighbourhood<Real>& in, std::int64_t j, std::int64_t cols,
                                EdgeRule left, EdgeRule right, const Coefficients<Real>& c,
                                const Real* w, Real* out_u, Real* out_v) {
  Real nu[9], nv[9];
  const Real cu = in.u[1][j], cv = in.v[1][j];
  for (int dr = 0; dr < 3; ++dr) {
    for (int dc = 0; dc < 3; ++dc) {
      nu[dr * 3 + dc] = fetch(in.u[dr], j + dc - 1, cols, left, right, cu, fixed_u<Real>);
      nv[dr * 3 + dc] = fetch(in.v[dr], j + dc - 1, cols, left, right, cv, fixed_v<Real>);
    }
  }
  react(cu, cv, laplacian<K>(nu, w), laplacian<K>(nv, w), c, out_u[j], out_v[j]);
}

// Columns [j0, j1) whose left and right neighbours are in memory: the vectorised inner loop.
template <StencilKind K, bool HasUp, bool HasDown, class Real>
GRAYSCOTT_HD void update_cell(const Real* __restrict u0, const Real* __restrict u1,
                              const Real* __restrict u2, const Real* __restrict v0,
                              const Real* __restrict v1, const Real* __restrict v2, std::int64_t j,
                              const Coefficients<Real>& c, const Real* w, Real* __restrict out_u,
                              Real* __restrict out_v) {
  const Real cu = u1[j], cv = v1[j];
  Real nu[9], nv[9];
  nu[3] = u1[j - 1], nu[4] = cu, nu[5] = u1[j + 1];
  nv[3] = v1[j - 1], nv[4] = cv, nv[5] = v1[j + 1];
  if constexpr (HasUp) {
    nu[0] = u0[j - 1], nu[1] = u0[j], nu[2] = u0[j + 1];
    nv[0] = v0[j - 1], nv[1] = v0[j], nv[2] = v0[j + 1];
  } else {
    nu[0] = nu[1] = nu[2] = cu;
    nv[0] = nv[1] = nv[2] = cv;
  }
  if constexpr (HasDown) {
    nu[6] = u2[j - 1], nu[7] = u2[j], nu[8] = u2[j + 1];
    nv[6] = v2[j - 1], nv[7] = v2[j], nv[8] = v2[j + 1];
  } else {
    nu[6] = nu[7] = nu[8] = cu;
    nv[6] = nv[7] = nv[8] = cv;
  }
  react(cu, cv, laplacian<K>(nu, w), laplacian<K>(nv, w), c, out_u[j], out_v[j]);
}

// Columns [j0, j1) whose left and right neighbours are in memory: the vectorised inner loop.
// It runs in blocks of one cache line of cells, each a loop of constant length that the compiler
// turns into whole vectors with no scalar remainder; the last block is shifted left to end at j1
// and recomputes a few cells, which is harmless (the output does not alias the input) and keeps
// narrow rows (a batch of 128-wide simulations) from spending their time in scalar tails.
template <StencilKind K, bool HasUp, bool HasDown, class Real>
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
      update_cell<K, HasUp, HasDown>(u0, u1, u2, v0, v1, v2, j, c, w, out_u, out_v);
    }
    return;
  }
  for (std::int64_t start = j0; start < j1; start += block) {
    const std::int64_t first = std::min(start, j1 - block);
#pragma omp simd
    for (std::int64_t k = 0; k < block; ++k) {
      update_cell<K, HasUp, HasDown>(u0, u1, u2, v0, v1, v2, first + k, c, w, out_u, out_v);
    }
  }
}

}  // namespace detail

// Writes one row (`cols` cells) of the next step into out_u, out_v, which must not alias the input.
template <StencilKind K, class Real>
inline void update_row(const RowNeighbourhood<Real>& in, std::int64_t cols, EdgeRule left,
                       EdgeRule right, const Coefficients<Real>& c, const Real* w, Real* out_u,
                       Real* out_v) {
  const std::int64_t j0 = (left == EdgeRule::Memory) ? 0 : 1;
  const std::int64_t j1 = (right == EdgeRule::Memory) ? cols : cols - 1;
  if (j1 > j0) {
    const bool up = in.u[0] != nullptr, down = in.u[2] != nullptr;
    if (up && down) {
      detail::update_span<K, true, true>(in, j0, j1, c, w, out_u, out_v);
    } else if (up) {
      detail::update_span<K, true, false>(in, j0, j1, c, w, out_u, out_v);
    } else if (down) {
      detail::update_span<K, false, true>(in, j0, j1, c, w, out_u, out_v);
    } else {
      detail::update_span<K, false, false>(in, j0, j1, c, w, out_u, out_v);
    }
  }
  if (left != EdgeRule::Memory) {
    detail::update_cell_general<K>(in, 0, cols, left, right, c, w, out_u, out_v);
  }
  if (right != EdgeRule::Memory && (cols > 1 || left == EdgeRule::Memory)) {
    detail::update_cell_general<K>(in, cols - 1, cols, left, right, c, w, out_u, out_v);
  }
}

}  // namespace grayscott::cpu
