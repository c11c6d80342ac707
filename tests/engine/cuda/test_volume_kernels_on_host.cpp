// The CUDA volume kernels' source run on the host, where no GPU is (kernel_emulation.hpp), through
// the engine's own launch plan: bitwise against a plain loop over the functions every backend
// shares (volume_test_support.hpp), and against the float64 reference within a tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "engine/cuda/kernel_emulation.hpp"
// (the kernels first: the emulation's macros must not reach other headers)
#include "engine/cpu/subnormals.hpp"
#include "engine/cpu/volume_engine.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "engine_test_support.hpp"
#include "volume_test_support.hpp"

using namespace grayscott;
using grayscott::testing::first_bitwise_difference;
using grayscott::testing::volume_problem;
using grayscott::testing::VolumeShape;
namespace kernels = grayscott::cuda::detail;

namespace {

template <class Real>
struct Batch {
  std::vector<Real> u, v;  // members * cells
};

kernel_emulation::Index3 index3(const kernels::Dims& d) { return {d.x, d.y, d.z}; }

// Which of the volume kernels, and the streaming kernel's slab (0: the plan's own choice).
struct Variant {
  bool streaming;
  int slab;
  std::string text() const {
    return streaming ? "streaming, slab " + (slab ? std::to_string(slab) : std::string("planned"))
                     : "one thread per cell";
  }
};
const std::vector<Variant> every_variant = {{false, 0}, {true, 0}, {true, 1}, {true, 2}, {true, 3}};

std::vector<Parameters> two_members(const Problem& problem) {
  return {problem.params, {0.04, 0.065, 0.15, 0.08, 0.4}};
}

// The members' start: varied volumes, one seed each.
std::vector<reference::Volume> starts_of(const Grid& grid, std::size_t members) {
  std::vector<reference::Volume> starts;
  for (std::size_t m = 0; m < members; ++m) {
    starts.push_back(varied_volume(grid.depth, grid.rows, grid.cols, static_cast<unsigned>(5 + m)));
  }
  return starts;
}

// `steps` steps through the engine's launch plan (graphs of at most max_graph_steps steps, one
// step per launch, ping-pong parity, launch grids), each launch running the kernels' source on the
// host into output buffers poisoned with NaN just before it. The members whose entry of `frozen`
// is nonzero are frozen as CudaEngine::freeze does (their state in both buffers, never poisoned,
// their flag passed to every launch).
template <StencilKind K, Boundary B, class Real>
Batch<Real> run_kernels(const Problem& problem, const std::vector<Parameters>& members,
                        const std::vector<reference::Volume>& starts, std::int64_t steps,
                        const Variant& variant, const std::vector<int>& frozen = {}) {
  const cpu::FlushSubnormals<Real> flush;  // nvcc --ftz=true
  const Grid& g = problem.grid;
  const std::size_t cells = static_cast<std::size_t>(g.cells()), count = members.size();
  std::vector<Real> u[2], v[2];
  for (int b = 0; b < 2; ++b) {
    u[b].assign(count * cells, NAN);
    v[b].assign(count * cells, NAN);
  }
  const auto is_frozen = [&](std::size_t m) { return !frozen.empty() && frozen[m] != 0; };
  for (std::size_t m = 0; m < count; ++m) {
    for (int b = 0; b < (is_frozen(m) ? 2 : 1); ++b) {
      std::copy(starts[m].u.begin(), starts[m].u.end(), u[b].begin() + m * cells);
      std::copy(starts[m].v.begin(), starts[m].v.end(), v[b].begin() + m * cells);
    }
  }
  std::vector<Coefficients<Real>> coefficients;
  for (const auto& p : members) {
    coefficients.push_back(Coefficients<Real>::from(p, problem.outside, problem.stencil.kind));
  }
  const int result = kernels::for_each_graph(steps, 1, 0, [&](std::int64_t n, int from) {
    EXPECT_LE(n, kernels::max_graph_steps);
    const int end = kernels::for_each_volume_launch(
        n, variant.streaming, from, g.depth, g.rows, g.cols, count,
        [&](const kernels::Launch& plan) {
          EXPECT_TRUE(plan.volume);
          EXPECT_EQ(plan.steps, 1);
          EXPECT_EQ(plan.streaming(), variant.streaming);
          const int p = plan.parity;
          for (std::size_t m = 0; m < count; ++m) {
            if (is_frozen(m)) continue;
            const auto first = static_cast<std::ptrdiff_t>(m * cells);
            const auto last = first + static_cast<std::ptrdiff_t>(cells);
            std::fill(u[1 - p].begin() + first, u[1 - p].begin() + last, static_cast<Real>(NAN));
            std::fill(v[1 - p].begin() + first, v[1 - p].begin() + last, static_cast<Real>(NAN));
          }
          const kernels::VolumeArgs<Real> args{u[p].data(),
                                               v[p].data(),
                                               u[1 - p].data(),
                                               v[1 - p].data(),
                                               coefficients.data(),
                                               static_cast<int>(g.depth),
                                               static_cast<int>(g.rows),
                                               static_cast<int>(g.cols),
                                               frozen.empty() ? nullptr : frozen.data()};
          if (plan.streaming()) {
            kernel_emulation::launch(index3(plan.grid), index3(plan.block), [&] {
              kernels::volume_stream_kernel<K, B, Real>(args, plan.slab);
            });
          } else {
            kernel_emulation::launch_sequential(index3(plan.grid), index3(plan.block), [&] {
              kernels::volume_step_kernel<K, B, Real>(args);
            });
          }
        },
        variant.slab);
    EXPECT_EQ(end, kernels::parity_after(n, 1, from)) << n << " steps";
  });
  return {u[result], v[result]};
}

// The plain host loop, member by member with each one's rates; a frozen member not stepped.
template <class Real>
Batch<Real> run_host_loop(const Problem& problem, const std::vector<Parameters>& members,
                          const std::vector<reference::Volume>& starts, std::int64_t steps,
                          const std::vector<int>& frozen = {}) {
  const cpu::FlushSubnormals<Real> flush;
  Batch<Real> out;
  for (std::size_t m = 0; m < members.size(); ++m) {
    auto u = grayscott::testing::to_precision<Real>(starts[m].u);
    auto v = grayscott::testing::to_precision<Real>(starts[m].v);
    if (frozen.empty() || frozen[m] == 0)
      grayscott::testing::host_volume_steps<Real>(problem, members[m], u, v, steps);
    out.u.insert(out.u.end(), u.begin(), u.end());
    out.v.insert(out.v.end(), v.begin(), v.end());
  }
  return out;
}

// The same with the stencil and boundary of `problem`.
template <class Real>
Batch<Real> run_plan(const Problem& problem, const std::vector<Parameters>& members,
                     const std::vector<reference::Volume>& starts, std::int64_t steps,
                     const Variant& variant, const std::vector<int>& frozen = {}) {
  Batch<Real> got;
  kernels::dispatch_volume_stencil_and_boundary(
      problem.stencil.kind, problem.boundary, [&]<StencilKind K, Boundary B>() {
        got = run_kernels<K, B, Real>(problem, members, starts, steps, variant, frozen);
      });
  return got;
}

// Every variant of the kernels against the host loop, bitwise, for two members with different
// rates.
template <class Real>
void expect_kernels_match_host_loop(const Problem& problem, std::int64_t steps) {
  const auto members = two_members(problem);
  const auto starts = starts_of(problem.grid, members.size());
  const Batch<Real> expected = run_host_loop<Real>(problem, members, starts, steps);
  for (const Variant& variant : every_variant) {
    SCOPED_TRACE(problem.stencil.name() + " " + std::string(to_string(problem.boundary)) + " " +
                 problem.grid.text() + " " + (sizeof(Real) == 4 ? "float" : "double") + ", " +
                 variant.text() + ", " + std::to_string(steps) + " steps");
    const Batch<Real> got = run_plan<Real>(problem, members, starts, steps, variant);
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1);
  }
}

