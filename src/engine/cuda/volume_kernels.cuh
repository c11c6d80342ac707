// The CUDA backend's kernels for a volume (depth planes of rows x cols cells, plane after plane,
// each row-major). Both compute a cell exactly as every other backend does: the neighbours that
// gather_volume_neighbours collects under the boundary rules of model/neighbourhood.hpp, then
// step_volume_cell<K> from model/cell_update.hpp. With its multiply-adds written and nothing
// contracted (--fmad=false) they round alike, to the bit.
//
// - volume_step_kernel: one step, one thread per (row, column), looping over depth; neighbours read
//   from global memory (L1/L2). Simple, and the check of the other.
// - volume_stream_kernel: one step, 2.5D streaming. A block of volume_block_y x volume_block_x
//   threads owns a tile of as many cells of each plane and marches along depth through a slab of
//   planes, holding planes z - 1, z and z + 1 of the tile and its one-cell rim in shared memory
//   (three slots in turn); after each plane it loads plane z + 2 into the slot of z - 1. Every
//   value is read from global memory once per step, plus the rim (about 20%) and the two planes
//   beyond each slab. The rim serves the nineteen-point stencil's edge neighbours in planes z - 1
//   and z + 1 as well as the plane's own.
//
// Both are specialised at compile time for the stencil and the boundary; blockIdx.z is the batch
// member, each with its own coefficients. No launch fuses several steps of a volume.
#pragma once

#include <cstddef>

#include "engine/cuda/kernels.cuh"  // wrap_index
#include "engine/cuda/launch_plan.hpp"
#include "model/cell_update.hpp"
#include "model/neighbourhood.hpp"

