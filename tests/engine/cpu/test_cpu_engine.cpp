#include <gtest/gtest.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cpu/streaming_copy.hpp"
#include "engine/engine.hpp"
#include "engine_test_support.hpp"

using namespace grayscott;
using grayscott::testing::engine_case_name;
using grayscott::testing::stable_problem;
using grayscott::testing::varied_state;

namespace {

template <class Real>
std::vector<Real> to_real(const std::vector<double>& x) {
  return {x.begin(), x.end()};
}

template <class Real>
struct CpuRun {
  std::vector<Real> u, v;
};

template <class Real>
CpuRun<Real> run_cpu(const Problem& problem, const reference::State& start, std::int64_t steps,
                     int threads = 0, std::int64_t chunk = 0) {
  EngineOptions options;
  options.backend = "cpu";
  options.threads = threads;
  const Parameters params[1] = {problem.params};
  cpu::CpuEngine<Real> engine(problem, params, options);
  const auto u0 = to_real<Real>(start.u), v0 = to_real<Real>(start.v);
  engine.load(0, u0, v0);
  if (chunk <= 0) chunk = steps;
  for (std::int64_t done = 0; done < steps; done += chunk)
    engine.advance(std::min(chunk, steps - done));
  engine.capture({true, true});
  CpuRun<Real> out{std::vector<Real>(u0.size(), Real(-7)), std::vector<Real>(v0.size(), Real(-7))};
  engine.read_captured(0, out.u.data(), out.v.data());
  return out;
}

const Stencil custom_stencil = Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15});

using Case = grayscott::testing::EngineCase;

class CpuEngineVsReference : public ::testing::TestWithParam<Case> {};

template <class Real>
void check_against_reference(const Case& c, double tolerance) {
  const auto& [stencil, boundary, size] = c;
  const Problem problem = stable_problem(size.first, size.second, stencil, boundary,
                                         sizeof(Real) == 4 ? Precision::Single : Precision::Double);
  const auto start = varied_state(size.first, size.second);
  constexpr std::int64_t steps = 40;
  auto expected = start;
  const auto model = grayscott::testing::to_reference(problem);
  for (int s = 0; s < steps; ++s) reference::step(model, expected);
  const auto got = run_cpu<Real>(problem, start, steps);
  EXPECT_LE(grayscott::testing::relative_l2(got.u, expected.u), tolerance);
  EXPECT_LE(grayscott::testing::relative_l2(got.v, expected.v), tolerance);
  EXPECT_LE(grayscott::testing::max_abs_difference(got.v, expected.v), 100 * tolerance);
}

TEST_P(CpuEngineVsReference, Double) { check_against_reference<double>(GetParam(), 1e-12); }
TEST_P(CpuEngineVsReference, Single) { check_against_reference<float>(GetParam(), 2e-6); }

INSTANTIATE_TEST_SUITE_P(
    AllStencilsBoundariesAndShapes, CpuEngineVsReference,
    ::testing::Combine(::testing::Values(Stencil::oono_puri(), Stencil::pretty(),
                                         Stencil::five_point(), custom_stencil),
                       ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed),
                       ::testing::Values(std::pair<std::int64_t, std::int64_t>{1, 1},
                                         std::pair<std::int64_t, std::int64_t>{1, 7},
                                         std::pair<std::int64_t, std::int64_t>{9, 1},
                                         std::pair<std::int64_t, std::int64_t>{2, 2},
                                         std::pair<std::int64_t, std::int64_t>{3, 5},
                                         std::pair<std::int64_t, std::int64_t>{17, 29},
                                         std::pair<std::int64_t, std::int64_t>{40, 64})),
    engine_case_name);