const std::vector<Stencil>& volume_stencils() {
  static const std::vector<Stencil> stencils = {Stencil::seven_point(), Stencil::nineteen_point()};
  return stencils;
}

}  // namespace

// Depth 2 (every plane at an edge of depth, and periodic neighbours below and above the same
// plane), a single column of cells, odd sizes smaller than a tile, and a size that crosses tiles
// in rows and columns with tiles wholly inside it (the unchecked path) beside edge tiles, and one
// whose tiles end exactly at its last row and column (the rim just outside): every stencil,
// boundary and precision, both kernels, slabs of every depth.
using VolumeKernelCase = std::tuple<Stencil, Boundary>;
class CudaVolumeKernels : public ::testing::TestWithParam<VolumeKernelCase> {};

std::string volume_kernel_case_name(const ::testing::TestParamInfo<VolumeKernelCase>& info) {
  std::string name =
      std::get<0>(info.param).name() + "_" + std::string(to_string(std::get<1>(info.param)));
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

TEST_P(CudaVolumeKernels, MatchHostLoopBitwise) {
  const auto& [stencil, boundary] = GetParam();
  for (const VolumeShape shape :
       {VolumeShape{2, 1, 1}, VolumeShape{2, 3, 4}, VolumeShape{3, 5, 7}, VolumeShape{5, 37, 70},
        VolumeShape{4, 32, 96}, VolumeShape{3, 48, 64}}) {
    const std::int64_t steps = shape.rows > 10 ? 3 : 6;
    expect_kernels_match_host_loop<float>(volume_problem(shape, stencil, boundary), steps);
    expect_kernels_match_host_loop<double>(
        volume_problem(shape, stencil, boundary, Precision::Double), steps);
  }
}

INSTANTIATE_TEST_SUITE_P(
    StencilsAndBoundaries, CudaVolumeKernels,
    ::testing::Combine(::testing::Values(Stencil::seven_point(), Stencil::nineteen_point()),
                       ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed)),
    volume_kernel_case_name);

