// One cell of a volume's block stored padded (engine/subdomain.hpp's LocalLayout: the block's
// planes of rows with a ghost frame around them), stepped from its neighbours' places in the
// buffer. Written once for the host and a device: the CPU's block steps its rim's one-cell rows
// with it (cpu/cpu_volume_block.cpp), the CUDA block every cell (cuda/subdomain_kernels.cuh), so
// both gather a cell as gather_volume_neighbours says and step it with step_volume_cell.
#pragma once

#include <cstdint>

#include "engine/subdomain.hpp"
#include "model/cell_update.hpp"
#include "model/host_device.hpp"
#include "model/neighbourhood.hpp"

namespace grayscott {

// A volume's block as its cells are stepped: the distances between planes and between rows in
// its padded buffers, its owned planes, rows and columns, and the sides where it meets a
// non-periodic face of the volume (beyond them the boundary rule stands in; elsewhere a
// neighbour is the owned cell or the ghost cell there, which holds a periodic volume's wrapped
// cells).
struct PaddedVolumeBlock {
  std::int64_t plane_stride = 0, stride = 0;
  int planes = 0, rows = 0, cols = 0;
  bool front = false, back = false, top = false, bottom = false, left = false, right = false;
  // Where cell (z, r, c) lies: the ghost frame is one cell deep (check_block_layout), as
  // LocalLayout::offset says.
  GRAYSCOTT_HD std::int64_t index(int z, int r, int c) const {
    return (z + 1) * plane_stride + (r + 1) * stride + (c + 1);
  }
};

// A volume's block as `layout` (its planes > 0) lays it out and `edges` say where it meets the
// volume's faces.
inline PaddedVolumeBlock padded_volume_block(const LocalLayout& layout, GlobalEdges edges) {
  return {layout.plane_stride(),
          layout.stride(),
          static_cast<int>(layout.planes),
          static_cast<int>(layout.rows),
          static_cast<int>(layout.cols),
          edges.front,
          edges.back,
          edges.top,
          edges.bottom,
          edges.left,
          edges.right};
}

// Cell (z, r, c) of the block, one step from (u_in, v_in) into (u_out, v_out).
template <StencilKind K, Boundary B, class Real>
GRAYSCOTT_HD void step_padded_volume_cell(const Real* __restrict u_in, const Real* __restrict v_in,
                                          Real* __restrict u_out, Real* __restrict v_out, int z,
                                          int r, int c, const PaddedVolumeBlock& b,
                                          const Coefficients<Real>& coefficients) {
  const std::int64_t i = b.index(z, r, c);
  const Real cu = u_in[i], cv = v_in[i];
  Real nu[18], nv[18];
  gather_volume_neighbours<K, B>(
      cu, cv,
      [&](int dz, int dr, int dc) {
        return !((dz < 0 && z == 0 && b.front) || (dz > 0 && z == b.planes - 1 && b.back) ||
                 (dr < 0 && r == 0 && b.top) || (dr > 0 && r == b.rows - 1 && b.bottom) ||
                 (dc < 0 && c == 0 && b.left) || (dc > 0 && c == b.cols - 1 && b.right));
      },
      [&](int dz, int dr, int dc, Real& nu_k, Real& nv_k) {
        const std::int64_t n = i + dz * b.plane_stride + dr * b.stride + dc;
        nu_k = u_in[n];
        nv_k = v_in[n];
      },
      coefficients, nu, nv);
  step_volume_cell<K>(cu, cv, nu, nv, coefficients, u_out[i], v_out[i]);
}

}  // namespace grayscott