namespace grayscott::cuda::detail {

template <class Real>
struct VolumeArgs {
  const Real* __restrict__ u_in;  // members * depth * rows * cols, member-major
  const Real* __restrict__ v_in;
  Real* __restrict__ u_out;
  Real* __restrict__ v_out;
  const Coefficients<Real>* __restrict__ coefficients;  // one per member
  int depth, rows, cols;
  const int* __restrict__ frozen = nullptr;  // as StepArgs::frozen
};

// Calls f.template operator()<K, B>() with a volume's stencil (seven-point or nineteen-point) and
// the boundary rule as compile-time constants.
template <class F>
decltype(auto) dispatch_volume_stencil_and_boundary(StencilKind kind, Boundary boundary, F&& f) {
  return dispatch_boundary(boundary, [&]<Boundary B>() -> decltype(auto) {
    if (kind == StencilKind::NineteenPoint) {
      return f.template operator()<StencilKind::NineteenPoint, B>();
    }
    return f.template operator()<StencilKind::SevenPoint, B>();
  });
}

template <StencilKind K, Boundary B, class Real>
__global__ void __launch_bounds__(step_block_x* step_block_y)
    volume_step_kernel(VolumeArgs<Real> a) {
  if (member_frozen(a.frozen)) return;
  // int indices as the plane's step_kernel; cuda::max_depth keeps z + 1 below INT_MAX.
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int r = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (r >= a.rows || c >= a.cols) return;
  const int depth = a.depth, rows = a.rows, cols = a.cols;
  const std::size_t cells = static_cast<std::size_t>(depth) * rows * cols;
  const std::size_t base = blockIdx.z * cells;
  const Real* __restrict__ u = a.u_in + base;
  const Real* __restrict__ v = a.v_in + base;
  const Coefficients<Real> coefficients = a.coefficients[blockIdx.z];
  for (int z = 0; z < depth; ++z) {
    const std::size_t i = (static_cast<std::size_t>(z) * rows + r) * cols + c;
    const Real cu = u[i], cv = v[i];
    Real nu[18], nv[18];
    gather_volume_neighbours<K, B>(
        cu, cv,
        [&](int dz, int dr, int dc) {
          const int zz = z + dz, rr = r + dr, cc = c + dc;
          return zz >= 0 && zz < depth && rr >= 0 && rr < rows && cc >= 0 && cc < cols;
        },
        [&](int dz, int dr, int dc, Real& nu_k, Real& nv_k) {
          int zz = z + dz, rr = r + dr, cc = c + dc;
          if constexpr (B == Boundary::Periodic) {
            zz = wrap_near(zz, depth);
            rr = wrap_near(rr, rows);
            cc = wrap_near(cc, cols);
          }
          const std::size_t n = (static_cast<std::size_t>(zz) * rows + rr) * cols + cc;
          nu_k = u[n];
          nv_k = v[n];
        },
        coefficients, nu, nv);
    Real un, vn;
    step_volume_cell<K>(cu, cv, nu, nv, coefficients, un, vn);
    a.u_out[base + i] = un;
    a.v_out[base + i] = vn;
  }
}

// Shared memory of the streaming kernel: three planes of a tile and its rim, per field.
template <class Real>
using VolumeSlots = Real[3][volume_tile_h][volume_tile_w];

// Loads plane z (-1..depth) of the tile whose rim starts at grid row row0, column col0 into slot
// `slot`: periodic positions wrap; positions outside a non-periodic grid get the Fixed values,
// only so that no shared memory is left undefined (the cell updates test positions and never read
// them).
template <Boundary B, class Real>
__device__ __forceinline__ void load_volume_plane(VolumeSlots<Real>& su, VolumeSlots<Real>& sv,
                                                  int slot, int z, int row0, int col0,
                                                  const Real* __restrict__ u,
                                                  const Real* __restrict__ v, int depth, int rows,
                                                  int cols, const Coefficients<Real>& c) {
  bool plane_inside = true;
  if constexpr (B == Boundary::Periodic) {
    z = wrap_near(z, depth);
  } else {
    plane_inside = z >= 0 && z < depth;
  }
  const std::size_t plane = static_cast<std::size_t>(z) * rows;
  const int thread = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  constexpr int threads = volume_block_x * volume_block_y;
  for (int k = thread; k < volume_tile_h * volume_tile_w; k += threads) {
    const int ly = k / volume_tile_w, lx = k % volume_tile_w;
    int gr = row0 + ly, gc = col0 + lx;
    bool inside = plane_inside;
    if constexpr (B == Boundary::Periodic) {
      // A tile past the last row or column may reach more than one grid beyond it (tiny grids).
      gr = wrap_index(gr, rows);
      gc = wrap_index(gc, cols);
    } else {
      inside = inside && gr >= 0 && gr < rows && gc >= 0 && gc < cols;
    }
    const std::size_t g = (plane + gr) * cols + gc;
    su[slot][ly][lx] = inside ? u[g] : c.outside_u;
    sv[slot][ly][lx] = inside ? v[g] : c.outside_v;
  }
}

// The update of the cell at tile position (ly, lx) (rim included) of plane z, grid row r, column
// c, from the slots of planes z - 1, z and z + 1. Checked: some neighbour may lie outside a
// non-periodic grid, so each one's position is tested; unchecked: the tile, its rim and planes
// z - 1 and z + 1 lie inside the grid, or the grid wraps.
template <StencilKind K, Boundary B, bool Checked, class Real>
__device__ __forceinline__ void volume_cell(const VolumeSlots<Real>& su,
                                            const VolumeSlots<Real>& sv, int below, int centre,
                                            int above, int ly, int lx, int z, int r, int c,
                                            int depth, int rows, int cols,
                                            const Coefficients<Real>& coefficients, Real& un,
                                            Real& vn) {
  const Real cu = su[centre][ly][lx], cv = sv[centre][ly][lx];
  Real nu[18], nv[18];
  gather_volume_neighbours<K, B>(
      cu, cv,
      [&](int dz, int dr, int dc) {
        return !Checked || (z + dz >= 0 && z + dz < depth && r + dr >= 0 && r + dr < rows &&
                            c + dc >= 0 && c + dc < cols);
      },
      [&](int dz, int dr, int dc, Real& nu_k, Real& nv_k) {
        const int slot = dz < 0 ? below : dz > 0 ? above : centre;
        nu_k = su[slot][ly + dr][lx + dc];
        nv_k = sv[slot][ly + dr][lx + dc];
      },
      coefficients, nu, nv);
  step_volume_cell<K>(cu, cv, nu, nv, coefficients, un, vn);
}

// One step of the planes [blockIdx.x / column blocks * slab, + slab) of one tile. Grid: x the
// column block and the slab (column block fastest), y the row block, z the member.
template <StencilKind K, Boundary B, class Real>
__global__ void __launch_bounds__(volume_block_x* volume_block_y)
    volume_stream_kernel(VolumeArgs<Real> a, int slab) {
  __shared__ VolumeSlots<Real> su;
  __shared__ VolumeSlots<Real> sv;
  if (member_frozen(a.frozen)) return;  // the whole block: no barrier is left waiting
  const int depth = a.depth, rows = a.rows, cols = a.cols;
  const int col_blocks = (cols + volume_block_x - 1) / volume_block_x;
  const int column_block = static_cast<int>(blockIdx.x) % col_blocks;
  const int z_begin = static_cast<int>(blockIdx.x) / col_blocks * slab;
  const int z_end = depth - z_begin < slab ? depth : z_begin + slab;
  const int row0 = static_cast<int>(blockIdx.y) * volume_block_y - 1;  // the rim's first row
  const int col0 = column_block * volume_block_x - 1;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int ly = ty + 1, lx = tx + 1, r = row0 + ly, c = col0 + lx;
  const bool mine = r < rows && c < cols;
  const std::size_t cells = static_cast<std::size_t>(depth) * rows * cols;
  const std::size_t base = blockIdx.z * cells;
  const Real* __restrict__ u = a.u_in + base;
  const Real* __restrict__ v = a.v_in + base;
  const Coefficients<Real> coefficients = a.coefficients[blockIdx.z];
  // Rows and columns of the tile and its rim inside the grid: the planes in the slab's interior
  // need no position tests.
  const bool tile_inside =
      row0 >= 0 && col0 >= 0 && row0 + volume_tile_h <= rows && col0 + volume_tile_w <= cols;

  int below = 0, centre = 1, above = 2;
  load_volume_plane<B>(su, sv, below, z_begin - 1, row0, col0, u, v, depth, rows, cols,
                       coefficients);
  load_volume_plane<B>(su, sv, centre, z_begin, row0, col0, u, v, depth, rows, cols, coefficients);
  load_volume_plane<B>(su, sv, above, z_begin + 1, row0, col0, u, v, depth, rows, cols,
                       coefficients);
  __syncthreads();
  for (int z = z_begin; z < z_end; ++z) {
    if (mine) {
      Real un, vn;
      if (B == Boundary::Periodic || (tile_inside && z >= 1 && z + 1 < depth)) {
        volume_cell<K, B, false>(su, sv, below, centre, above, ly, lx, z, r, c, depth, rows, cols,
                                 coefficients, un, vn);
      } else {
        volume_cell<K, B, true>(su, sv, below, centre, above, ly, lx, z, r, c, depth, rows, cols,
                                coefficients, un, vn);
      }
      const std::size_t i = base + (static_cast<std::size_t>(z) * rows + r) * cols + c;
      a.u_out[i] = un;
      a.v_out[i] = vn;
    }
    if (z + 1 == z_end) break;
    __syncthreads();  // every read of plane z - 1 is done before its slot takes plane z + 2
    const int freed = below;
    below = centre;
    centre = above;
    above = freed;
    load_volume_plane<B>(su, sv, above, z + 2, row0, col0, u, v, depth, rows, cols, coefficients);
    __syncthreads();
  }
}

}  // namespace grayscott::cuda::detail
