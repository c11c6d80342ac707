// The kernels of a block of a distributed grid on one device (cuda_subdomain.cu): a step over a
// region of the block, and the gathering and scattering of halo messages.
//
// A block is stored padded: its owned cells with a ghost frame `depth` cells wide, row-major with
// `stride` = cols + 2 depth; a volume's block is its planes, each so padded, with `depth` ghost
// planes before and after (`plane_stride` values apart). A neighbour beyond the grid's
// non-periodic edge follows the serial kernels' rules (ZeroFlux: the centre stands in; Fixed: the
// outside values); every other neighbour, ghost or owned, is read from memory. step_cell<K> and
// step_volume_cell<K> come from model/cell_update.hpp, so a cell rounds exactly as in the CPU
// engine (its multiply-adds written, nothing contracted: --fmad=false).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>

#include "engine/cuda/kernels.cuh"
#include "engine/padded_volume_cell.hpp"
#include "engine/subdomain.hpp"
#include "model/cell_update.hpp"
#include "model/neighbourhood.hpp"

namespace grayscott::cuda::detail {

// A rectangle of local cells, half-open (local coordinates: owned cells from 0, ghosts negative or
// past the end); in a volume's block, that rectangle in planes [plane_begin, plane_end), and in a
// plane's the one plane [0, 1).
struct CellRange {
  int row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  int plane_begin = 0, plane_end = 1;
};

// Where a block's cells lie in its padded buffer: (z, r, c) at
// (z + plane_depth) plane_stride + (r + depth) stride + (c + depth). A plane's block has
// plane_stride 0, so its one plane is 0 whatever z says.
struct PaddedLayout {
  long long stride = 0, plane_stride = 0;
  int depth = 0, plane_depth = 0;
  __host__ __device__ long long index(int z, int r, int c) const {
    return static_cast<long long>(z + plane_depth) * plane_stride +
           static_cast<long long>(r + depth) * stride + (c + depth);
  }
};

inline PaddedLayout padded_layout(const LocalLayout& layout) {
  return {static_cast<long long>(layout.stride()),
          layout.volume() ? static_cast<long long>(layout.plane_stride()) : 0LL,
          static_cast<int>(layout.depth), layout.volume() ? static_cast<int>(layout.depth) : 0};
}

template <class Real>
struct BlockArgs {
  const Real* __restrict__ u_in;  // the padded block: element 0 is local cell (-depth, -depth)
  const Real* __restrict__ v_in;
  Real* __restrict__ u_out;
  Real* __restrict__ v_out;
  Coefficients<Real> coefficients;
  StencilWeights<Real> weights;
  long long stride;
  int depth, rows, cols;                              // owned rows and cols
  bool edge_top, edge_bottom, edge_left, edge_right;  // the block meets a non-periodic edge there
  CellRange region;                                   // the cells this launch computes
};

inline constexpr int region_block_x = 32, region_block_y = 8;

inline CellRange cell_range(const Region& r) {
  return {static_cast<int>(r.row_begin),   static_cast<int>(r.row_end),
          static_cast<int>(r.col_begin),   static_cast<int>(r.col_end),
          static_cast<int>(r.plane_begin), static_cast<int>(r.plane_end)};
}

// The arguments of a step of `region` from (u_in, v_in) to (u_out, v_out), padded as `layout`.
template <class Real>
BlockArgs<Real> block_args(const Real* u_in, const Real* v_in, Real* u_out, Real* v_out,
                           const Coefficients<Real>& coefficients,
                           const StencilWeights<Real>& weights, const LocalLayout& layout,
                           GlobalEdges edges, const Region& region) {
  return {u_in,
          v_in,
          u_out,
          v_out,
          coefficients,
          weights,
          static_cast<long long>(layout.stride()),
          static_cast<int>(layout.depth),
          static_cast<int>(layout.rows),
          static_cast<int>(layout.cols),
          edges.top,
          edges.bottom,
          edges.left,
          edges.right,
          cell_range(region)};
}

__device__ __forceinline__ long long padded_index(long long stride, int depth, int r, int c) {
  return static_cast<long long>(r + depth) * stride + (c + depth);
}

// One step of cell (r, c) of the block.
template <StencilKind K, Boundary B, class Real>
__device__ __forceinline__ void step_cell(const BlockArgs<Real>& a, int r, int c) {
  const long long i = padded_index(a.stride, a.depth, r, c);
  const Real cu = a.u_in[i], cv = a.v_in[i];
  Real nu[9], nv[9];
  // Every neighbour is in memory (the block's cells or its ghost frame, which holds a periodic
  // grid's wrapped cells) except beyond an edge of the whole grid.
  gather_neighbourhood<B>(
      cu, cv,
      [&](int dr, int dc) {
        return !((dr < 0 && r == 0 && a.edge_top) || (dr > 0 && r == a.rows - 1 && a.edge_bottom) ||
                 (dc < 0 && c == 0 && a.edge_left) || (dc > 0 && c == a.cols - 1 && a.edge_right));
      },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) {
        const long long n = i + static_cast<long long>(dr) * a.stride + dc;
        nu_k = a.u_in[n];
        nv_k = a.v_in[n];
      },
      a.coefficients, nu, nv);
  Real un, vn;
  grayscott::step_cell<K>(nu, nv, a.weights.w, a.coefficients, un, vn);
  a.u_out[i] = un;
  a.v_out[i] = vn;
}

