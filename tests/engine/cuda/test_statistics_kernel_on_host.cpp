// The CUDA statistics kernel's source run on the host (kernel_emulation.hpp), its blocks' sums
// added as the engine adds them: against the host's statistics (analysis/measure.cpp) of the same
// values. Extremes, counts and the previous v it leaves behind exactly; the sums, added in
// another order, to rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/cuda/kernel_emulation.hpp"
// (the kernels first: the emulation's macros must not reach other headers)
#include "analysis/measure.hpp"

using namespace grayscott;
namespace kernels = grayscott::cuda::detail;

namespace {

template <class Real>
void expect_device_statistics_match_host(std::size_t cells, std::size_t members, int bins,
                                         bool with_change) {
  SCOPED_TRACE(std::to_string(members) + " members of " + std::to_string(cells) + " cells, " +
               std::to_string(bins) + " bins, " + (sizeof(Real) == 4 ? "float" : "double") +
               (with_change ? ", with the change" : ""));
  std::mt19937 random(static_cast<unsigned>(cells + bins));
  std::uniform_real_distribution<double> spread(-0.2, 1.3);
  const std::size_t values = cells * members;
  std::vector<Real> u(values), v(values), before(values);
  for (std::size_t i = 0; i < values; ++i) {
    u[i] = static_cast<Real>(1.0 - 0.3 * spread(random));
    v[i] = static_cast<Real>(spread(random));
    before[i] = static_cast<Real>(static_cast<double>(v[i]) + 0.01 * (spread(random) - 0.5));
  }
  v[3] = static_cast<Real>(0.25);  // on an edge for 4, 8, 20 ... bins over 0, 1
  const analysis::HistogramSpec spec{bins, 0.0, 1.0};
  std::vector<Real> device_before = before;
  const int blocks = kernels::statistics_blocks(cells);
  std::vector<double> partials(members * static_cast<std::size_t>(blocks) *
                                   kernels::statistics_values,
                               NAN);
  std::vector<unsigned long long> histogram(members * static_cast<std::size_t>(bins), 0);
  const kernels::StatisticsArgs<Real> args{u.data(),
                                           v.data(),
                                           with_change ? device_before.data() : nullptr,
                                           partials.data(),
                                           histogram.data(),
                                           cells,
                                           bins,
                                           spec.low,
                                           spec.high,
                                           analysis::u_shift,
                                           analysis::v_shift};
  kernel_emulation::launch({static_cast<unsigned>(blocks), static_cast<unsigned>(members), 1},
                           {kernels::statistics_block, 1, 1},
                           [&] { kernels::statistics_kernel<Real>(args); });
  for (std::size_t m = 0; m < members; ++m) {
    SCOPED_TRACE("member " + std::to_string(m));
    const analysis::ImageSums device = kernels::combine_partials(
        partials.data() + m * static_cast<std::size_t>(blocks) * kernels::statistics_values,
        blocks, histogram.data() + m * static_cast<std::size_t>(bins), bins, cells, with_change);
    std::vector<Real> host_before(before.begin() + static_cast<std::ptrdiff_t>(m * cells),
                                  before.begin() + static_cast<std::ptrdiff_t>((m + 1) * cells));
    const analysis::ImageSums host = analysis::member_sums<Real>(
        spec, u.data() + m * cells, v.data() + m * cells,
        with_change ? host_before.data() : nullptr, cells);
    EXPECT_EQ(device.cells, host.cells);
    EXPECT_EQ(device.has_change, host.has_change);
    EXPECT_EQ(device.histogram, host.histogram);
    EXPECT_EQ(device.u.min, host.u.min);
    EXPECT_EQ(device.u.max, host.u.max);
    EXPECT_EQ(device.v.min, host.v.min);
    EXPECT_EQ(device.v.max, host.v.max);
    const auto near = [](double a, double b) { return std::abs(a - b) <= 1e-12 * (1 + std::abs(b)); };
    EXPECT_PRED2(near, device.u.sum, host.u.sum);
    EXPECT_PRED2(near, device.u.sum_squares, host.u.sum_squares);
    EXPECT_PRED2(near, device.v.sum, host.v.sum);
    EXPECT_PRED2(near, device.v.sum_squares, host.v.sum_squares);
    if (with_change) {
      EXPECT_EQ(device.change_max, host.change_max);
      EXPECT_PRED2(near, device.change_sum_squares, host.change_sum_squares);
      // The previous v the next image is measured against: this one's.
      EXPECT_TRUE(std::equal(v.begin() + static_cast<std::ptrdiff_t>(m * cells),
                             v.begin() + static_cast<std::ptrdiff_t>((m + 1) * cells),
                             device_before.begin() + static_cast<std::ptrdiff_t>(m * cells)));
    }
  }
}

}  // namespace

// One block and many, cells that do not fill the last block's threads, bins counted in shared
// memory and straight into the histogram, both precisions, with and without a previous image.
TEST(CudaStatisticsKernelOnHost, MatchesTheHostsStatistics) {
  expect_device_statistics_match_host<float>(1, 1, 4, true);
  expect_device_statistics_match_host<float>(3001, 2, 50, true);
  expect_device_statistics_match_host<double>(3001, 2, 50, false);
  expect_device_statistics_match_host<float>(70'001, 3, 20, true);
  expect_device_statistics_match_host<double>(40'000, 1, 5000, true);
}

TEST(CudaStatisticsKernelOnHost, BlocksPerMember) {
  EXPECT_EQ(kernels::statistics_blocks(1), 1);
  EXPECT_EQ(kernels::statistics_blocks(2048), 1);
  EXPECT_EQ(kernels::statistics_blocks(2049), 2);
  EXPECT_EQ(kernels::statistics_blocks(1920 * 1080), 1013);
  EXPECT_EQ(kernels::statistics_blocks(4096 * 4096), kernels::statistics_max_blocks);
}
