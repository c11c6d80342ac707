// The CPU engine's fused path (temporal blocking) against its one-step path: bitwise equal for
// every stencil, boundary, precision, shape, fuse depth, thread count and batch, whatever the
// number of steps per advance() call; and against the float64 reference.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/engine.hpp"
#include "engine_test_support.hpp"

using namespace grayscott;
using grayscott::testing::engine_case_name;
using grayscott::testing::stable_problem;
using grayscott::testing::varied_state;

namespace {

template <class Real>
struct Fields {
  std::vector<Real> u, v;
};

// Runs `steps` steps from `start` for every member of `members`, in advance() calls of at most
// `chunk` steps, and returns each member's final fields.
template <class Real>
std::vector<Fields<Real>> run(const Problem& problem, const std::vector<Parameters>& members,
                              const std::vector<reference::State>& starts, std::int64_t steps,
                              int fuse, int threads, std::int64_t chunk = 0) {
  EngineOptions options;
  options.backend = "cpu";
  options.threads = threads;
  options.fuse_steps = fuse;
  cpu::CpuEngine<Real> engine(problem, members, options);
  if (fuse > 0) {
    EXPECT_EQ(engine.fuse_steps(), fuse);
  }
  for (std::size_t m = 0; m < members.size(); ++m) {
    const std::vector<Real> u(starts[m].u.begin(), starts[m].u.end());
    const std::vector<Real> v(starts[m].v.begin(), starts[m].v.end());
    engine.load(m, u, v);
  }
  if (chunk <= 0) chunk = steps;
  for (std::int64_t done = 0; done < steps; done += chunk)
    engine.advance(std::min(chunk, steps - done));
  engine.capture({true, true});
  std::vector<Fields<Real>> out;
  for (std::size_t m = 0; m < members.size(); ++m) {
    const auto cells = static_cast<std::size_t>(problem.grid.cells());
    Fields<Real> f{std::vector<Real>(cells, Real(-7)), std::vector<Real>(cells, Real(-7))};
    engine.read_captured(m, f.u.data(), f.v.data());
    out.push_back(std::move(f));
  }
  return out;
}

template <class Real>
Fields<Real> run_single(const Problem& problem, const reference::State& start, std::int64_t steps,
                        int fuse, int threads, std::int64_t chunk = 0) {
  return run<Real>(problem, {problem.params}, {start}, steps, fuse, threads, chunk)[0];
}

template <class Real>
bool bitwise_equal(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

const Stencil custom_stencil = Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15});

using Case = grayscott::testing::EngineCase;
using grayscott::testing::Shape;

class FusedVsOneStep : public ::testing::TestWithParam<Case> {};

// Every fuse depth 1..8, with more steps than the depth (not a multiple of it) and fewer steps
// than the depth, on 1, 2 and 3 threads (rotating with the depth, so every depth meets two thread
// counts and every thread count meets every kind of pass).
template <class Real>
void check_fused_equals_one_step(const Case& c) {
  const auto& [stencil, boundary, shape] = c;
  const Problem problem = stable_problem(shape.first, shape.second, stencil, boundary,
                                         sizeof(Real) == 4 ? Precision::Single : Precision::Double);
  const auto start = varied_state(shape.first, shape.second, 5);
  constexpr std::int64_t many_steps = 13;
  const auto expected_many = run_single<Real>(problem, start, many_steps, 1, 1);
  for (int depth = 1; depth <= 8; ++depth) {
    const int threads = 1 + depth % 3;
    const auto got = run_single<Real>(problem, start, many_steps, depth, threads);
    EXPECT_TRUE(bitwise_equal(got.u, expected_many.u))
        << "u, depth " << depth << ", threads " << threads;
    EXPECT_TRUE(bitwise_equal(got.v, expected_many.v))
        << "v, depth " << depth << ", threads " << threads;

    if (depth == 1) continue;
    const std::int64_t few_steps = depth - 1;
    const int other_threads = 1 + (depth + 1) % 3;
    const auto expected_few = run_single<Real>(problem, start, few_steps, 1, 1);
    const auto got_few = run_single<Real>(problem, start, few_steps, depth, other_threads);
    EXPECT_TRUE(bitwise_equal(got_few.u, expected_few.u)) << "u, depth " << depth << ", few steps";
    EXPECT_TRUE(bitwise_equal(got_few.v, expected_few.v)) << "v, depth " << depth << ", few steps";
  }
}

TEST_P(FusedVsOneStep, Single) { check_fused_equals_one_step<float>(GetParam()); }
TEST_P(FusedVsOneStep, Double) { check_fused_equals_one_step<double>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    AllStencilsBoundariesAndShapes, FusedVsOneStep,
    ::testing::Combine(::testing::Values(Stencil::oono_puri(), Stencil::pretty(),
                                         Stencil::five_point(), custom_stencil),
                       ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed),
                       ::testing::Values(Shape{1, 1}, Shape{1, 9}, Shape{7, 1}, Shape{2, 2},
                                         Shape{3, 5}, Shape{6, 4}, Shape{17, 29}, Shape{41, 33})),
    engine_case_name);