// One step of the cells in a.region, one thread per cell; grid (blocks(width), blocks(height)).
template <StencilKind K, Boundary B, class Real>
__global__ void __launch_bounds__(region_block_x* region_block_y)
    region_step_kernel(BlockArgs<Real> a) {
  const int c = a.region.col_begin + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int r = a.region.row_begin + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (r >= a.region.row_end || c >= a.region.col_end) return;
  step_cell<K, B>(a, r, c);
}

// The cells of a.region outside `inner` (which lies within it): the top and bottom strips, full
// width, then the left and right strips beside `inner`. Cell j of the frame, in that order.
struct Frame {
  CellRange outer, inner;
  __host__ __device__ long long top() const {
    return static_cast<long long>(inner.row_begin - outer.row_begin) *
           (outer.col_end - outer.col_begin);
  }
  __host__ __device__ long long bottom() const {
    return static_cast<long long>(outer.row_end - inner.row_end) *
           (outer.col_end - outer.col_begin);
  }
  __host__ __device__ long long side(bool left) const {
    return static_cast<long long>(inner.row_end - inner.row_begin) *
           (left ? inner.col_begin - outer.col_begin : outer.col_end - inner.col_end);
  }
  __host__ __device__ long long cells() const {
    return top() + bottom() + side(true) + side(false);
  }
  __host__ __device__ void cell(long long j, int& r, int& c) const {
    const int width = outer.col_end - outer.col_begin;
    if (j < top()) {
      r = outer.row_begin + static_cast<int>(j / width),
      c = outer.col_begin + static_cast<int>(j % width);
      return;
    }
    j -= top();
    if (j < bottom()) {
      r = inner.row_end + static_cast<int>(j / width),
      c = outer.col_begin + static_cast<int>(j % width);
      return;
    }
    j -= bottom();
    const bool left = j < side(true);
    if (!left) j -= side(true);
    const int side_width = left ? inner.col_begin - outer.col_begin : outer.col_end - inner.col_end;
    r = inner.row_begin + static_cast<int>(j / side_width);
    c = (left ? outer.col_begin : inner.col_end) + static_cast<int>(j % side_width);
  }
};

inline constexpr int frame_block = 256;

// One step of every cell of the frame, one thread per cell; grid blocks(frame.cells()).
template <StencilKind K, Boundary B, class Real>
__global__ void __launch_bounds__(frame_block) frame_step_kernel(BlockArgs<Real> a, Frame frame) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= frame.cells()) return;
  int r = 0, c = 0;
  frame.cell(j, r, c);
  step_cell<K, B>(a, r, c);
}

// The halo messages of one exchange (at most one per neighbour: a plane's block has 8, a volume's
// 18, its faces and edges): message m holds range[m]'s cells of u, then of v, row-major (a volume's
// plane after plane), from offset[m] of the packed area.
inline constexpr int max_messages = 18;
struct MessageTable {
  int count = 0;
  CellRange range[max_messages];
  long long offset[max_messages];
};

inline constexpr int message_block = 256;

// The table of a halo plan's send or receive regions, packed as message_offset() says.
inline MessageTable message_table(std::span<const Region> regions) {
  if (regions.size() > max_messages) {
    throw std::logic_error("a block has at most " + std::to_string(max_messages) +
                           " halo messages");
  }
  MessageTable table;
  table.count = static_cast<int>(regions.size());
  for (std::size_t m = 0; m < regions.size(); ++m) {
    table.range[m] = cell_range(regions[m]);
    table.offset[m] = static_cast<long long>(message_offset(regions, m));
  }
  return table;
}

