// The CUDA engine against the CPU engine: agreement per stencil, boundary and precision, every
// cell written, the fused kernel bitwise equal to the one-step kernel, batches, captures, and the
// errors a user can meet. Tests that need a device skip, saying why, where there is none.
#include <gtest/gtest.h>

#include <tuple>

#include "gpu_test_support.hpp"

using namespace grayscott;
using namespace grayscott::testing;

namespace {

using Case = grayscott::testing::EngineCase;
using grayscott::testing::Shape;

// Shapes: single cells and lines (every neighbour a boundary), sizes that are not multiples of any
// block or tile, and one spanning several fused tiles in both directions.
const auto shapes = ::testing::Values(Shape{1, 1}, Shape{1, 7}, Shape{9, 1}, Shape{3, 5},
                                      Shape{37, 53}, Shape{70, 130});
const auto stencils = ::testing::Values(Stencil::oono_puri(), Stencil::pretty(),
                                        Stencil::five_point(), custom_stencil());
const auto boundaries = ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed);

class CudaEngineVsCpu : public ::testing::TestWithParam<Case> {};

// 200 steps from a varied state, in the one-step and the default fused kernel, poisoned outputs.
template <class Real>
void check_against_cpu(const Case& c, double tolerance) {
  const auto& [stencil, boundary, shape] = c;
  const Problem problem =
      stable_problem(shape.first, shape.second, stencil, boundary, precision_of<Real>());
  const auto start = varied_state(shape.first, shape.second, 11);
  constexpr std::int64_t steps = 200;
  const auto expected = run_cpu<Real>(problem, start, steps);
  for (int fuse : {1, 0}) {
    SCOPED_TRACE("fuse " + std::to_string(fuse));
    const auto got = run_gpu<Real>(problem, start, steps, {fuse, 0, true});
    ASSERT_EQ(count_non_finite(got.u), 0u) << "cells left unwritten (NaN poison)";
    ASSERT_EQ(count_non_finite(got.v), 0u) << "cells left unwritten (NaN poison)";
    EXPECT_LE(relative_l2(got.u, to_double(expected.u)), tolerance);
    EXPECT_LE(relative_l2(got.v, to_double(expected.v)), tolerance);
  }
}

TEST_P(CudaEngineVsCpu, Single) {
  GRAYSCOTT_REQUIRE_GPU();
  check_against_cpu<float>(GetParam(), 1e-5);
}
TEST_P(CudaEngineVsCpu, Double) {
  GRAYSCOTT_REQUIRE_GPU();
  check_against_cpu<double>(GetParam(), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(AllStencilsBoundariesAndShapes, CudaEngineVsCpu,
                         ::testing::Combine(stencils, boundaries, shapes), engine_case_name);

// The kernels are built without contraction (--fmad=false), like the CPU engine
// (-ffp-contract=off), and evaluate the same expressions in the same order: they must agree to the
// bit, not only within the tolerance above.
class CudaEngineBitwise : public ::testing::TestWithParam<Case> {};

TEST_P(CudaEngineBitwise, FusedEqualsOneStepAndCpu) {
  GRAYSCOTT_REQUIRE_GPU();
  const auto& [stencil, boundary, shape] = GetParam();
  const Problem problem =
      stable_problem(shape.first, shape.second, stencil, boundary, Precision::Single);
  const auto start = varied_state(shape.first, shape.second, 5);
  constexpr std::int64_t steps = 37;  // not a multiple of any fuse depth below
  const auto one_step = run_gpu<float>(problem, start, steps, {1, 0, true});
  for (int fuse : {2, 3, 4, 5, 8}) {
    for (std::int64_t chunk : {0, 5}) {
      SCOPED_TRACE("fuse " + std::to_string(fuse) + ", advance by " + std::to_string(chunk));
      const auto fused = run_gpu<float>(problem, start, steps, {fuse, chunk, true});
      EXPECT_EQ(first_bitwise_difference(fused.u, one_step.u), -1);
      EXPECT_EQ(first_bitwise_difference(fused.v, one_step.v), -1);
    }
  }
  const auto cpu = run_cpu<float>(problem, start, steps);
  EXPECT_EQ(first_bitwise_difference(one_step.u, cpu.u), -1) << "GPU and CPU round differently";
  EXPECT_EQ(first_bitwise_difference(one_step.v, cpu.v), -1) << "GPU and CPU round differently";
}

INSTANTIATE_TEST_SUITE_P(StencilsBoundariesShapes, CudaEngineBitwise,
                         ::testing::Combine(stencils, boundaries,
                                            ::testing::Values(Shape{1, 1}, Shape{5, 3},
                                                              Shape{61, 97}, Shape{90, 200})),
                         engine_case_name);

}  // namespace

TEST(CudaEngine, RunToRunBitwiseIdentical) {
  GRAYSCOTT_REQUIRE_GPU();
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    const Problem problem = stable_problem(300, 517, Stencil::oono_puri(), b, Precision::Single);
    const auto start = varied_state(300, 517, 3);
    const auto first = run_gpu<float>(problem, start, 120);
    for (int repeat = 0; repeat < 2; ++repeat) {
      const auto again = run_gpu<float>(problem, start, 120);
      EXPECT_EQ(first_bitwise_difference(first.u, again.u), -1);
      EXPECT_EQ(first_bitwise_difference(first.v, again.v), -1);
    }
  }
}