// The fixed boundary's outside values reach every face, edge and plane beyond the volume.
// The CPU volume engine against the same plain loop, bitwise: rows wide enough for its vector
// loops (the AVX-512 row loop that loads each row once, seven-point, and the cell-by-cell one)
// and their rests, one step per pass and fused, every boundary, both stencils and precisions.
template <class Real>
void expect_cpu_volume_engine_matches_host_loop(const Problem& problem, std::int64_t steps) {
  const auto members = two_members(problem);
  const auto starts = starts_of(problem.grid, members.size());
  const Batch<Real> expected = run_host_loop<Real>(problem, members, starts, steps);
  for (int fuse : {1, 0}) {
    SCOPED_TRACE(problem.stencil.name() + " " + std::string(to_string(problem.boundary)) + " " +
                 problem.grid.text() + " " + (sizeof(Real) == 4 ? "float" : "double") + ", fuse " +
                 std::to_string(fuse));
    cpu::VolumeEngine<Real> engine(problem, members, {"cpu", 2, fuse, 0});
    const std::size_t cells = static_cast<std::size_t>(problem.grid.cells());
    for (std::size_t m = 0; m < members.size(); ++m) {
      engine.load(m, grayscott::testing::to_precision<Real>(starts[m].u),
                  grayscott::testing::to_precision<Real>(starts[m].v));
    }
    engine.advance(steps);
    engine.capture({true, true});
    Batch<Real> got{std::vector<Real>(members.size() * cells),
                    std::vector<Real>(members.size() * cells)};
    for (std::size_t m = 0; m < members.size(); ++m)
      engine.read_captured(m, got.u.data() + m * cells, got.v.data() + m * cells);
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1);
  }
}

TEST(CpuVolumeEngineOnHost, MatchesThePlainLoopBitwise) {
  for (const VolumeShape& shape : {VolumeShape{3, 5, 70}, VolumeShape{4, 6, 37},
                                   VolumeShape{2, 3, 129}, VolumeShape{3, 4, 33}}) {
    for (const Stencil& stencil : {Stencil::seven_point(), Stencil::nineteen_point()}) {
      for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
        const Problem problem = volume_problem(shape, stencil, boundary);
        expect_cpu_volume_engine_matches_host_loop<float>(problem, 5);
        expect_cpu_volume_engine_matches_host_loop<double>(problem, 5);
      }
    }
  }
}

// Rows as wide as a vector or a few more, each end cell stepped in the vector loop with the
// boundary's cell beside it and a rest recomputed (seven-point): every width from a vector to
// three (16 floats or 8 doubles on AVX-512; 8 or 4 on AVX2), one narrower, every boundary (fixed
// with outside values u and v unequal), both precisions.
TEST(CpuVolumeEngineOnHost, RowsAroundAVectorWideMatchThePlainLoopBitwise) {
  for (std::int64_t cols : {3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49}) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      Problem problem = volume_problem(VolumeShape{3, 4, cols}, Stencil::seven_point(), boundary);
      problem.outside = Outside{0.25, 0.5};
      expect_cpu_volume_engine_matches_host_loop<float>(problem, 4);
      expect_cpu_volume_engine_matches_host_loop<double>(problem, 4);
    }
  }
}

// A frozen member (a sweep's that settled) is left as it is by every variant, its output never
// written (no poison reaches it, none is left in it); the member beside it steps bitwise as alone.
TEST(CudaVolumeKernelsOnHost, FrozenMembersAreLeftAsTheyAre) {
  const Problem problem = volume_problem({5, 9, 21}, Stencil::seven_point(), Boundary::Periodic);
  const auto members = two_members(problem);
  const auto starts = starts_of(problem.grid, members.size());
  const std::vector<int> frozen{1, 0};
  const Batch<float> expected = run_host_loop<float>(problem, members, starts, 3, frozen);
  for (const Variant& variant : every_variant) {
    SCOPED_TRACE(variant.text());
    const Batch<float> got = run_plan<float>(problem, members, starts, 3, variant, frozen);
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1);
  }
}

