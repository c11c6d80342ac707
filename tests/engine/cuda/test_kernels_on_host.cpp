// The CUDA kernels' source run on the host, where no GPU is (gpu/kernel_emulation.hpp), checked
// bitwise against the CPU engine.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/cuda/kernel_emulation.hpp"
// (the kernels first: the emulation's macros must not reach other headers)
#include "engine/cpu/cpu_engine.hpp"
#include "engine/cpu/subnormals.hpp"
#include "engine_test_support.hpp"

using namespace grayscott;
using grayscott::testing::first_bitwise_difference;
namespace kernels = grayscott::cuda::detail;

namespace {

template <class Real>
struct Batch {
  std::vector<Real> u, v;  // members * cells
};

kernel_emulation::Index3 index3(const kernels::Dims& d) { return {d.x, d.y, d.z}; }

// `steps` steps through the CUDA engine's own launch plan (engine/cuda/launch_plan.hpp: graphs of
// at most max_graph_steps steps, launches of `fuse_option` steps, ping-pong parity, launch grids),
// each launch running the kernels' source on the host, from NaN-poisoned outputs. The members
// whose entry of `frozen` is nonzero are frozen as CudaEngine::freeze does: their state in both
// buffers, their flag passed to every launch. DownColumns: the fused kernel's variant that takes
// each thread's cells down a column.
template <StencilKind K, Boundary B, class Real, bool DownColumns = false>
Batch<Real> run_kernels(const Problem& problem, const std::vector<Parameters>& members,
                        const std::vector<reference::State>& starts, std::int64_t steps,
                        int fuse_option, const std::vector<int>& frozen = {}) {
  // The kernels are built with nvcc --ftz=true: float32 subnormals flushed to zero, as here.
  const cpu::FlushSubnormals<Real> flush;
  const int rows = static_cast<int>(problem.grid.rows), cols = static_cast<int>(problem.grid.cols);
  const std::size_t cells = problem.grid.cells(), count = members.size();
  std::vector<Real> u[2], v[2];
  for (int b = 0; b < 2; ++b) {
    u[b].assign(count * cells, NAN);
    v[b].assign(count * cells, NAN);
  }
  for (std::size_t m = 0; m < count; ++m) {
    for (int b = 0; b < (frozen.empty() || frozen[m] == 0 ? 1 : 2); ++b) {
      std::copy(starts[m].u.begin(), starts[m].u.end(), u[b].begin() + m * cells);
      std::copy(starts[m].v.begin(), starts[m].v.end(), v[b].begin() + m * cells);
    }
  }
  std::vector<Coefficients<Real>> coefficients;
  for (const auto& p : members)
    coefficients.push_back(Coefficients<Real>::from(p, problem.outside, problem.stencil.kind));
  kernels::StencilWeights<Real> weights{};
  for (int k = 0; k < 9; ++k) weights.w[k] = static_cast<Real>(problem.stencil.weights[k]);
  const int fuse = kernels::steps_per_launch(fuse_option);
  const int result = kernels::for_each_graph(steps, fuse, 0, [&](std::int64_t n, int from) {
    EXPECT_LE(n, kernels::max_graph_steps);
    const int end = kernels::for_each_launch(
        n, fuse, from, rows, cols, count, [&](const kernels::Launch& plan) {
          const int p = plan.parity;
          const kernels::StepArgs<Real> args{u[p].data(),
                                             v[p].data(),
                                             u[1 - p].data(),
                                             v[1 - p].data(),
                                             coefficients.data(),
                                             weights,
                                             rows,
                                             cols,
                                             frozen.empty() ? nullptr : frozen.data()};
          if (plan.fused()) {
            kernel_emulation::launch(index3(plan.grid), index3(plan.block), [&] {
              kernels::fused_kernel<K, B, Real, DownColumns>(args, plan.steps);
            });
          } else {
            kernel_emulation::launch_sequential(index3(plan.grid), index3(plan.block),
                                                [&] { kernels::step_kernel<K, B, Real>(args); });
          }
        });
    // The engine reads the graph's result from parity_after(); the launches must end there.
    EXPECT_EQ(end, kernels::parity_after(n, fuse, from)) << n << " steps";
  });
  return {u[result], v[result]};
}

// The CPU engine, one step per pass, on one thread; the members whose entry of `frozen` is nonzero
// frozen before the steps.
template <class Real>
Batch<Real> run_cpu(const Problem& problem, const std::vector<Parameters>& members,
                    const std::vector<reference::State>& starts, std::int64_t steps,
                    const std::vector<int>& frozen = {}) {
  cpu::CpuEngine<Real> engine(problem, members, {"cpu", 1, 1, 0});
  for (std::size_t m = 0; m < members.size(); ++m) {
    engine.load(m, std::vector<Real>(starts[m].u.begin(), starts[m].u.end()),
                std::vector<Real>(starts[m].v.begin(), starts[m].v.end()));
  }
  for (std::size_t m = 0; m < frozen.size(); ++m) {
    if (frozen[m] != 0) {
      EXPECT_TRUE(engine.freeze(m));
    }
  }
  engine.advance(steps);
  engine.capture({true, true});
  const std::size_t cells = problem.grid.cells();
  Batch<Real> out{std::vector<Real>(members.size() * cells),
                  std::vector<Real>(members.size() * cells)};
  for (std::size_t m = 0; m < members.size(); ++m) {
    engine.read_captured(m, out.u.data() + m * cells, out.v.data() + m * cells);
  }
  return out;
}

Problem problem_of(std::int64_t rows, std::int64_t cols, const Stencil& stencil,
                   Boundary boundary) {
  Problem problem;
  problem.grid = {rows, cols};
  problem.stencil = stencil;
  problem.boundary = boundary;
  problem.params = {0.03, 0.06, 0.2, 0.1, 0.5};
  problem.validate();
  return problem;
}

std::vector<Parameters> two_members(const Problem& problem) {
  return {problem.params, {0.04, 0.065, 0.15, 0.08, 0.4}};
}

std::vector<reference::State> two_starts(std::int64_t rows, std::int64_t cols) {
  return {grayscott::testing::varied_state(rows, cols, 5),
          grayscott::testing::varied_state(rows, cols, 6)};
}

// The kernels through the launch plan against the CPU engine, bitwise, for each fuse option.
template <class Real, bool DownColumns = false>
void expect_kernels_match_cpu(const Problem& problem, std::int64_t steps,
                              const std::vector<int>& fuse_options) {
  const auto members = two_members(problem);
  const auto starts = two_starts(problem.grid.rows, problem.grid.cols);
  const Batch<Real> expected = run_cpu<Real>(problem, members, starts, steps);
  for (int fuse : fuse_options) {
    SCOPED_TRACE(problem.stencil.name() + " " + std::string(to_string(problem.boundary)) + " " +
                 std::to_string(problem.grid.rows) + "x" + std::to_string(problem.grid.cols) + " " +
                 (sizeof(Real) == 4 ? "float" : "double") + " fuse " + std::to_string(fuse) + ", " +
                 std::to_string(steps) + " steps");
    Batch<Real> got;
    dispatch_stencil_and_boundary(
        problem.stencil.kind, problem.boundary, [&]<StencilKind K, Boundary B>() {
          got = run_kernels<K, B, Real, DownColumns>(problem, members, starts, steps, fuse);
        });
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1);
  }
}

}  // namespace