__host__ __device__ inline long long range_cells(const CellRange& r) {
  return static_cast<long long>(r.plane_end - r.plane_begin) * (r.row_end - r.row_begin) *
         (r.col_end - r.col_begin);
}

// Gathers every message of the table from the block into `packed` (Pack) or scatters `packed`
// into the block (unpack). Grid (x, table.count): blockIdx.y is the message, x blocks stride over
// its 2 * cells values.
template <bool Pack, class Real>
__global__ void __launch_bounds__(message_block)
    message_kernel(Real* __restrict__ u, Real* __restrict__ v, PaddedLayout padded,
                   MessageTable table, Real* __restrict__ packed) {
  const CellRange range = table.range[blockIdx.y];
  const int width = range.col_end - range.col_begin;
  const long long plane_cells = static_cast<long long>(width) * (range.row_end - range.row_begin);
  const long long cells = range_cells(range);
  Real* __restrict__ message = packed + table.offset[blockIdx.y];
  for (long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; j < 2 * cells;
       j += static_cast<long long>(gridDim.x) * blockDim.x) {
    const bool is_v = j >= cells;
    const long long cell = is_v ? j - cells : j;
    const long long in_plane = cell % plane_cells;
    const int z = range.plane_begin + static_cast<int>(cell / plane_cells);
    const int r = range.row_begin + static_cast<int>(in_plane / width);
    const int c = range.col_begin + static_cast<int>(in_plane % width);
    Real* __restrict__ field = is_v ? v : u;
    const long long i = padded.index(z, r, c);
    if constexpr (Pack)
      message[j] = field[i];
    else
      field[i] = message[j];
  }
}

// Blocks along x for the message kernel: enough for the largest message, at most 1024 (each
// thread then loops).
inline unsigned message_blocks(const MessageTable& table) {
  long long largest = 1;
  for (int m = 0; m < table.count; ++m)
    largest = std::max(largest, 2 * range_cells(table.range[m]));
  return std::min(blocks(largest, message_block), 1024u);
}

// ---------------------------------------------------------------------------------------------
// A volume's block. Its halo is one cell deep and exchanged every step: the regions stepped are
// the owned planes, rows and columns or parts of them, never ghosts.

template <class Real>
struct VolumeBlockArgs {
  const Real* __restrict__ u_in;  // the padded block: element 0 is local cell (-1, -1, -1)
  const Real* __restrict__ v_in;
  Real* __restrict__ u_out;
  Real* __restrict__ v_out;
  Coefficients<Real> coefficients;
  PaddedVolumeBlock block;  // its strides, owned extents and the volume's faces it meets
  CellRange region;         // the cells this launch computes
};

template <class Real>
VolumeBlockArgs<Real> volume_block_args(const Real* u_in, const Real* v_in, Real* u_out,
                                        Real* v_out, const Coefficients<Real>& coefficients,
                                        const LocalLayout& layout, GlobalEdges edges,
                                        const Region& region) {
  return {u_in,
          v_in,
          u_out,
          v_out,
          coefficients,
          padded_volume_block(layout, edges),
          cell_range(region)};
}

// The launch grid's z extent for a region of `planes` planes: one plane per z block up to the
// launch limit, beyond which each z block loops.
inline unsigned volume_region_grid_z(long long planes) {
  return static_cast<unsigned>(std::clamp(planes, 1LL, 65535LL));
}

// One step of the cells in a.region, one thread per (row, column) for every gridDim.z-th plane;
// grid (blocks(width), blocks(height), volume_region_grid_z(planes)).
template <StencilKind K, Boundary B, class Real>
__global__ void __launch_bounds__(region_block_x* region_block_y)
    volume_region_step_kernel(VolumeBlockArgs<Real> a) {
  const int c = a.region.col_begin + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int r = a.region.row_begin + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (r >= a.region.row_end || c >= a.region.col_end) return;
  for (int z = a.region.plane_begin + static_cast<int>(blockIdx.z); z < a.region.plane_end;
       z += static_cast<int>(gridDim.z)) {
    step_padded_volume_cell<K, B>(a.u_in, a.v_in, a.u_out, a.v_out, z, r, c, a.block,
                                  a.coefficients);
  }
}

}  // namespace grayscott::cuda::detail