TEST(CudaVolumeKernelsOnHost, FixedBoundaryOutsideValues) {
  for (const Outside outside : {Outside{0.0, 0.0}, Outside{0.25, 0.5}}) {
    for (const Stencil& stencil : volume_stencils()) {
      for (const VolumeShape shape : {VolumeShape{2, 3, 4}, VolumeShape{4, 19, 35}}) {
        Problem problem = volume_problem(shape, stencil, Boundary::Fixed);
        problem.outside = outside;
        expect_kernels_match_host_loop<float>(problem, 4);
      }
    }
  }
}

// From a seed at one end of a long volume, where float32's subnormal numbers appear within a few
// dozen steps along it: the kernels flush them as the host loop does (with the CPU engine's flush).
TEST(CudaVolumeKernelsOnHost, FlushSubnormalsAsTheHostLoop) {
  const VolumeShape shape{3, 5, 64};
  const std::int64_t steps = 40;
  reference::Volume start{3, 5, 64, std::vector<double>(3 * 5 * 64, 1.0),
                          std::vector<double>(3 * 5 * 64, 0.0)};
  for (std::int64_t r = 1; r < 4; ++r) {
    for (std::int64_t c = 0; c < 4; ++c) {
      start.u[static_cast<std::size_t>(start.index(1, r, c))] = 0.0;
      start.v[static_cast<std::size_t>(start.index(1, r, c))] = 1.0;
    }
  }
  const std::vector<reference::Volume> starts(2, start);
  for (const Stencil& stencil : volume_stencils()) {
    SCOPED_TRACE(stencil.name());
    const Problem problem = volume_problem(shape, stencil, Boundary::ZeroFlux);
    const auto members = two_members(problem);
    // Without the flush, subnormal values are there to flush.
    std::vector<float> u = grayscott::testing::to_precision<float>(start.u);
    std::vector<float> v = grayscott::testing::to_precision<float>(start.v);
    grayscott::testing::host_volume_steps<float>(problem, members[0], u, v, steps);
    EXPECT_TRUE(std::any_of(v.begin(), v.end(),
                            [](float x) { return std::fpclassify(x) == FP_SUBNORMAL; }));
    const Batch<float> expected = run_host_loop<float>(problem, members, starts, steps);
    for (const Variant variant : {Variant{false, 0}, Variant{true, 0}, Variant{true, 2}}) {
      const Batch<float> got = run_plan<float>(problem, members, starts, steps, variant);
      EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1) << variant.text();
      EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1) << variant.text();
    }
  }
}

// Against the float64 reference (reference3d.hpp, which shares no code with the kernels), each
// member with its own rates: double within rounding, float within float32's.
TEST(CudaVolumeKernelsOnHost, AgreeWithFloat64Reference) {
  const std::int64_t steps = 25;
  for (const Stencil& stencil : volume_stencils()) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      SCOPED_TRACE(stencil.name() + " " + std::string(to_string(boundary)));
      Problem problem = volume_problem({4, 19, 35}, stencil, boundary, Precision::Double);
      problem.outside = {0.9, 0.1};
      const auto members = two_members(problem);
      const auto starts = starts_of(problem.grid, members.size());
      const Batch<double> got_double = run_plan<double>(problem, members, starts, steps, {true, 4});
      const Batch<float> got_float = run_plan<float>(problem, members, starts, steps, {true, 4});
      const std::size_t cells = static_cast<std::size_t>(problem.grid.cells());
      for (std::size_t m = 0; m < members.size(); ++m) {
        reference::Volume expected = starts[m];
        const reference::Model3 model = to_reference3(problem, members[m]);
        for (std::int64_t s = 0; s < steps; ++s) reference::step(model, expected);
        const auto member = [&](const auto& all) {
          using Real = typename std::decay_t<decltype(all)>::value_type;
          return std::vector<Real>(all.begin() + static_cast<std::ptrdiff_t>(m * cells),
                                   all.begin() + static_cast<std::ptrdiff_t>((m + 1) * cells));
        };
        EXPECT_LE(grayscott::testing::relative_l2(member(got_double.u), expected.u), 1e-13);
        EXPECT_LE(grayscott::testing::relative_l2(member(got_double.v), expected.v), 1e-13);
        EXPECT_LE(grayscott::testing::relative_l2(member(got_float.u), expected.u), 1e-5);
        EXPECT_LE(grayscott::testing::relative_l2(member(got_float.v), expected.v), 1e-5);
      }
    }
  }
}