// Every depth with every thread count on a grid where bands are a few rows, so that the rows
// recomputed at band edges reach across several bands and the grid's edges.
TEST(CpuFused, EveryDepthAndThreadCountOnNarrowBands) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    const Problem problem = stable_problem(11, 23, Stencil::oono_puri(), b, Precision::Single);
    const auto start = varied_state(11, 23, 9);
    const auto expected = run_single<float>(problem, start, 19, 1, 1);
    for (int depth = 2; depth <= 8; ++depth) {
      for (int threads : {1, 2, 3, 4}) {
        const auto got = run_single<float>(problem, start, 19, depth, threads);
        EXPECT_TRUE(bitwise_equal(got.u, expected.u))
            << to_string(b) << " depth " << depth << " threads " << threads;
        EXPECT_TRUE(bitwise_equal(got.v, expected.v))
            << to_string(b) << " depth " << depth << " threads " << threads;
      }
    }
  }
}

// advance() calls of any length: a pass never spans two calls, and a short call is a shallow pass.
TEST(CpuFused, AnyChunkingOfAdvanceCalls) {
  const Problem problem =
      stable_problem(30, 17, Stencil::pretty(), Boundary::Periodic, Precision::Double);
  const auto start = varied_state(30, 17, 4);
  const auto expected = run_single<double>(problem, start, 25, 1, 1);
  for (std::int64_t chunk : {1, 2, 3, 5, 7, 8, 9, 24}) {
    const auto got = run_single<double>(problem, start, 25, 4, 2, chunk);
    EXPECT_TRUE(bitwise_equal(got.u, expected.u)) << "chunk " << chunk;
    EXPECT_TRUE(bitwise_equal(got.v, expected.v)) << "chunk " << chunk;
  }
}

// A batch: each member has its own rates, and bands may split between members.
TEST(CpuFused, BatchMembersEqualOneStepSingleRuns) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    const Problem problem = stable_problem(9, 14, Stencil::five_point(), b, Precision::Single);
    const std::vector<Parameters> members = {
        {0.02, 0.05, 0.2, 0.1, 0.5}, {0.03, 0.06, 0.2, 0.1, 0.5}, {0.04, 0.065, 0.2, 0.1, 0.5}};
    std::vector<reference::State> starts;
    for (std::size_t m = 0; m < members.size(); ++m) {
      starts.push_back(varied_state(9, 14, static_cast<std::uint32_t>(m + 11)));
    }
    for (int depth : {2, 3, 6}) {
      for (int threads : {1, 2, 3, 5}) {
        const auto got = run<float>(problem, members, starts, 17, depth, threads);
        for (std::size_t m = 0; m < members.size(); ++m) {
          Problem single = problem;
          single.params = members[m];
          const auto expected = run_single<float>(single, starts[m], 17, 1, 1);
          EXPECT_TRUE(bitwise_equal(got[m].u, expected.u))
              << "member " << m << " depth " << depth << " threads " << threads;
          EXPECT_TRUE(bitwise_equal(got[m].v, expected.v))
              << "member " << m << " depth " << depth << " threads " << threads;
        }
      }
    }
  }
}

// The automatic depth on the seed preset fuses, and on a tiny grid does not; both run correctly.
TEST(CpuFused, AutomaticDepth) {
  EXPECT_GT(cpu::CpuEngine<float>::automatic_fuse_steps({1080, 1920}, 1, 2), 1);
  EXPECT_LE(cpu::CpuEngine<float>::automatic_fuse_steps({1080, 1920}, 1, 2),
            cpu::CpuEngine<float>::max_fuse_steps);
  EXPECT_EQ(cpu::CpuEngine<float>::automatic_fuse_steps({1, 1}, 1, 2), 1);
  const Problem problem =
      stable_problem(64, 48, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const auto start = varied_state(64, 48, 2);
  const auto expected = run_single<float>(problem, start, 21, 1, 1);
  const auto got = run_single<float>(problem, start, 21, 0, 2);
  EXPECT_TRUE(bitwise_equal(got.u, expected.u));
  EXPECT_TRUE(bitwise_equal(got.v, expected.v));
}

// Every depth up to the automatic maximum (16, the course grid's in single precision; 12 in
// double on a 1 MiB L2) and beyond it up to the deepest accepted (64), on a grid tall enough for
// every thread's band to hold several passes, with steps no depth divides, on 1 and 3 threads,
// both precisions, every boundary: bitwise equal to one step per pass.
template <class Real>
void check_every_depth_up_to_the_cap(Boundary boundary) {
  const Precision precision = sizeof(Real) == 4 ? Precision::Single : Precision::Double;
  const Problem problem = stable_problem(203, 37, Stencil::oono_puri(), boundary, precision);
  const auto start = varied_state(203, 37, 8);
  constexpr std::int64_t steps = 131;  // prime: a shorter last pass at every depth above 1
  const auto expected = run_single<Real>(problem, start, steps, 1, 1);
  std::vector<int> depths;
  for (int depth = 2; depth <= 17; ++depth) depths.push_back(depth);
  for (int depth : {24, 31, 32, cpu::CpuEngine<Real>::max_fuse_steps}) depths.push_back(depth);
  for (int depth : depths) {
    for (int threads : {1, 3}) {
      const auto got = run_single<Real>(problem, start, steps, depth, threads);
      EXPECT_TRUE(bitwise_equal(got.u, expected.u))
          << to_string(boundary) << " depth " << depth << " threads " << threads;
      EXPECT_TRUE(bitwise_equal(got.v, expected.v))
          << to_string(boundary) << " depth " << depth << " threads " << threads;
    }
  }
}

TEST(CpuFused, EveryDepthUpToTheCapSingle) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    check_every_depth_up_to_the_cap<float>(b);
  }
}