// Two members with different rates, a grid that is no multiple of a block or a fused tile (and a
// single cell), every stencil and boundary, the one-step kernel and fused depths that leave a
// remainder: the kernels must reproduce the CPU engine bit for bit.
TEST(CudaKernelsOnHost, MatchCpuEngineBitwise) {
  const std::vector<Stencil> stencils = {
      Stencil::oono_puri(), Stencil::pretty(), Stencil::five_point(),
      Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15})};
  for (const auto& stencil : stencils) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {37, 71}}) {
        expect_kernels_match_cpu<float>(problem_of(rows, cols, stencil, boundary), 7, {1, 3});
      }
    }
  }
}

// Rows as wide as a vector or a few more (16 floats or 8 doubles on AVX-512; 8 or 4 on AVX2), each
// end cell of a row stepped in the CPU engine's vector loop with the boundary's column beside it,
// a rest recomputed: every width from one vector to three, a row narrower than a vector, every
// boundary (fixed with outside values u and v unequal), the stencils with and without diagonal
// neighbours, both precisions.
TEST(CudaKernelsOnHost, RowsAroundAVectorWideMatchCpuEngineBitwise) {
  for (const auto& stencil : {Stencil::oono_puri(), Stencil::five_point()}) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      for (std::int64_t cols :
           {3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 48, 49}) {
        Problem problem = problem_of(6, cols, stencil, boundary);
        problem.outside = Outside{0.25, 0.5};
        expect_kernels_match_cpu<float>(problem, 4, {1, 3});
        expect_kernels_match_cpu<double>(problem, 4, {1, 3});
      }
    }
  }
}