TEST(CudaEngine, SeedRunMatchesFloat64Reference) {
  GRAYSCOTT_REQUIRE_GPU();
  const Problem problem =
      stable_problem(108, 192, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Double);
  const auto start = reference::initial_state(108, 192);
  auto expected = start;
  for (int s = 0; s < 200; ++s) reference::step(to_reference(problem), expected);
  const auto got = run_gpu<double>(problem, start, 200);
  EXPECT_LE(relative_l2(got.u, expected.u), 1e-12);
  EXPECT_LE(relative_l2(got.v, expected.v), 1e-12);
}

TEST(CudaEngine, BatchMembersEqualSingleRuns) {
  GRAYSCOTT_REQUIRE_GPU();
  for (int fuse : {1, 0}) {
    SCOPED_TRACE("fuse " + std::to_string(fuse));
    Problem problem =
        stable_problem(45, 77, Stencil::pretty(), Boundary::Periodic, Precision::Single);
    const std::vector<Parameters> members = {{0.02, 0.05, 0.2, 0.1, 0.5},
                                             {0.03, 0.06, 0.2, 0.1, 0.5},
                                             {0.04, 0.065, 0.15, 0.08, 0.4},
                                             {0.055, 0.062, 0.2, 0.1, 0.5}};
    EngineOptions options;
    options.backend = "cuda";
    options.fuse_steps = fuse;
    auto batch = make_engine<float>(problem, members, options);
    ASSERT_EQ(batch->members(), members.size());
    std::vector<reference::State> starts;
    for (std::size_t m = 0; m < members.size(); ++m) {
      starts.push_back(varied_state(45, 77, static_cast<std::uint32_t>(m + 3)));
      batch->load(m, to_real<float>(starts[m].u), to_real<float>(starts[m].v));
    }
    batch->advance(33);
    batch->capture({true, true});
    for (std::size_t m = 0; m < members.size(); ++m) {
      Problem single = problem;
      single.params = members[m];
      const auto expected = run_gpu<float>(single, starts[m], 33, {fuse, 0, true});
      std::vector<float> u(expected.u.size(), -1.f), v(expected.v.size(), -1.f);
      batch->read_captured(m, u.data(), v.data());
      EXPECT_EQ(first_bitwise_difference(u, expected.u), -1) << "member " << m;
      EXPECT_EQ(first_bitwise_difference(v, expected.v), -1) << "member " << m;
      const auto cpu = run_cpu<float>(single, starts[m], 33);
      EXPECT_LE(relative_l2(v, to_double(cpu.v)), 1e-5) << "member " << m;
    }
  }
}