// The fixed boundary's outside values reach every path of the engine (edge lines, end cells,
// fused steps): the CuPy and JAX versions' zero padding and values with no special meaning,
// against the reference; the default outside gives other numbers, so the values are really read.
TEST(CpuEngine, FixedBoundaryTakesItsOutsideValues) {
  for (const Outside outside : {Outside{0.0, 0.0}, Outside{0.25, 0.5}}) {
    for (const auto& stencil : {Stencil::five_point(), Stencil::pretty(), custom_stencil}) {
      for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 5}, {40, 64}}) {
        SCOPED_TRACE(stencil.name() + " " + to_string(outside) + " " + std::to_string(rows) + "x" +
                     std::to_string(cols));
        Problem problem = stable_problem(rows, cols, stencil, Boundary::Fixed, Precision::Double);
        const Problem ordinary = problem;
        problem.outside = outside;
        const auto start = varied_state(rows, cols);
        auto expected = start;
        const auto model = grayscott::testing::to_reference(problem);
        EXPECT_EQ(model.outside_u, outside.u);
        EXPECT_EQ(model.outside_v, outside.v);
        for (int s = 0; s < 40; ++s) reference::step(model, expected);
        const auto got = run_cpu<double>(problem, start, 40);
        EXPECT_LE(grayscott::testing::relative_l2(got.u, expected.u), 1e-12);
        EXPECT_LE(grayscott::testing::relative_l2(got.v, expected.v), 1e-12);
        const auto single = run_cpu<float>(problem, start, 40);
        EXPECT_LE(grayscott::testing::relative_l2(single.v, expected.v), 2e-6);
        const auto with_default = run_cpu<double>(ordinary, start, 40);
        EXPECT_GT(grayscott::testing::relative_l2(with_default.v, expected.v), 1e-6);
      }
    }
  }
}

}  // namespace

// docs/model.md: the folded update keeps the feed's rest state u = 1, v = 0 to an ulp (each term
// rounds at the size of u; the written form kept it exactly). Every built-in stencil, boundary and
// precision, 1000 steps of a grid wide enough for every row path: u stays uniform and within one
// ulp below or above 1, v stays exactly 0.
TEST(CpuEngine, TheRestStateStaysWithinAnUlp) {
  const auto check = [](auto zero, const Problem& problem) {
    using Real = decltype(zero);
    const reference::State rest{problem.grid.rows, problem.grid.cols,
                                std::vector<double>(problem.grid.cells(), 1.0),
                                std::vector<double>(problem.grid.cells(), 0.0)};
    const auto got = run_cpu<Real>(problem, rest, 1000);
    const Real ulp = std::numeric_limits<Real>::epsilon();
    for (std::size_t i = 0; i < got.u.size(); ++i) {
      ASSERT_EQ(got.u[i], got.u[0]) << "cell " << i;
      ASSERT_EQ(got.v[i], Real(0)) << "cell " << i;
    }
    EXPECT_LE(std::abs(got.u[0] - Real(1)), ulp) << got.u[0];
  };
  for (const auto& stencil : {Stencil::oono_puri(), Stencil::pretty(), Stencil::five_point()}) {
    for (const Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      SCOPED_TRACE(stencil.name() + " " + std::string(to_string(boundary)));
      const Problem problem = stable_problem(6, 70, stencil, boundary, Precision::Single);
      check(float{}, problem);
      check(double{}, problem);
    }
  }
}

TEST(CpuEngine, SeedMatchesReferenceInitialState) {
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {16, 16}, {108, 192}}) {
    const auto expected = reference::initial_state(rows, cols);
    std::vector<float> u(rows * cols), v(rows * cols);
    fill_seed<float>({rows, cols}, u, v);
    for (std::size_t i = 0; i < u.size(); ++i) {
      ASSERT_EQ(u[i], expected.u[i]) << i;
      ASSERT_EQ(v[i], expected.v[i]) << i;
    }
  }
}

TEST(CpuEngine, SeedRunMatchesReference) {
  const Problem problem =
      stable_problem(64, 96, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Double);
  const auto start = reference::initial_state(64, 96);
  auto expected = start;
  for (int s = 0; s < 200; ++s)
    reference::step(grayscott::testing::to_reference(problem), expected);
  const auto got = run_cpu<double>(problem, start, 200);
  EXPECT_LE(grayscott::testing::relative_l2(got.v, expected.v), 1e-12);
}

TEST(CpuEngine, BitwiseIdenticalForAnyThreadCountAndChunking) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    const Problem problem = stable_problem(37, 53, Stencil::oono_puri(), b, Precision::Single);
    const auto start = varied_state(37, 53, 7);
    const auto one = run_cpu<float>(problem, start, 30, 1);
    for (int threads : {2, 3, 5}) {
      const auto many = run_cpu<float>(problem, start, 30, threads, 7);
      EXPECT_EQ(0, std::memcmp(one.u.data(), many.u.data(), one.u.size() * sizeof(float)));
      EXPECT_EQ(0, std::memcmp(one.v.data(), many.v.data(), one.v.size() * sizeof(float)));
    }
  }
}