// The fixed boundary's outside values reach the one-step and fused kernels (the shared memory of
// a fused region past the grid included) as they reach the CPU engine.
TEST(CudaKernelsOnHost, FixedBoundaryOutsideValuesMatchCpuEngine) {
  for (const Outside outside : {Outside{0.0, 0.0}, Outside{0.25, 0.5}}) {
    for (const auto& stencil : {Stencil::five_point(), Stencil::pretty()}) {
      for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {37, 71}}) {
        Problem problem = problem_of(rows, cols, stencil, Boundary::Fixed);
        problem.outside = outside;
        expect_kernels_match_cpu<float>(problem, 7, {1, 3});
        expect_kernels_match_cpu<double>(problem, 5, {0, 4});
      }
    }
  }
}

// From the seed, where float32's subnormal numbers appear within a hundred steps (see
// CpuEngine.Float32FlushesSubnormalsAndLeavesTheCallersModeAlone): the kernels flush them as the
// CPU engine does, one step per launch and fused.
TEST(CudaKernelsOnHost, FlushSubnormalsAsTheCpuEngineDoes) {
  const Problem problem = problem_of(64, 96, Stencil::oono_puri(), Boundary::ZeroFlux);
  const auto members = two_members(problem);
  const std::vector<reference::State> starts(
      2, reference::initial_state(problem.grid.rows, problem.grid.cols));
  const Batch<float> expected = run_cpu<float>(problem, members, starts, 150);
  for (int fuse : {1, 6}) {
    Batch<float> got = run_kernels<StencilKind::OonoPuri, Boundary::ZeroFlux, float>(
        problem, members, starts, 150, fuse);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1) << "fuse " << fuse;
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1) << "fuse " << fuse;
  }
}

// Grids large enough for blocks whose whole region lies inside the grid (the fused kernel's
// unchecked fast path, at every depth from 2 to 8) beside blocks on every edge and corner, taller
// than wide and wider than tall (a fast-path test that confuses rows and columns fails on one or
// the other), with odd sizes that no block divides; every boundary, both precisions, every fuse
// depth (0: the engine's default), 11 steps so that most depths end on a shorter launch.
using Shape = std::pair<std::int64_t, std::int64_t>;
using FastPathCase = std::tuple<Boundary, Shape>;
class CudaKernelsFastPath : public ::testing::TestWithParam<FastPathCase> {};

std::string fast_path_name(const ::testing::TestParamInfo<FastPathCase>& info) {
  const Shape shape = std::get<1>(info.param);
  std::string name = std::string(to_string(std::get<0>(info.param))) + "_" +
                     std::to_string(shape.first) + "x" + std::to_string(shape.second);
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

TEST_P(CudaKernelsFastPath, EveryDepthFloat) {
  const auto& [boundary, shape] = GetParam();
  expect_kernels_match_cpu<float>(
      problem_of(shape.first, shape.second, Stencil::oono_puri(), boundary), 11,
      {0, 1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_P(CudaKernelsFastPath, EveryDepthDouble) {
  const auto& [boundary, shape] = GetParam();
  expect_kernels_match_cpu<double>(
      problem_of(shape.first, shape.second, Stencil::oono_puri(), boundary), 11,
      {0, 1, 2, 3, 4, 5, 6, 7, 8});
}

INSTANTIATE_TEST_SUITE_P(InteriorBlocks, CudaKernelsFastPath,
                         ::testing::Combine(::testing::Values(Boundary::ZeroFlux,
                                                              Boundary::Periodic, Boundary::Fixed),
                                            ::testing::Values(Shape(130, 150), Shape(163, 133))),
                         fast_path_name);

// The user weights and the other built-in stencils on the fast path too (one shape, the deepest
// fusion and one that leaves a fused remainder).
TEST(CudaKernelsOnHost, EveryStencilOnInteriorBlocks) {
  for (const auto& stencil : {Stencil::pretty(), Stencil::five_point(),
                              Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15})}) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Fixed}) {
      expect_kernels_match_cpu<float>(problem_of(131, 157, stencil, boundary), 11, {3, 8});
    }
  }
}