// freeze() (a sweep's member that settled): the member keeps the state it had, through steps on
// either buffer and fused or not, while the others step on bitwise as the CPU engine's batch with
// the same member frozen at the same step.
TEST(CudaEngine, AFrozenMemberStaysAsTheCpuEnginesDoes) {
  GRAYSCOTT_REQUIRE_GPU();
  for (int fuse : {1, 0}) {
    SCOPED_TRACE("fuse " + std::to_string(fuse));
    const Problem problem =
        stable_problem(45, 77, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
    const std::vector<Parameters> members = {{0.02, 0.05, 0.2, 0.1, 0.5},
                                             {0.03, 0.06, 0.2, 0.1, 0.5},
                                             {0.04, 0.065, 0.15, 0.08, 0.4}};
    EngineOptions options;
    options.backend = "cuda";
    options.fuse_steps = fuse;
    auto gpu = make_engine<float>(problem, members, options);
    auto cpu = make_engine<float>(problem, members, {"cpu", 1, 1, 0});
    for (std::size_t m = 0; m < members.size(); ++m) {
      const reference::State start = varied_state(45, 77, static_cast<std::uint32_t>(m + 3));
      gpu->load(m, to_real<float>(start.u), to_real<float>(start.v));
      cpu->load(m, to_real<float>(start.u), to_real<float>(start.v));
    }
    for (auto* engine : {gpu.get(), cpu.get()}) {
      engine->advance(13);  // an odd count: the state sits in the second buffer
      EXPECT_TRUE(engine->freeze(1));
      EXPECT_TRUE(engine->freeze(1));  // again: nothing changes
      engine->advance(20);
      engine->capture({true, true});
    }
    for (std::size_t m = 0; m < members.size(); ++m) {
      std::vector<float> gu(45 * 77, NAN), gv(45 * 77, NAN), cu(45 * 77), cv(45 * 77);
      gpu->read_captured(m, gu.data(), gv.data());
      cpu->read_captured(m, cu.data(), cv.data());
      EXPECT_EQ(first_bitwise_difference(gu, cu), -1) << "member " << m;
      EXPECT_EQ(first_bitwise_difference(gv, cv), -1) << "member " << m;
    }
  }
}

// capture() freezes the image while the steps queued after it run on; fields not captured are
// left alone in the caller's buffers.
TEST(CudaEngine, CapturedImageSurvivesFurtherSteps) {
  GRAYSCOTT_REQUIRE_GPU();
  const Problem problem =
      stable_problem(64, 80, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const auto start = varied_state(64, 80);
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<float>(problem, params, {"cuda", 0, 0, 0});
  engine->load(0, to_real<float>(start.u), to_real<float>(start.v));
  engine->advance(5);
  engine->capture({false, true});
  engine->advance(50);
  const std::size_t cells = 64 * 80;
  std::vector<float> u(cells, -1.f), v(cells, -1.f);
  engine->read_captured(0, u.data(), v.data());
  EXPECT_EQ(first_bitwise_difference(v, run_cpu<float>(problem, start, 5).v), -1);
  EXPECT_EQ(u, std::vector<float>(cells, -1.f)) << "u was not captured and must be left alone";
  // The next capture sees the 55 steps.
  engine->capture({true, true});
  engine->read_captured(0, u.data(), v.data());
  const auto later = run_cpu<float>(problem, start, 55);
  EXPECT_EQ(first_bitwise_difference(u, later.u), -1);
  EXPECT_EQ(first_bitwise_difference(v, later.v), -1);
}

// Errors are one line and name the problem, with or without a device.
TEST(CudaErrors, UnusableCudaIsAOneLineError) {
  std::string why;
  if (cuda::available(&why)) GTEST_SKIP() << "a CUDA device is usable here";
  const Problem problem =
      stable_problem(8, 8, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  try {
    make_engine<float>(problem, params, {"cuda", 0, 0, 0});
    FAIL() << "--backend cuda must fail when CUDA is unusable";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--backend cuda"), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_FALSE(why.empty());
}

TEST(CudaErrors, AutoFallsBackToCpuOrPicksCuda) {
  const Problem problem =
      stable_problem(8, 8, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<float>(problem, params, {"auto", 0, 0, 0});
  EXPECT_EQ(engine->backend(), cuda::available(nullptr) ? "cuda" : "cpu");
}

TEST(CudaErrors, BadDeviceOrdinal) {
  GRAYSCOTT_REQUIRE_GPU();
  const Problem problem =
      stable_problem(8, 8, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  const int count = static_cast<int>(cuda::devices().size());
  for (int ordinal : {count, 4096, -1}) {
    try {
      make_engine<float>(problem, params, {"cuda", 0, 0, ordinal});
      FAIL() << "device " << ordinal << " must be refused";
    } catch (const InvalidInput& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--device " + std::to_string(ordinal)), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(CudaErrors, BadFuseDepth) {
  GRAYSCOTT_REQUIRE_GPU();
  const Problem problem =
      stable_problem(8, 8, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  EXPECT_THROW(make_engine<float>(problem, params, {"cuda", 0, 9, 0}), InvalidInput);
  EXPECT_THROW(make_engine<float>(problem, params, {"cuda", 0, -1, 0}), InvalidInput);
}

TEST(CudaErrors, OutOfDeviceMemoryIsAOneLineError) {
  GRAYSCOTT_REQUIRE_GPU();
  // A batch whose state alone needs far more than any device has (4 x 65535 x ~2^31 floats).
  Problem problem =
      stable_problem(32767, 65535, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const std::vector<Parameters> members(65535, problem.params);
  try {
    make_engine<float>(problem, members, {"cuda", 0, 0, 0});
    FAIL() << "the allocation must fail";
  } catch (const InvalidInput&) {
    FAIL() << "out of memory is not bad input";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("out of device memory"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // The device is still usable afterwards.
  const Problem small =
      stable_problem(16, 16, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const auto start = varied_state(16, 16);
  const auto got = run_gpu<float>(small, start, 10);
  EXPECT_EQ(first_bitwise_difference(got.v, run_cpu<float>(small, start, 10).v), -1);
}

TEST(CudaBackend, DevicesAndCopyBandwidth) {
  GRAYSCOTT_REQUIRE_GPU();
  const auto list = cuda::devices();
  ASSERT_FALSE(list.empty());
  for (const auto& d : list) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_GE(d.major, 1);
  }
  const double bandwidth = cuda::copy_bandwidth(0);
  EXPECT_GT(bandwidth, 1e9) << "bytes/s";  // any GPU copies faster than 1 GB/s
  EXPECT_THROW(cuda::copy_bandwidth(static_cast<int>(list.size())), InvalidInput);
}

TEST(CudaBackend, ArithmeticPeak) {
  GRAYSCOTT_REQUIRE_GPU();
  const double single = cuda::arithmetic_peak(0, false), in_double = cuda::arithmetic_peak(0, true);
  EXPECT_GT(single, 1e11) << "flop/s";  // any CUDA GPU does more than 100 Gflop/s in float
  EXPECT_GT(in_double, 0) << "flop/s";
  EXPECT_GE(single, in_double) << "float is at least as fast as double";
}