// The volume's launch plan: one step per launch, parities alternating, the streaming kernel's
// slabs covering the depth exactly (a last one shorter where it does not divide), its grid
// covering every tile, and slabs cut only while the tiles make few blocks.
TEST(CudaVolumeKernelsOnHost, LaunchPlanCoversEveryPlaneAndCell) {
  for (const VolumeShape shape : {VolumeShape{2, 3, 4}, VolumeShape{64, 64, 64},
                                  VolumeShape{65, 37, 70}, VolumeShape{512, 512, 512}}) {
    for (std::size_t members : {std::size_t{1}, std::size_t{3}}) {
      SCOPED_TRACE(shape.text() + ", " + std::to_string(members) + " members");
      const auto launch =
          kernels::plan_volume_launch(true, 1, shape.depth, shape.rows, shape.cols, members);
      ASSERT_GE(launch.slab, 1);
      EXPECT_GE(launch.slab, std::min<std::int64_t>(shape.depth, kernels::volume_min_slab));
      const auto col_blocks = kernels::blocks(shape.cols, kernels::volume_block_x);
      const auto slabs = kernels::blocks(shape.depth, launch.slab);
      EXPECT_EQ(launch.grid.x, col_blocks * slabs);
      EXPECT_LT(static_cast<std::int64_t>(slabs - 1) * launch.slab, shape.depth);
      EXPECT_GE(static_cast<std::int64_t>(slabs) * launch.slab, shape.depth);
      EXPECT_EQ(launch.grid.y, kernels::blocks(shape.rows, kernels::volume_block_y));
      EXPECT_EQ(launch.grid.z, members);
      EXPECT_EQ(launch.parity, 1);
      const long long tiles = static_cast<long long>(col_blocks) * launch.grid.y * members;
      if (slabs > 1) {
        EXPECT_LT(tiles * (slabs - 1), kernels::volume_target_blocks);
      }
      const auto cells =
          kernels::plan_volume_launch(false, 0, shape.depth, shape.rows, shape.cols, members);
      EXPECT_FALSE(cells.streaming());
      EXPECT_EQ(cells.grid.x, kernels::blocks(shape.cols, kernels::step_block_x));
      EXPECT_EQ(cells.grid.y, kernels::blocks(shape.rows, kernels::step_block_y));
    }
  }
  // A small volume is cut into slabs of volume_min_slab planes; a large one keeps whole columns.
  EXPECT_EQ(kernels::plan_volume_launch(true, 0, 64, 64, 64, 1).slab, kernels::volume_min_slab);
  EXPECT_EQ(kernels::plan_volume_launch(true, 0, 512, 2048, 2048, 1).slab, 512);
  int parity = 0, launches = 0;
  const int result =
      kernels::for_each_volume_launch(7, true, 0, 4, 5, 6, 1, [&](const kernels::Launch& plan) {
        EXPECT_EQ(plan.parity, parity);
        EXPECT_EQ(plan.steps, 1);
        parity = 1 - parity;
        ++launches;
      });
  EXPECT_EQ(launches, 7);
  EXPECT_EQ(result, 1);
}

// The launch limits a volume meets, known without a GPU: the plane's (rows, columns, members)
// and an int plane index.
TEST(CudaVolumeKernelsOnHost, LaunchLimitsForVolumes) {
  EXPECT_EQ(cuda::refuses({64, 64, 64}, 1), "");
  EXPECT_EQ(cuda::refuses({2, 1, 2}, 65535), "");
  EXPECT_EQ(cuda::refuses({8, 8, cuda::max_depth}, 1), "");
  EXPECT_EQ(cuda::refuses({8, 8, cuda::max_depth + 1}, 1),
            "the CUDA backend takes at most " + std::to_string(cuda::max_depth) + " planes");
  EXPECT_EQ(cuda::refuses({65535 * 8 + 1, 8, 4}, 1), "the CUDA backend takes at most 524280 rows");
  EXPECT_EQ(cuda::refuses({8, cuda::max_cols + 1, 4}, 1),
            "the CUDA backend takes at most " + std::to_string(cuda::max_cols) + " columns");
  EXPECT_EQ(cuda::refuses({8, 8, 4}, 65536),
            "the CUDA backend runs at most 65535 members at once, not 65536");
}