// The fused kernel's variant that takes each thread's cells down a column: bitwise the CPU engine
// as the default is, on a grid of interior blocks beside blocks on every edge, a grid smaller
// than one region, every boundary, both precisions, every fused depth.
TEST(CudaKernelsOnHost, TheDownColumnsVariantMatchesTheCpuEngine) {
  for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    expect_kernels_match_cpu<float, true>(problem_of(131, 157, Stencil::oono_puri(), boundary), 17,
                                          {2, 3, 4, 5, 6, 7, 8});
    expect_kernels_match_cpu<double, true>(problem_of(7, 9, Stencil::pretty(), boundary), 9,
                                           {2, 8});
  }
  expect_kernels_match_cpu<double, true>(
      problem_of(70, 131, Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15}),
                 Boundary::ZeroFlux),
      10, {4});
}

// An advance longer than one graph: the plan splits it into graphs of max_graph_steps and the
// buffer parity carries over from one to the next, whether a full graph holds an odd number of
// launches (fuse 5: 205) or an even one (fuse 4: 256); on a grid of one block per member.
TEST(CudaKernelsOnHost, AdvancesBeyondOneGraph) {
  const std::int64_t steps = kernels::max_graph_steps + 6;
  for (int fuse : {4, 5}) {
    std::vector<std::pair<std::int64_t, int>> graphs;
    kernels::for_each_graph(steps, fuse, 0,
                            [&](std::int64_t n, int from) { graphs.emplace_back(n, from); });
    ASSERT_EQ(graphs.size(), 2u);
    EXPECT_EQ(graphs[0], std::make_pair(kernels::max_graph_steps, 0));
    EXPECT_EQ(graphs[1].first, 6);
    EXPECT_EQ(graphs[1].second, fuse == 5 ? 1 : 0);
  }
  for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic}) {
    expect_kernels_match_cpu<float>(problem_of(9, 50, Stencil::oono_puri(), boundary), steps,
                                    {4, 5});
  }
}

// A frozen member (a sweep's that settled) is left as it is by every launch, one-step and fused,
// and the members around it step as on the CPU engine with the same member frozen, bitwise.
TEST(CudaKernelsOnHost, FrozenMembersAreLeftAsTheyAre) {
  const Problem problem = problem_of(37, 53, Stencil::oono_puri(), Boundary::ZeroFlux);
  std::vector<Parameters> members = two_members(problem);
  members.push_back({0.05, 0.062, 0.18, 0.09, 0.45});
  auto starts = two_starts(37, 53);
  starts.push_back(grayscott::testing::varied_state(37, 53, 7));
  const std::vector<int> frozen{0, 1, 0};
  const Batch<float> expected = run_cpu<float>(problem, members, starts, 9, frozen);
  const std::size_t cells = problem.grid.cells();
  for (int fuse : {1, 4}) {
    SCOPED_TRACE("fuse " + std::to_string(fuse));
    const Batch<float> got = run_kernels<StencilKind::OonoPuri, Boundary::ZeroFlux, float>(
        problem, members, starts, 9, fuse, frozen);
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1);
    // The frozen member is its start; the others moved.
    EXPECT_TRUE(std::equal(starts[1].v.begin(), starts[1].v.end(), got.v.begin() + cells,
                           [](double a, float b) { return static_cast<float>(a) == b; }));
    EXPECT_FALSE(std::equal(starts[0].v.begin(), starts[0].v.end(), got.v.begin(),
                            [](double a, float b) { return static_cast<float>(a) == b; }));
  }
}

