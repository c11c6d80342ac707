// The CUDA backend's kernels. Both compute a cell exactly as the CPU engine does: the same 3x3
// neighbourhood (gather_neighbourhood and the boundary rules of model/neighbourhood.hpp), then
// step_cell<K> from model/cell_update.hpp. With its multiply-adds written and nothing contracted
// (--fmad=false) they also round exactly as the CPU engine does.
//
// - step_kernel: one step, one thread per cell, neighbours read from global memory (L1/L2).
// - fused_kernel: temporal blocking. A block loads a 64x32 region of u and v into shared memory
//   and advances it `steps` times in place, the valid part shrinking by one cell per step, then
//   writes the (64-2k)x(32-2k) centre. Every cell of the grid goes through the same values as in
//   `steps` launches of step_kernel, so the results are bitwise identical.
//
// Both are specialised at compile time for the stencil (the built-in weights fold into constants)
// and the boundary; blockIdx.z is the batch member, each with its own coefficients; a frozen
// member's blocks return at once.
#pragma once

#include <cstddef>

#include "engine/cuda/launch_plan.hpp"  // the launch shapes
#include "model/cell_update.hpp"
#include "model/neighbourhood.hpp"

namespace grayscott::cuda::detail {

// The Custom stencil's weights, passed by value (kernel parameter space).
template <class Real>
struct StencilWeights {
  Real w[9];
};

template <class Real>
struct StepArgs {
  const Real* __restrict__ u_in;  // members * cells, member-major
  const Real* __restrict__ v_in;
  Real* __restrict__ u_out;
  Real* __restrict__ v_out;
  const Coefficients<Real>* __restrict__ coefficients;  // one per member
  StencilWeights<Real> weights;
  int rows, cols;
  // One per member, or null: a member whose entry is nonzero is not stepped (Engine::freeze; both
  // ping-pong buffers hold its state, so skipping its launches leaves it as it is).
  const int* __restrict__ frozen = nullptr;
};

__device__ __forceinline__ bool member_frozen(const int* frozen) {
  return frozen != nullptr && frozen[blockIdx.z] != 0;
}

__device__ __forceinline__ int wrap_index(int i, int n) {
  // i may lie up to fused_max_steps outside [0, n) on either side, and n may be tiny.
  i %= n;
  return i < 0 ? i + n : i;
}

// i moved into [0, n).
__device__ __forceinline__ int clamp_index(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

template <StencilKind K, Boundary B, class Real>
__global__ void __launch_bounds__(step_block_x* step_block_y) step_kernel(StepArgs<Real> a) {
  if (member_frozen(a.frozen)) return;
  // int indices: cuda::max_cols (cuda_backend.hpp) keeps c + 1, and a fused region's columns
  // beyond the last, below INT_MAX; the rows are far fewer (the launch grid's y limit).
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int r = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (r >= a.rows || c >= a.cols) return;
  const std::size_t cells = static_cast<std::size_t>(a.rows) * a.cols;
  const std::size_t base = blockIdx.z * cells;
  const Real* __restrict__ u = a.u_in + base;
  const Real* __restrict__ v = a.v_in + base;
  const Coefficients<Real> coefficients = a.coefficients[blockIdx.z];
  const std::size_t i = static_cast<std::size_t>(r) * a.cols + c;
  const Real cu = u[i], cv = v[i];
  Real nu[9], nv[9];
  gather_neighbourhood<B>(
      cu, cv,
      [&](int dr, int dc) {
        const int rr = r + dr, cc = c + dc;
        return rr >= 0 && rr < a.rows && cc >= 0 && cc < a.cols;
      },
      [&](int dr, int dc, Real& nu_k, Real& nv_k) {
        int rr = r + dr, cc = c + dc;
        if constexpr (B == Boundary::Periodic) {
          rr = wrap_near(rr, a.rows);
          cc = wrap_near(cc, a.cols);
        }
        const std::size_t n = static_cast<std::size_t>(rr) * a.cols + cc;
        nu_k = u[n];
        nv_k = v[n];
      },
      coefficients, nu, nv);
  Real un, vn;
  step_cell<K>(nu, nv, a.weights.w, coefficients, un, vn);
  a.u_out[base + i] = un;
  a.v_out[base + i] = vn;
}

// Writes a thread's updated cells into the region held in shared memory, between a step's two
// barriers: cell (i, j) of the thread at region row row_of(i), column threadIdx.x + 32 j.
template <class Real, class RowOf>
__device__ __forceinline__ void store_updated(Real (&su)[fused_region_h][fused_region_w],
                                              Real (&sv)[fused_region_h][fused_region_w],
                                              const Real (&next_u)[fused_cells_y][fused_cells_x],
                                              const Real (&next_v)[fused_cells_y][fused_cells_x],
                                              const bool (&update)[fused_cells_y][fused_cells_x],
                                              const RowOf& row_of) {
  const int tx = static_cast<int>(threadIdx.x);
  GRAYSCOTT_UNROLL
  for (int i = 0; i < fused_cells_y; ++i) {
    GRAYSCOTT_UNROLL
    for (int j = 0; j < fused_cells_x; ++j) {
      if (!update[i][j]) continue;
      const int ly = row_of(i), lx = tx + j * fused_block_x;
      su[ly][lx] = next_u[i][j];
      sv[ly][lx] = next_v[i][j];
    }
  }
}

// `steps` in-place steps of the region held in shared memory. Checked: some of the region lies
// outside a non-periodic grid, so each neighbour's grid position is tested (ZeroFlux: the centre
// stands in; Fixed: the outside values). Unchecked: the region is inside the grid, or the grid
// wraps, and every neighbour is the shared-memory cell next to it.
template <StencilKind K, Boundary B, bool Checked, class Real>
__device__ __forceinline__ void fused_steps(Real (&su)[fused_region_h][fused_region_w],
                                            Real (&sv)[fused_region_h][fused_region_w], int steps,
                                            int row0, int col0, int rows, int cols,
                                            const Coefficients<Real>& coefficients, const Real* w) {
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int s = 1; s <= steps; ++s) {
    // Cells [s, size - s) still have a full, current neighbourhood after s - 1 steps.
    Real next_u[fused_cells_y][fused_cells_x], next_v[fused_cells_y][fused_cells_x];
    bool update[fused_cells_y][fused_cells_x];
    GRAYSCOTT_UNROLL
    for (int i = 0; i < fused_cells_y; ++i) {
      GRAYSCOTT_UNROLL
      for (int j = 0; j < fused_cells_x; ++j) {
        const int ly = ty + i * fused_block_y, lx = tx + j * fused_block_x;
        const int gr = row0 + ly, gc = col0 + lx;
        bool active = ly >= s && ly < fused_region_h - s && lx >= s && lx < fused_region_w - s;
        if constexpr (Checked) active = active && gr >= 0 && gr < rows && gc >= 0 && gc < cols;
        update[i][j] = active;
        if (!active) continue;
        const Real cu = su[ly][lx], cv = sv[ly][lx];
        Real nu[9], nv[9];
        gather_neighbourhood<B>(
            cu, cv,
            [&](int dr, int dc) {
              return !Checked || (gr + dr >= 0 && gr + dr < rows && gc + dc >= 0 && gc + dc < cols);
            },
            [&](int dr, int dc, Real& nu_k, Real& nv_k) {
              nu_k = su[ly + dr][lx + dc];
              nv_k = sv[ly + dr][lx + dc];
            },
            coefficients, nu, nv);
        step_cell<K>(nu, nv, w, coefficients, next_u[i][j], next_v[i][j]);
      }
    }
    __syncthreads();  // every read of step s - 1 is done before any cell is overwritten
    store_updated(su, sv, next_u, next_v, update, [&](int i) { return ty + i * fused_block_y; });
    __syncthreads();
  }
}

// fused_steps with each thread's cells taken down a column, a variant under evaluation
// (bench/cuda_kernels_bench.cu times both on a GPU; the tests hold it bitwise to the CPU engine):
// each thread steps fused_cells_y consecutive rows of fused_cells_x columns (tx, tx + 32, ...),
// keeping the rows above, at and below the cell, three columns each, in registers and reading
// only the next row from shared memory for the next cell: per field 3 (fused_cells_y + 2) reads
// of shared memory for fused_cells_y cells instead of 9 each, at the price of more registers.
// Rows and columns beyond the region's (a thread on its edge) are clamped onto it: they only
// serve cells that are not stepped.
template <StencilKind K, Boundary B, bool Checked, class Real>
__device__ __forceinline__ void fused_steps_down_columns(Real (&su)[fused_region_h][fused_region_w],
                                                         Real (&sv)[fused_region_h][fused_region_w],
                                                         int steps, int row0, int col0, int rows,
                                                         int cols,
                                                         const Coefficients<Real>& coefficients,
                                                         const Real* w) {
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int first_row = ty * fused_cells_y;  // the thread's rows: first_row + i
  for (int s = 1; s <= steps; ++s) {
    Real next_u[fused_cells_y][fused_cells_x], next_v[fused_cells_y][fused_cells_x];
    bool update[fused_cells_y][fused_cells_x];
    GRAYSCOTT_UNROLL
    for (int j = 0; j < fused_cells_x; ++j) {
      const int lx = tx + j * fused_block_x, gc = col0 + lx;
      const int left = clamp_index(lx - 1, fused_region_w);
      const int right = clamp_index(lx + 1, fused_region_w);
      // wu[0], wu[1], wu[2]: the rows above, at and below the cell; each its left, centre and
      // right columns.
      Real wu[3][3], wv[3][3];
      const auto load = [&](int slot, int ly) {
        ly = clamp_index(ly, fused_region_h);
        wu[slot][0] = su[ly][left], wu[slot][1] = su[ly][lx], wu[slot][2] = su[ly][right];
        wv[slot][0] = sv[ly][left], wv[slot][1] = sv[ly][lx], wv[slot][2] = sv[ly][right];
      };
      load(0, first_row - 1);
      load(1, first_row);
      GRAYSCOTT_UNROLL
      for (int i = 0; i < fused_cells_y; ++i) {
        load(2, first_row + i + 1);
        const int ly = first_row + i, gr = row0 + ly;
        bool active = ly >= s && ly < fused_region_h - s && lx >= s && lx < fused_region_w - s;
        if constexpr (Checked) active = active && gr >= 0 && gr < rows && gc >= 0 && gc < cols;
        update[i][j] = active;
        if (active) {
          const Real cu = wu[1][1], cv = wv[1][1];
          Real nu[9], nv[9];
          gather_neighbourhood<B>(
              cu, cv,
              [&](int dr, int dc) {
                return !Checked ||
                       (gr + dr >= 0 && gr + dr < rows && gc + dc >= 0 && gc + dc < cols);
              },
              [&](int dr, int dc, Real& nu_k, Real& nv_k) {
                nu_k = wu[1 + dr][1 + dc];
                nv_k = wv[1 + dr][1 + dc];
              },
              coefficients, nu, nv);
          step_cell<K>(nu, nv, w, coefficients, next_u[i][j], next_v[i][j]);
        }
        GRAYSCOTT_UNROLL
        for (int c = 0; c < 3; ++c) {
          wu[0][c] = wu[1][c], wu[1][c] = wu[2][c];
          wv[0][c] = wv[1][c], wv[1][c] = wv[2][c];
        }
      }
    }
    __syncthreads();  // every read of step s - 1 is done before any cell is overwritten
    store_updated(su, sv, next_u, next_v, update, [&](int i) { return first_row + i; });
    __syncthreads();
  }
}

// `steps` (1..fused_max_steps) steps in one launch. Block (bx, by) owns the output cells
// [by*out_h, +out_h) x [bx*out_w, +out_w), out = region - 2*steps.
// DownColumns: the cells of each thread taken down a column (fused_steps_down_columns), a variant
// under evaluation; the engine launches the default.
template <StencilKind K, Boundary B, class Real, bool DownColumns = false>
__global__ void __launch_bounds__(fused_block_x* fused_block_y)
    fused_kernel(StepArgs<Real> a, int steps) {
  __shared__ Real su[fused_region_h][fused_region_w];
  __shared__ Real sv[fused_region_h][fused_region_w];
  if (member_frozen(a.frozen)) return;  // the whole block: no barrier is left waiting
  const int out_w = fused_region_w - 2 * steps, out_h = fused_region_h - 2 * steps;
  const int row0 = static_cast<int>(blockIdx.y) * out_h - steps;  // grid row of region row 0
  const int col0 = static_cast<int>(blockIdx.x) * out_w - steps;
  const int rows = a.rows, cols = a.cols;
  const std::size_t cells = static_cast<std::size_t>(rows) * cols;
  const std::size_t base = blockIdx.z * cells;
  const Real* __restrict__ u = a.u_in + base;
  const Real* __restrict__ v = a.v_in + base;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const Coefficients<Real> coefficients = a.coefficients[blockIdx.z];

  GRAYSCOTT_UNROLL
  for (int i = 0; i < fused_cells_y; ++i) {
    GRAYSCOTT_UNROLL
    for (int j = 0; j < fused_cells_x; ++j) {
      const int ly = ty + i * fused_block_y, lx = tx + j * fused_block_x;
      int gr = row0 + ly, gc = col0 + lx;
      bool inside = true;
      if constexpr (B == Boundary::Periodic) {
        gr = wrap_index(gr, rows);
        gc = wrap_index(gc, cols);
      } else {
        inside = gr >= 0 && gr < rows && gc >= 0 && gc < cols;
      }
      // Cells outside a non-periodic grid are never read as neighbours (the checked path tests
      // positions); they get the Fixed values only so that no shared memory is left undefined.
      const std::size_t g = static_cast<std::size_t>(gr) * cols + gc;
      su[ly][lx] = inside ? u[g] : coefficients.outside_u;
      sv[ly][lx] = inside ? v[g] : coefficients.outside_v;
    }
  }
  __syncthreads();

  const auto step_region = [&]<bool Checked>() {
    if constexpr (DownColumns) {
      fused_steps_down_columns<K, B, Checked>(su, sv, steps, row0, col0, rows, cols, coefficients,
                                              a.weights.w);
    } else {
      fused_steps<K, B, Checked>(su, sv, steps, row0, col0, rows, cols, coefficients, a.weights.w);
    }
  };
  if constexpr (B == Boundary::Periodic) {
    step_region.template operator()<false>();
  } else if (row0 >= 0 && col0 >= 0 && row0 + fused_region_h <= rows &&
             col0 + fused_region_w <= cols) {
    step_region.template operator()<false>();
  } else {
    step_region.template operator()<true>();
  }

  GRAYSCOTT_UNROLL
  for (int i = 0; i < fused_cells_y; ++i) {
    GRAYSCOTT_UNROLL
    for (int j = 0; j < fused_cells_x; ++j) {
      const int ly = ty + i * fused_block_y, lx = tx + j * fused_block_x;
      const int gr = row0 + ly, gc = col0 + lx;
      if (ly < steps || ly >= steps + out_h || lx < steps || lx >= steps + out_w) continue;
      if (gr >= rows || gc >= cols) continue;
      const std::size_t g = base + static_cast<std::size_t>(gr) * cols + gc;
      a.u_out[g] = su[ly][lx];
      a.v_out[g] = sv[ly][lx];
    }
  }
}

}  // namespace grayscott::cuda::detail