TEST(CpuFused, EveryDepthUpToTheCapDouble) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    check_every_depth_up_to_the_cap<double>(b);
  }
}

// The automatic depth never passes 16, however much cache and however many rows per thread, and
// reaches it where both allow; the engine then runs at 16 and equals one step per pass.
TEST(CpuFused, AutomaticDepthIsCappedAt16) {
  EXPECT_EQ(cpu::CpuEngine<float>::automatic_fuse_steps({1'000'000, 8}, 1, 1), 16);
  EXPECT_EQ(cpu::CpuEngine<double>::automatic_fuse_steps({1'000'000, 8}, 1, 1), 16);
  EXPECT_EQ(cpu::CpuEngine<float>::automatic_fuse_steps({4096, 8}, 64, 1), 16);
  // Rows per thread bound it: 16 rows of band per fused step.
  EXPECT_EQ(cpu::CpuEngine<float>::automatic_fuse_steps({160, 8}, 1, 1), 10);
  EXPECT_EQ(cpu::CpuEngine<float>::automatic_fuse_steps({160, 8}, 1, 2), 5);
  EXPECT_EQ(cpu::CpuEngine<float>::automatic_fuse_steps({100, 8}, 3, 2), 9);
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic}) {
    const Problem problem = stable_problem(600, 40, Stencil::pretty(), b, Precision::Single);
    const auto start = varied_state(600, 40, 12);
    EngineOptions options;
    options.backend = "cpu";
    options.threads = 2;
    const Parameters params[1] = {problem.params};
    EXPECT_EQ(cpu::CpuEngine<float>(problem, params, options).fuse_steps(), 16);
    const auto expected = run_single<float>(problem, start, 50, 1, 1);
    const auto got = run_single<float>(problem, start, 50, 0, 2);
    EXPECT_TRUE(bitwise_equal(got.u, expected.u)) << to_string(b);
    EXPECT_TRUE(bitwise_equal(got.v, expected.v)) << to_string(b);
  }
}

TEST(CpuFused, RejectsBadFuseDepth) {
  const Problem problem =
      stable_problem(8, 8, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  for (int fuse : {-1, cpu::CpuEngine<float>::max_fuse_steps + 1}) {
    EngineOptions options;
    options.backend = "cpu";
    options.fuse_steps = fuse;
    EXPECT_THROW(cpu::CpuEngine<float>(problem, params, options), InvalidInput) << fuse;
  }
}

// The fused path against the independent float64 reference, deep fusion on every boundary.
class FusedVsReference : public ::testing::TestWithParam<std::tuple<Stencil, Boundary>> {};

TEST_P(FusedVsReference, DoubleAndSingle) {
  const auto& [stencil, boundary] = GetParam();
  const Problem problem = stable_problem(23, 31, stencil, boundary, Precision::Double);
  const auto start = varied_state(23, 31, 3);
  constexpr std::int64_t steps = 40;
  auto expected = start;
  const auto model = grayscott::testing::to_reference(problem);
  for (int s = 0; s < steps; ++s) reference::step(model, expected);
  const auto got_double = run_single<double>(problem, start, steps, 7, 2);
  EXPECT_LE(grayscott::testing::relative_l2(got_double.u, expected.u), 1e-12);
  EXPECT_LE(grayscott::testing::relative_l2(got_double.v, expected.v), 1e-12);
  const auto got_single = run_single<float>(problem, start, steps, 7, 2);
  EXPECT_LE(grayscott::testing::relative_l2(got_single.u, expected.u), 2e-6);
  EXPECT_LE(grayscott::testing::relative_l2(got_single.v, expected.v), 2e-6);
}

std::string stencil_and_boundary_name(
    const ::testing::TestParamInfo<std::tuple<Stencil, Boundary>>& info) {
  const auto& [stencil, boundary] = info.param;
  return engine_case_name({{stencil, boundary, Shape{23, 31}}, info.index});
}

INSTANTIATE_TEST_SUITE_P(
    AllStencilsAndBoundaries, FusedVsReference,
    ::testing::Combine(::testing::Values(Stencil::oono_puri(), Stencil::pretty(),
                                         Stencil::five_point(), custom_stencil),
                       ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed)),
    stencil_and_boundary_name);

}  // namespace