// The plan itself: every launch holds 1..fuse steps, they add up, parities alternate from the
// graph's, and the grid covers every output cell exactly (no block more than needed).
TEST(CudaKernelsOnHost, LaunchPlanCoversEveryStepAndCell) {
  for (int fuse = 1; fuse <= kernels::fused_max_steps; ++fuse) {
    for (std::int64_t steps : {1, 2, 7, 8, 9, 1023, 1024, 1025, 3000}) {
      std::int64_t total = 0;
      int expected_parity = 0;
      const int result = kernels::for_each_graph(steps, fuse, 0, [&](std::int64_t n, int from) {
        EXPECT_EQ(from, expected_parity);
        std::int64_t in_graph = 0;
        int p = from;
        expected_parity =
            kernels::for_each_launch(n, fuse, from, 130, 150, 3, [&](const kernels::Launch& plan) {
              EXPECT_GE(plan.steps, 1);
              EXPECT_LE(plan.steps, fuse);
              EXPECT_EQ(plan.parity, p);
              p = 1 - p;
              in_graph += plan.steps;
              EXPECT_EQ(plan.grid.z, 3u);
              // Output cells per block: the centre of the region, or one cell per thread.
              const auto w = static_cast<unsigned>(
                  plan.fused() ? kernels::fused_region_w - 2 * plan.steps : kernels::step_block_x);
              const auto h = static_cast<unsigned>(
                  plan.fused() ? kernels::fused_region_h - 2 * plan.steps : kernels::step_block_y);
              EXPECT_GE(plan.grid.x * w, 150u);
              EXPECT_LT((plan.grid.x - 1) * w, 150u);
              EXPECT_GE(plan.grid.y * h, 130u);
              EXPECT_LT((plan.grid.y - 1) * h, 130u);
            });
        EXPECT_EQ(in_graph, n);
        total += n;
      });
      EXPECT_EQ(total, steps);
      EXPECT_EQ(result, expected_parity);
    }
  }
  EXPECT_EQ(kernels::steps_per_launch(0), kernels::default_fuse_steps);
  EXPECT_EQ(kernels::steps_per_launch(6), 6);
}

// The frame kernel's cell numbering: every cell of the outer rectangle outside the inner one,
// each exactly once, for rims of different widths on every side (zero included).
TEST(CudaKernelsOnHost, FrameCoversTheRimOnce) {
  using kernels::CellRange;
  for (const auto& [outer, inner] : std::vector<std::pair<CellRange, CellRange>>{
           {{-2, 9, -2, 12}, {1, 6, 1, 9}},  // a rim of 3 cells on every side
           {{0, 7, 0, 10}, {1, 6, 1, 9}},    // one cell
           {{0, 7, -1, 10}, {1, 6, 1, 10}},  // no right side
           {{0, 7, 0, 10}, {0, 7, 3, 10}},   // only a left side
           {{0, 3, 0, 4}, {1, 2, 1, 3}}}) {
    const kernels::Frame frame{outer, inner};
    std::vector<int> seen(static_cast<std::size_t>((outer.row_end - outer.row_begin) *
                                                   (outer.col_end - outer.col_begin)),
                          0);
    for (long long j = 0; j < frame.cells(); ++j) {
      int r = 0, c = 0;
      frame.cell(j, r, c);
      ASSERT_TRUE(r >= outer.row_begin && r < outer.row_end && c >= outer.col_begin &&
                  c < outer.col_end)
          << r << "," << c;
      ++seen[static_cast<std::size_t>((r - outer.row_begin) * (outer.col_end - outer.col_begin) +
                                      (c - outer.col_begin))];
    }
    for (int r = outer.row_begin; r < outer.row_end; ++r) {
      for (int c = outer.col_begin; c < outer.col_end; ++c) {
        const bool in_inner =
            r >= inner.row_begin && r < inner.row_end && c >= inner.col_begin && c < inner.col_end;
        EXPECT_EQ(
            seen[static_cast<std::size_t>(
                (r - outer.row_begin) * (outer.col_end - outer.col_begin) + (c - outer.col_begin))],
            in_inner ? 0 : 1)
            << "cell " << r << "," << c;
      }
    }
  }
}
