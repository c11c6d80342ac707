// The 3x3 neighbourhood of a cell and the boundary rules, written once for every kernel: the CPU
// engine's row kernel (its rows, fused steps, batches and MPI blocks), the CUDA one-step and fused
// kernels and the CUDA kernel of a block of a grid split over MPI ranks gather through these
// functions (host- and device-callable, see cell_update.hpp); the tests hold every path bitwise
// equal to one another.
#pragma once

#include "model/cell_update.hpp"
#include "model/model.hpp"

namespace grayscott {

// What a neighbour beyond a non-periodic edge of the grid contributes: with zero flux, the cell
// itself (so the difference across the edge vanishes); with fixed values, the constant outside
// state (Coefficients::outside_u, outside_v). A periodic grid has no edge: its neighbours wrap
// (wrap_near).
template <Boundary B, class Real>
GRAYSCOTT_HD Real beyond_edge(Real centre, Real fixed_value) {
  static_assert(B != Boundary::Periodic, "a periodic grid has no edge: wrap the index instead");
  if constexpr (B == Boundary::ZeroFlux) {
    return centre;
  } else {
    return fixed_value;
  }
}

// Index i of a periodic axis of n cells, at most n outside [0, n), wrapped into it.
template <class Int>
GRAYSCOTT_HD Int wrap_near(Int i, Int n) {
  return i < 0 ? i + n : (i >= n ? i - n : i);
}

// Fills nu, nv with the 3x3 neighbourhood of a cell whose values are cu, cv (row-major, the cell
// itself at 4). `inside(dr, dc)` says whether the neighbour at row offset dr and column offset dc
// is in memory (on the grid, or a ghost cell that holds it); `read(dr, dc, u, v)` reads it. A
// neighbour that is not gets beyond_edge<B> (with the Fixed boundary, c's outside values); on a
// periodic grid every neighbour is read (the caller's `read` wraps).
template <Boundary B, class Real, class Inside, class Read>
GRAYSCOTT_HD void gather_neighbourhood(Real cu, Real cv, const Inside& inside, const Read& read,
                                       const Coefficients<Real>& c, Real (&nu)[9], Real (&nv)[9]) {
  GRAYSCOTT_UNROLL
  for (int k = 0; k < 9; ++k) {
    const int dr = k / 3 - 1, dc = k % 3 - 1;
    if (k == 4) {
      nu[k] = cu;
      nv[k] = cv;
    } else if (B == Boundary::Periodic || inside(dr, dc)) {
      read(dr, dc, nu[k], nv[k]);
    } else if constexpr (B != Boundary::Periodic) {
      nu[k] = beyond_edge<B>(cu, c.outside_u);
      nv[k] = beyond_edge<B>(cv, c.outside_v);
    }
  }
}

// A volume's neighbours, in step_volume_cell()'s order: k = 0..5 the faces (-z, +z, -row, +row,
// -col, +col), k = 6..17 the edges, four for each pair of axes (depth-rows, depth-cols,
// rows-cols), the signs (-,-), (-,+), (+,-), (+,+). Offsets along depth, rows and columns.
struct VolumeOffset {
  int dz, dr, dc;
};
GRAYSCOTT_HD constexpr VolumeOffset volume_offset(int k) {
  if (k < 6) {
    const int sign = (k % 2) ? 1 : -1;
    return {k / 2 == 0 ? sign : 0, k / 2 == 1 ? sign : 0, k / 2 == 2 ? sign : 0};
  }
  const int e = k - 6, pair = e / 4;
  const int first = (e / 2) % 2 ? 1 : -1, second = e % 2 ? 1 : -1;
  if (pair == 0) return {first, second, 0};
  if (pair == 1) return {first, 0, second};
  return {0, first, second};
}

// The neighbours a volume's stencil reads: the six faces, or all eighteen.
template <StencilKind K>
inline constexpr int volume_neighbours = K == StencilKind::SevenPoint ? 6 : 18;

// Fills nu, nv with the neighbours of a cell of a volume whose values are cu, cv, as
// gather_neighbourhood() does for a plane: `inside(dz, dr, dc)` says whether the neighbour is in
// memory, `read(dz, dr, dc, u, v)` reads it; one that is not gets beyond_edge<B>. Only the
// stencil's own neighbours are filled (the faces for seven-point).
template <StencilKind K, Boundary B, class Real, class Inside, class Read>
GRAYSCOTT_HD void gather_volume_neighbours(Real cu, Real cv, const Inside& inside, const Read& read,
                                           const Coefficients<Real>& c, Real (&nu)[18],
                                           Real (&nv)[18]) {
  GRAYSCOTT_UNROLL
  for (int k = 0; k < volume_neighbours<K>; ++k) {
    const VolumeOffset o = volume_offset(k);
    if (B == Boundary::Periodic || inside(o.dz, o.dr, o.dc)) {
      read(o.dz, o.dr, o.dc, nu[k], nv[k]);
    } else if constexpr (B != Boundary::Periodic) {
      nu[k] = beyond_edge<B>(cu, c.outside_u);
      nv[k] = beyond_edge<B>(cv, c.outside_v);
    }
  }
}

}  // namespace grayscott