TEST(CpuEngine, BatchMembersEqualSingleRuns) {
  Problem problem =
      stable_problem(20, 24, Stencil::pretty(), Boundary::Periodic, Precision::Single);
  problem.params.dt = 0.5;
  const std::vector<Parameters> members = {
      {0.02, 0.05, 0.2, 0.1, 0.5}, {0.03, 0.06, 0.2, 0.1, 0.5}, {0.04, 0.065, 0.2, 0.1, 0.5}};
  EngineOptions options;
  options.backend = "cpu";
  cpu::CpuEngine<float> batch(problem, members, options);
  std::vector<reference::State> starts;
  for (std::size_t m = 0; m < members.size(); ++m) {
    starts.push_back(varied_state(20, 24, static_cast<std::uint32_t>(m + 3)));
    batch.load(m, to_real<float>(starts[m].u), to_real<float>(starts[m].v));
  }
  batch.advance(25);
  batch.capture({true, true});
  for (std::size_t m = 0; m < members.size(); ++m) {
    Problem single = problem;
    single.params = members[m];
    const auto expected = run_cpu<float>(single, starts[m], 25);
    std::vector<float> u(expected.u.size()), v(expected.v.size());
    batch.read_captured(m, u.data(), v.data());
    EXPECT_EQ(u, expected.u) << "member " << m;
    EXPECT_EQ(v, expected.v) << "member " << m;
  }
}

// A batch of many small members steps member by member in cache (advance_members_in_cache): every
// member must equal its run alone on the one-step path, bitwise, for every boundary and precision,
// with an odd number of steps (buffer parity) and two advances.
template <class Real>
void check_members_in_cache(Boundary boundary) {
  const Precision precision = std::is_same_v<Real, float> ? Precision::Single : Precision::Double;
  const Problem problem = stable_problem(19, 37, Stencil::oono_puri(), boundary, precision);
  std::vector<Parameters> members;
  for (int m = 0; m < 9; ++m)
    members.push_back({0.02 + 0.003 * m, 0.05 + 0.001 * m, 0.2, 0.1, 0.5});
  EngineOptions options;
  options.backend = "cpu";
  options.threads = 2;
  ASSERT_TRUE(cpu::CpuEngine<Real>::steps_members_in_cache(problem.grid, members.size(), 2));
  cpu::CpuEngine<Real> batch(problem, members, options);
  std::vector<reference::State> starts;
  for (std::size_t m = 0; m < members.size(); ++m) {
    starts.push_back(varied_state(19, 37, static_cast<std::uint32_t>(m + 11)));
    batch.load(m, to_real<Real>(starts[m].u), to_real<Real>(starts[m].v));
  }
  batch.advance(6);
  batch.advance(7);
  batch.capture({true, true});
  for (std::size_t m = 0; m < members.size(); ++m) {
    Problem single = problem;
    single.params = members[m];
    const auto expected = run_cpu<Real>(single, starts[m], 13, 1, 1);
    std::vector<Real> u(expected.u.size()), v(expected.v.size());
    batch.read_captured(m, u.data(), v.data());
    EXPECT_EQ(u, expected.u) << "member " << m;
    EXPECT_EQ(v, expected.v) << "member " << m;
  }
}

TEST(CpuEngine, SmallMembersSteppedInCacheEqualSingleRuns) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    check_members_in_cache<float>(b);
    check_members_in_cache<double>(b);
  }
}

TEST(CpuEngine, OnlyManySmallMembersStepInCache) {
  EXPECT_TRUE(cpu::CpuEngine<float>::steps_members_in_cache({128, 128}, 1024, 2));
  EXPECT_FALSE(cpu::CpuEngine<float>::steps_members_in_cache({128, 128}, 7, 2));     // too few
  EXPECT_FALSE(cpu::CpuEngine<float>::steps_members_in_cache({1080, 1920}, 64, 2));  // too big
}

