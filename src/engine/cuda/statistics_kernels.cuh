// The statistics of every member's image (analysis/statistics.hpp) measured on the device, where
// the state lives, so that only a few hundred numbers per member travel to the host instead of u
// and v: the range and the sums of u and v (about the shifts of FieldSums), the change from the
// previous image's v (kept on the device, replaced by this image's in the same pass), and the
// histogram of v with the host's bins (analysis/histogram_bin.hpp).
//
// Grid: x the blocks of one member (each a contiguous range of its cells), y the member. Each
// thread sums its cells in order, each block reduces its threads' sums in a fixed tree and writes
// them to its slot of `partials`; the host adds the blocks' in order (combine_partials), so the
// sums are the same from run to run. Counts are integers: a block counts into shared memory
// where the bins fit, then adds its counts to the member's histogram.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/histogram_bin.hpp"
#include "analysis/statistics.hpp"

namespace grayscott::cuda::detail {

inline constexpr int statistics_block = 256;         // threads per block
inline constexpr int statistics_max_blocks = 1024;   // blocks per member at most
inline constexpr int statistics_shared_bins = 4096;  // bins counted in shared memory
// A block's values in `partials`: u's min, max, sum, sum of squares, v's, then the change's
// largest magnitude and sum of squares.
inline constexpr int statistics_values = 10;

template <class Real>
struct StatisticsArgs {
  const Real* __restrict__ u;  // members * cells, the state measured
  const Real* __restrict__ v;
  Real* __restrict__ before_v;  // the previous image's v, then this one's; null: no change
  double* __restrict__ partials;  // members * blocks * statistics_values
  unsigned long long* __restrict__ histogram;  // members * bins, zeroed before the launch
  std::size_t cells;  // per member
  int bins;
  double low, high;
  double u_shift, v_shift;
};

// Blocks per member: about eight cells per thread, at most statistics_max_blocks.
inline int statistics_blocks(std::size_t cells) {
  const std::size_t per_block = static_cast<std::size_t>(statistics_block) * 8;
  const std::size_t blocks = (cells + per_block - 1) / per_block;
  return static_cast<int>(blocks < 1 ? 1 : blocks > statistics_max_blocks ? statistics_max_blocks
                                                                           : blocks);
}

template <class Real>
__global__ void __launch_bounds__(statistics_block) statistics_kernel(StatisticsArgs<Real> a) {
  __shared__ double reduced[statistics_values][statistics_block];
  __shared__ unsigned int counts[statistics_shared_bins];
  const int t = static_cast<int>(threadIdx.x);
  const std::size_t member = blockIdx.y, blocks = gridDim.x;
  const std::size_t per_block = (a.cells + blocks - 1) / blocks;
  const std::size_t begin = blockIdx.x * per_block;
  const std::size_t end = begin + per_block < a.cells ? begin + per_block : a.cells;
  const bool shared_counts = a.bins <= statistics_shared_bins;
  unsigned long long* histogram = a.histogram + member * static_cast<std::size_t>(a.bins);
  if (shared_counts) {
    for (int b = t; b < a.bins; b += statistics_block) counts[b] = 0;
  }
  __syncthreads();

  double s[statistics_values] = {INFINITY, -INFINITY, 0, 0, INFINITY, -INFINITY, 0, 0, 0, 0};
  for (std::size_t i = begin + static_cast<std::size_t>(t); i < end; i += statistics_block) {
    const std::size_t g = member * a.cells + i;
    const Real v_here = a.v[g];
    const double u = static_cast<double>(a.u[g]), v = static_cast<double>(v_here);
    s[0] = fmin(s[0], u);
    s[1] = fmax(s[1], u);
    s[2] += u - a.u_shift;
    s[3] += (u - a.u_shift) * (u - a.u_shift);
    s[4] = fmin(s[4], v);
    s[5] = fmax(s[5], v);
    s[6] += v - a.v_shift;
    s[7] += (v - a.v_shift) * (v - a.v_shift);
    if (a.before_v != nullptr) {
      const double change = v - static_cast<double>(a.before_v[g]);
      s[8] = fmax(s[8], fabs(change));
      s[9] += change * change;
      a.before_v[g] = v_here;
    }
    const int bin = analysis::histogram_bin<Real>(v_here, a.bins, a.low, a.high);
    if (shared_counts) {
      atomicAdd(&counts[bin], 1u);
    } else {
      atomicAdd(&histogram[bin], 1ull);
    }
  }

  for (int k = 0; k < statistics_values; ++k) reduced[k][t] = s[k];
  __syncthreads();
  for (int half = statistics_block / 2; half > 0; half /= 2) {
    if (t < half) {
      for (int k = 0; k < statistics_values; ++k) {
        const double mine = reduced[k][t], other = reduced[k][t + half];
        const bool least = k == 0 || k == 4, most = k == 1 || k == 5 || k == 8;
        reduced[k][t] = least ? fmin(mine, other) : most ? fmax(mine, other) : mine + other;
      }
    }
    __syncthreads();
  }
  if (t == 0) {
    double* out = a.partials + (member * blocks + blockIdx.x) * statistics_values;
    for (int k = 0; k < statistics_values; ++k) out[k] = reduced[k][0];
  }
  if (shared_counts) {
    for (int b = t; b < a.bins; b += statistics_block) {
      if (counts[b] != 0) atomicAdd(&histogram[b], static_cast<unsigned long long>(counts[b]));
    }
  }
}

// Member m's sums from the blocks' partial sums and its histogram, added in block order.
inline analysis::ImageSums combine_partials(const double* partials, int blocks,
                                            const unsigned long long* histogram, int bins,
                                            std::size_t cells, bool has_change) {
  analysis::ImageSums sums;
  sums.cells = cells;
  sums.has_change = has_change;
  for (int b = 0; b < blocks; ++b) {
    const double* p = partials + static_cast<std::size_t>(b) * statistics_values;
    analysis::ImageSums block;
    block.u = {p[0], p[1], p[2], p[3]};
    block.v = {p[4], p[5], p[6], p[7]};
    block.change_max = p[8];
    block.change_sum_squares = p[9];
    sums.merge(block);
  }
  sums.histogram.assign(histogram, histogram + bins);
  return sums;
}

}  // namespace grayscott::cuda::detail
