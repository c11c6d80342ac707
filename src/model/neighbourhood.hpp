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

}  // namespace grayscott