// The VmFlags of the mapping that holds `address` (/proc/self/smaps): "hg" where huge pages were
// asked for (MADV_HUGEPAGE), "nh" where they were refused (MADV_NOHUGEPAGE); "" if not found.
std::string vm_flags_of(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return {};
}

// A grid streamed through memory asks for huge pages; a batch stepped member by member from the
// cache refuses them, since with 2 MiB pages its four fields fall into the same L2 cache sets
// (bench_cpu_engine --benchmark_filter=BatchPages shows the cost).
TEST(CpuEngine, BatchInCacheRefusesHugePagesAndAStreamedGridAsksForThem) {
  const int on_the_stack = 0;
  if (vm_flags_of(&on_the_stack).empty()) GTEST_SKIP() << "no /proc/self/smaps here";
  EngineOptions options;
  options.backend = "cpu";
  options.threads = 2;
  const Problem small =
      stable_problem(64, 64, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const std::vector<Parameters> members(1024, small.params);
  ASSERT_TRUE(cpu::CpuEngine<float>::steps_members_in_cache(small.grid, members.size(), 2));
  cpu::CpuEngine<float> batch(small, members, options);
  EXPECT_NE(vm_flags_of(batch.state().v).find(" nh"), std::string::npos)
      << vm_flags_of(batch.state().v);

  const Problem large =
      stable_problem(1024, 1024, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const Parameters one[1] = {large.params};
  cpu::CpuEngine<float> grid(large, one, options);
  EXPECT_NE(vm_flags_of(grid.state().v).find(" hg"), std::string::npos)
      << vm_flags_of(grid.state().v);
}

// copy_state (how the run pipeline reads a host engine's images) gives each member's current state,
// as a capture does, whatever the thread count, and leaves a field given no buffer alone.
TEST(CpuEngine, CopyStateGivesEachMembersCurrentState) {
  const Problem problem =
      stable_problem(37, 53, Stencil::oono_puri(), Boundary::Periodic, Precision::Single);
  const std::vector<Parameters> members = {problem.params, {0.03, 0.06, 0.2, 0.1, 0.5}};
  for (int threads : {1, 2, 3}) {
    cpu::CpuEngine<float> engine(problem, members, {"cpu", threads, 0, 0});
    for (std::size_t m = 0; m < members.size(); ++m) {
      const auto start = varied_state(37, 53, static_cast<std::uint32_t>(m + 3));
      engine.load(m, to_real<float>(start.u), to_real<float>(start.v));
    }
    engine.advance(9);
    engine.capture({true, true});
    for (std::size_t m = 0; m < members.size(); ++m) {
      std::vector<float> u(37 * 53, -1.f), v(37 * 53, -1.f), copied_u(37 * 53, -2.f),
          copied_v(37 * 53, -2.f);
      engine.read_captured(m, u.data(), v.data());
      EXPECT_TRUE(engine.copy_state(m, copied_u.data(), copied_v.data()))
          << "a finite state is reported finite";
      EXPECT_EQ(copied_u, u) << "member " << m << ", " << threads << " threads";
      EXPECT_EQ(copied_v, v) << "member " << m << ", " << threads << " threads";
      std::vector<float> untouched(37 * 53, -3.f);
      engine.copy_state(m, nullptr, untouched.data());
      EXPECT_EQ(untouched, v);
    }
  }
}

// copy_state reports a non-finite value of the field it copies, wherever it lies, and only of that
// field (the run pipeline then stops without scanning the image again): on a small grid, copied
// with ordinary stores, and on one past streaming_copy_min_bytes (rows of an odd length, so that
// most start unaligned), copied with streaming stores.
TEST(CpuEngine, CopyStateReportsANonFiniteValueOfTheFieldItCopies) {
  for (const auto& [rows, cols] : {std::pair<int, int>{31, 45}, std::pair<int, int>{520, 517}}) {
    const auto cells = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    ASSERT_EQ(cells * sizeof(float) >= cpu::streaming_copy_min_bytes, rows == 520);
    const Problem problem =
        stable_problem(rows, cols, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
    const Parameters params[1] = {problem.params};
    const auto start = varied_state(rows, cols);
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      for (std::size_t at : {std::size_t{0}, cells / 2 + 3, cells - 1}) {
        cpu::CpuEngine<float> engine(problem, params, {"cpu", 2, 0, 0});
        std::vector<float> v = to_real<float>(start.v);
        v[at] = bad;
        engine.load(0, to_real<float>(start.u), v);
        std::vector<float> u_out(cells), v_out(cells);
        EXPECT_FALSE(engine.copy_state(0, nullptr, v_out.data()))
            << rows << "x" << cols << ": v[" << at << "] = " << bad;
        EXPECT_TRUE(engine.copy_state(0, u_out.data(), nullptr)) << "u is finite";
        EXPECT_EQ(std::memcmp(v_out.data(), v.data(), v.size() * sizeof(float)), 0)
            << "copied as it is";
        EXPECT_EQ(u_out, to_real<float>(start.u));
      }
    }
  }
}

TEST(CpuEngine, CapturedImageSurvivesFurtherSteps) {
  const Problem problem =
      stable_problem(16, 16, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  const auto start = varied_state(16, 16);
  const Parameters params[1] = {problem.params};
  cpu::CpuEngine<float> engine(problem, params, {"cpu", 1, 0, 0});
  engine.load(0, to_real<float>(start.u), to_real<float>(start.v));
  engine.advance(5);
  engine.capture({false, true});
  engine.advance(5);
  std::vector<float> v(256, -1.f), u(256, -1.f);
  engine.read_captured(0, u.data(), v.data());
  EXPECT_EQ(v, run_cpu<float>(problem, start, 5).v);
  EXPECT_EQ(u, std::vector<float>(256, -1.f)) << "u was not captured and must be left alone";
}

// float32 flushes subnormal numbers to zero (engine/cpu/subnormals.hpp): a 128x128 grid from the
// seed, where after 128 steps a tenth of v lies below float's smallest normal number in float64,
// holds none in float32, on every path (one step per pass, fused, a batch in cache); the caller's
// own floating-point mode is left as it was.
TEST(CpuEngine, Float32FlushesSubnormalsAndLeavesTheCallersModeAlone) {
  Problem problem;
  problem.grid = {128, 128};
  const std::size_t cells = problem.grid.cells();
  std::vector<double> u64(cells), v64(cells);
  fill_seed<double>(problem.grid, u64, v64);
  cpu::CpuEngine<double> wide(problem, std::vector<Parameters>{problem.params}, {"cpu", 2, 1, 0});
  wide.load(0, u64, v64);
  wide.advance(128);
  wide.capture({false, true});
  wide.read_captured(0, nullptr, v64.data());
  const auto below_float_normal = std::count_if(v64.begin(), v64.end(), [](double x) {
    return x != 0 && std::abs(x) < std::numeric_limits<float>::min();
  });
  EXPECT_GT(below_float_normal, static_cast<std::ptrdiff_t>(cells / 20));  // else nothing to see

  std::vector<float> u(cells), v(cells);
  fill_seed<float>(problem.grid, u, v);
  for (auto [fuse, members] : {std::pair{1, 1}, {8, 1}, {0, 16}}) {
    SCOPED_TRACE("fuse " + std::to_string(fuse) + ", " + std::to_string(members) + " members");
    const std::vector<Parameters> params(static_cast<std::size_t>(members), problem.params);
    cpu::CpuEngine<float> engine(problem, params, {"cpu", 2, fuse, 0});
    for (int m = 0; m < members; ++m) engine.load(static_cast<std::size_t>(m), u, v);
#if defined(__SSE__)
    // The mode bits (rounding, flush, masks), not the sticky exception flags (bits 0-5).
    constexpr unsigned mode = ~0x3Fu;
    const unsigned before = _mm_getcsr() & mode;
    engine.advance(128);
    EXPECT_EQ(_mm_getcsr() & mode, before) << "the engine changed the caller's floating-point mode";
#else
    engine.advance(128);
#endif
    std::vector<float> out(cells);
    engine.capture({false, true});
    engine.read_captured(static_cast<std::size_t>(members - 1), nullptr, out.data());
    const auto subnormal = std::count_if(
        out.begin(), out.end(), [](float x) { return std::fpclassify(x) == FP_SUBNORMAL; });
    EXPECT_EQ(subnormal, 0);
  }
}
