// The CPU backend's volume engine: against the float64 volume reference (reference3d.hpp) for
// both volume stencils, every boundary and both precisions on odd sizes; and bitwise against
// itself across batches, thread counts, fuse depths, freezing and chunked advances.
#include <gtest/gtest.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "engine/cpu/streaming_copy.hpp"
#include "engine/cpu/subnormals.hpp"
#include "engine/cpu/volume_engine.hpp"
#include "engine/engine.hpp"
#include "engine/registry.hpp"
#include "engine_test_support.hpp"
#include "reference/from_model.hpp"

using namespace grayscott;

namespace {

struct Shape {
  std::int64_t depth, rows, cols;
};

// Odd sizes; depth 2 (every plane at an edge); rows narrower and wider than two cache lines of
// either precision, so that the vector edge lines, the shifted last block and the one-cell ends
// are all taken.
const Shape shapes[] = {{2, 4, 6}, {3, 5, 7}, {5, 9, 13}, {4, 3, 37}, {2, 7, 70}};

Problem volume_problem(const Shape& s, const Stencil& stencil, Boundary boundary,
                       Precision precision) {
  Problem problem;
  problem.grid = {s.rows, s.cols, s.depth};
  problem.stencil = stencil;
  problem.boundary = boundary;
  problem.precision = precision;
  problem.outside = {0.7, 0.2};  // not the default: a kernel that ignores them fails
  problem.params = {0.029, 0.057, 0.16, 0.08, 1.0};
  problem.validate();
  return problem;
}

template <class Real>
std::vector<Real> to_real(const std::vector<double>& x) {
  return {x.begin(), x.end()};
}

template <class Real>
struct Fields {
  std::vector<Real> u, v;
  bool operator==(const Fields&) const = default;
};

// Each member from varied_volume(seed m + 1), `steps` steps in advances of `chunk`.
template <class Real>
std::vector<Fields<Real>> run_volume(const Problem& problem, std::span<const Parameters> members,
                                     std::int64_t steps, EngineOptions options,
                                     std::int64_t chunk = 0) {
  cpu::VolumeEngine<Real> engine(problem, members, options);
  const Grid& g = problem.grid;
  for (std::size_t m = 0; m < members.size(); ++m) {
    const auto start = varied_volume(g.depth, g.rows, g.cols, static_cast<std::uint32_t>(m + 1));
    engine.load(m, to_real<Real>(start.u), to_real<Real>(start.v));
  }
  if (chunk <= 0) chunk = steps;
  for (std::int64_t done = 0; done < steps; done += chunk)
    engine.advance(std::min(chunk, steps - done));
  engine.capture({true, true});
  std::vector<Fields<Real>> out;
  const auto cells = static_cast<std::size_t>(g.cells());
  for (std::size_t m = 0; m < members.size(); ++m) {
    Fields<Real> f{std::vector<Real>(cells, Real(-7)), std::vector<Real>(cells, Real(-7))};
    engine.read_captured(m, f.u.data(), f.v.data());
    out.push_back(std::move(f));
  }
  return out;
}

template <class Real>
Fields<Real> run_one(const Problem& problem, std::int64_t steps, EngineOptions options,
                     std::int64_t chunk = 0) {
  const Parameters params[1] = {problem.params};
  return run_volume<Real>(problem, params, steps, options, chunk).front();
}

std::string shape_text(const Shape& s) {
  return std::to_string(s.depth) + "x" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

using Case = std::tuple<StencilKind, Boundary>;

class VolumeEngineVsReference : public ::testing::TestWithParam<Case> {};

template <class Real>
void check_against_reference(const Case& c, double tolerance) {
  const auto [kind, boundary] = c;
  const Stencil stencil =
      kind == StencilKind::SevenPoint ? Stencil::seven_point() : Stencil::nineteen_point();
  constexpr std::int64_t steps = 30;
  for (const Shape& s : shapes) {
    const Problem problem = volume_problem(
        s, stencil, boundary, sizeof(Real) == 4 ? Precision::Single : Precision::Double);
    auto expected = varied_volume(s.depth, s.rows, s.cols, 1);
    const auto model = to_reference3(problem);
    for (int k = 0; k < steps; ++k) reference::step(model, expected);
    const auto got = run_one<Real>(problem, steps, {"cpu", 2, 1, 0});
    const std::string where = shape_text(s);
    EXPECT_LE(grayscott::testing::relative_l2(got.u, expected.u), tolerance) << where;
    EXPECT_LE(grayscott::testing::relative_l2(got.v, expected.v), tolerance) << where;
    EXPECT_LE(grayscott::testing::max_abs_difference(got.u, expected.u), 100 * tolerance) << where;
    EXPECT_LE(grayscott::testing::max_abs_difference(got.v, expected.v), 100 * tolerance) << where;
  }
}

TEST_P(VolumeEngineVsReference, Double) { check_against_reference<double>(GetParam(), 1e-12); }
TEST_P(VolumeEngineVsReference, Single) { check_against_reference<float>(GetParam(), 2e-6); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      std::string(std::get<0>(info.param) == StencilKind::SevenPoint ? "SevenPoint" : "Nineteen") +
      "_" + std::string(to_string(std::get<1>(info.param)));
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    StencilsAndBoundaries, VolumeEngineVsReference,
    ::testing::Combine(::testing::Values(StencilKind::SevenPoint, StencilKind::NineteenPoint),
                       ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed)),
    case_name);

// Rows wide enough that a plane's rows are stepped in several tiles (one step per pass and fused),
// against the reference.
TEST(VolumeEngine, TiledSweepsMatchTheReference) {
  for (const Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    const Shape s{3, 13, 4000};
    const Problem problem =
        volume_problem(s, Stencil::nineteen_point(), boundary, Precision::Double);
    auto expected = varied_volume(s.depth, s.rows, s.cols, 1);
    for (int k = 0; k < 6; ++k) reference::step(to_reference3(problem), expected);
    for (int fuse : {1, 2, 3}) {
      const auto got = run_one<double>(problem, 6, {"cpu", 2, fuse, 0});
      EXPECT_LE(grayscott::testing::relative_l2(got.u, expected.u), 1e-12) << fuse;
      EXPECT_LE(grayscott::testing::relative_l2(got.v, expected.v), 1e-12) << fuse;
    }
  }
}

// Depth 2, periodic: the planes below and above a plane are both the other plane. One step by hand
// on a state that is zero but for one cell of v: the seven-point Laplacian of v at the cell's
// image in the other plane is 2/6 (both of its z-neighbours are the cell), and the cells beside it
// along rows and columns wrap around the ends of a 3x4 plane.
TEST(VolumeEngine, PeriodicDepthTwoWraps) {
  Problem problem =
      volume_problem({2, 3, 4}, Stencil::seven_point(), Boundary::Periodic, Precision::Double);
  problem.params = {0.0, 0.0, 0.0, 1.0, 1.0};  // v diffuses alone, dt 1
  const Parameters params[1] = {problem.params};
  cpu::VolumeEngine<double> engine(problem, params, {"cpu", 1, 1, 0});
  std::vector<double> u(24, 0.0), v(24, 0.0);
  const auto at = [](int z, int r, int c) { return static_cast<std::size_t>((z * 3 + r) * 4 + c); };
  v[at(0, 0, 0)] = 6.0;
  engine.load(0, u, v);
  engine.advance(1);
  std::vector<double> got(24);
  ASSERT_TRUE(engine.copy_state(0, nullptr, got.data()));
  std::vector<double> expected(24, 0.0);
  expected[at(0, 0, 0)] = 0.0;  // 6 + (0 - 6) * 6 / 6
  expected[at(1, 0, 0)] = 2.0;  // both z-neighbours are the cell: 2 * 6 / 6
  expected[at(0, 2, 0)] = 1.0;  // the row before row 0 is row 2
  expected[at(0, 1, 0)] = 1.0;
  expected[at(0, 0, 3)] = 1.0;  // the column before column 0 is column 3
  expected[at(0, 0, 1)] = 1.0;
  EXPECT_EQ(got, expected);
  // And against the reference, nineteen-point and several steps.
  problem.stencil = Stencil::nineteen_point();
  problem.params = {0.03, 0.06, 0.2, 0.1, 1.0};
  auto reference_state = varied_volume(2, 3, 4, 1);
  for (int k = 0; k < 12; ++k) reference::step(to_reference3(problem), reference_state);
  const auto mine = run_one<double>(problem, 12, {"cpu", 2, 1, 0});
  EXPECT_LE(grayscott::testing::relative_l2(mine.v, reference_state.v), 1e-12);
  EXPECT_LE(grayscott::testing::relative_l2(mine.u, reference_state.u), 1e-12);
}

// A batch whose members have their own rates equals each member run alone, bitwise; and
// set_rates between advances equals the member run with its new rates from then on.
TEST(VolumeEngine, BatchMembersEqualSingleRuns) {
  for (const StencilKind kind : {StencilKind::SevenPoint, StencilKind::NineteenPoint}) {
    const Stencil stencil =
        kind == StencilKind::SevenPoint ? Stencil::seven_point() : Stencil::nineteen_point();
    const Problem problem = volume_problem({5, 9, 13}, stencil, Boundary::Fixed, Precision::Single);
    const std::vector<Parameters> members = {
        problem.params, {0.02, 0.05, 0.2, 0.1, 0.8}, {0.04, 0.065, 0.1, 0.05, 1.0}};
    for (int fuse : {1, 3}) {
      const auto batch = run_volume<float>(problem, members, 11, {"cpu", 2, fuse, 0});
      for (std::size_t m = 0; m < members.size(); ++m) {
        Problem alone = problem;
        alone.params = members[m];
        cpu::VolumeEngine<float> engine(alone, std::span(&members[m], 1), {"cpu", 1, 1, 0});
        const auto start = varied_volume(5, 9, 13, static_cast<std::uint32_t>(m + 1));
        engine.load(0, to_real<float>(start.u), to_real<float>(start.v));
        engine.advance(11);
        Fields<float> f{std::vector<float>(5 * 9 * 13), std::vector<float>(5 * 9 * 13)};
        engine.copy_state(0, f.u.data(), f.v.data());
        EXPECT_TRUE(f == batch[m]) << "member " << m << ", fuse " << fuse;
      }
    }
  }
  // Rates changed between advances.
  const Problem problem =
      volume_problem({3, 5, 7}, Stencil::seven_point(), Boundary::ZeroFlux, Precision::Double);
  const std::vector<Parameters> members = {problem.params, problem.params};
  const Parameters later{0.05, 0.06, 0.12, 0.07, 0.9};
  cpu::VolumeEngine<double> engine(problem, members, {"cpu", 2, 0, 0});
  const auto start = varied_volume(3, 5, 7, 1);
  for (std::size_t m = 0; m < 2; ++m) engine.load(m, start.u, start.v);
  engine.advance(4);
  engine.set_rates(1, later);
  engine.advance(5);
  std::vector<double> changed(105);
  engine.copy_state(1, nullptr, changed.data());
  auto expected = start;
  for (int k = 0; k < 4; ++k) reference::step(to_reference3(problem), expected);
  cpu::VolumeEngine<double> alone(problem, std::span(&later, 1), {"cpu", 1, 0, 0});
  alone.load(0, expected.u, expected.v);  // not the engine's state: compare within tolerance
  alone.advance(5);
  std::vector<double> v(105);
  alone.copy_state(0, nullptr, v.data());
  EXPECT_LE(grayscott::testing::relative_l2(changed, v), 1e-12);
}

// Results are bitwise the same for 1, 2 and 3 threads, for any chunking of the advances, and for
// every fuse depth against one step per pass.
TEST(VolumeEngine, BitwiseIdenticalForAnyThreadCountChunkingAndFuseDepth) {
  for (const Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    // Wide rows: several tiles of rows per plane in the one-step and the fused sweeps.
    for (const Shape& s : {Shape{7, 9, 37}, Shape{2, 5, 70}, Shape{12, 3, 5}, Shape{3, 13, 4000},
                           Shape{5, 64, 2000}}) {
      const Problem problem =
          volume_problem(s, Stencil::nineteen_point(), boundary, Precision::Single);
      const auto one = run_one<float>(problem, 13, {"cpu", 1, 1, 0});
      const std::string where = shape_text(s) + " " + std::string(to_string(boundary));
      for (int threads : {1, 2, 3}) {
        EXPECT_TRUE(run_one<float>(problem, 13, {"cpu", threads, 1, 0}) == one)
            << where << ", " << threads << " threads";
        EXPECT_TRUE(run_one<float>(problem, 13, {"cpu", threads, 1, 0}, 4) == one)
            << where << ", " << threads << " threads, chunks of 4";
        for (int fuse : {2, 3, 5, 16}) {
          EXPECT_TRUE(run_one<float>(problem, 13, {"cpu", threads, fuse, 0}) == one)
              << where << ", " << threads << " threads, fuse " << fuse;
          EXPECT_TRUE(run_one<float>(problem, 13, {"cpu", threads, fuse, 0}, 6) == one)
              << where << ", " << threads << " threads, fuse " << fuse << ", chunks of 6";
        }
      }
    }
  }
  // Double precision and the seven-point stencil, fused.
  const Problem problem =
      volume_problem({6, 5, 19}, Stencil::seven_point(), Boundary::Fixed, Precision::Double);
  const auto one = run_one<double>(problem, 10, {"cpu", 1, 1, 0});
  EXPECT_TRUE(run_one<double>(problem, 10, {"cpu", 2, 4, 0}) == one);
  EXPECT_TRUE(run_one<double>(problem, 10, {"cpu", 2, 1, 0}) == one);
}

// A frozen member keeps its state while the others go on, at every fuse depth.
TEST(VolumeEngine, FreezeKeepsAMembersState) {
  const Problem problem =
      volume_problem({4, 6, 35}, Stencil::seven_point(), Boundary::Periodic, Precision::Single);
  const std::vector<Parameters> members = {problem.params, {0.03, 0.06, 0.2, 0.1, 0.5}};
  for (int fuse : {1, 3}) {
    cpu::VolumeEngine<float> engine(problem, members, {"cpu", 2, fuse, 0});
    const auto start = varied_volume(4, 6, 35, 1);
    for (std::size_t m = 0; m < 2; ++m)
      engine.load(m, to_real<float>(start.u), to_real<float>(start.v));
    engine.advance(5);
    const auto cells = static_cast<std::size_t>(problem.grid.cells());
    std::vector<float> frozen_u(cells), frozen_v(cells);
    engine.copy_state(0, frozen_u.data(), frozen_v.data());
    std::vector<float> other_before(cells);
    engine.copy_state(1, nullptr, other_before.data());
    EXPECT_TRUE(engine.freeze(0));
    EXPECT_TRUE(engine.freeze(0)) << "freezing twice is harmless";
    EXPECT_FALSE(engine.freeze(7)) << "no such member";
    engine.advance(7);
    engine.home_state();
    std::vector<float> u(cells), v(cells), other(cells);
    engine.copy_state(0, u.data(), v.data());
    engine.copy_state(1, nullptr, other.data());
    EXPECT_EQ(u, frozen_u) << "fuse " << fuse;
    EXPECT_EQ(v, frozen_v) << "fuse " << fuse;
    EXPECT_NE(other, other_before) << "the other member went on";
    // The other member equals its run alone for 12 steps.
    Problem alone = problem;
    alone.params = members[1];
    const auto expected = run_one<float>(alone, 12, {"cpu", 1, 1, 0});
    EXPECT_EQ(other, expected.v) << "fuse " << fuse;
    // state() shows the current state after home_state(), member after member.
    const auto view = engine.state();
    EXPECT_EQ(view.member_stride, cells);
    EXPECT_FALSE(view.on_device);
    EXPECT_EQ(std::memcmp(view.v, frozen_v.data(), cells * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(view.v + cells, other.data(), cells * sizeof(float)), 0);
  }
}

// copy_state reports a non-finite value of the field it copies, and only of that field: on a small
// volume copied with ordinary stores and on one past streaming_copy_min_bytes (odd rows, most
// starting unaligned), copied with streaming stores.
TEST(VolumeEngine, CopyStateReportsANonFiniteValue) {
  for (const Shape& s : {Shape{3, 5, 7}, Shape{4, 130, 517}}) {
    const auto cells = static_cast<std::size_t>(s.depth * s.rows * s.cols);
    ASSERT_EQ(cells * sizeof(float) >= cpu::streaming_copy_min_bytes, s.rows == 130);
    const Problem problem =
        volume_problem(s, Stencil::seven_point(), Boundary::ZeroFlux, Precision::Single);
    const Parameters params[1] = {problem.params};
    const auto start = varied_volume(s.depth, s.rows, s.cols, 1);
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      for (std::size_t at : {std::size_t{0}, cells / 2 + 3, cells - 1}) {
        cpu::VolumeEngine<float> engine(problem, params, {"cpu", 2, 0, 0});
        std::vector<float> v = to_real<float>(start.v);
        v[at] = bad;
        engine.load(0, to_real<float>(start.u), v);
        std::vector<float> u_out(cells), v_out(cells);
        EXPECT_FALSE(engine.copy_state(0, nullptr, v_out.data())) << shape_text(s) << " at " << at;
        EXPECT_TRUE(engine.copy_state(0, u_out.data(), nullptr)) << "u is finite";
        EXPECT_EQ(std::memcmp(v_out.data(), v.data(), cells * sizeof(float)), 0);
        EXPECT_EQ(u_out, to_real<float>(start.u));
      }
    }
  }
}

// The backend hands out the volume engine for a volume, accepts volumes, and refuses to split one
// over MPI ranks without its planes in one line; its automatic depth for a volume is the volume
// engine's.
TEST(VolumeEngine, TheCpuBackendStepsVolumes) {
  const Problem problem =
      volume_problem({3, 5, 7}, Stencil::seven_point(), Boundary::ZeroFlux, Precision::Single);
  const Backend& cpu = find_backend("cpu");
  EXPECT_EQ(cpu.refuses(problem, 1), "");
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<float>(problem, params, {"cpu", 0, 0, 0});
  EXPECT_NE(dynamic_cast<cpu::VolumeEngine<float>*>(engine.get()), nullptr);
  EXPECT_EQ(cpu.default_fuse_steps(problem.grid, Precision::Single, 2, 1),
            cpu::VolumeEngine<float>::automatic_fuse_steps(problem.grid, 1, 2));
  try {
    (void)cpu.make_subdomain(std::type_identity<float>{}, problem, LocalLayout{}, GlobalEdges{},
                             SubdomainOptions{});
    ADD_FAILURE() << "a volume's MPI block was made";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("with its planes"), std::string::npos) << e.what();
  }
}

// float32 stepping flushes subnormal numbers (subnormals.hpp), on both paths, and leaves the
// caller's floating-point mode as it found it: a v of 1e-39 (below float's smallest normal number)
// reads as zero and its update is zero.
TEST(VolumeEngine, Float32FlushesSubnormalsAndLeavesTheCallersModeAlone) {
  if (!cpu::FlushSubnormals<float>::supported) GTEST_SKIP() << "no flushing on this architecture";
  const Problem problem =
      volume_problem({3, 5, 40}, Stencil::seven_point(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  const std::vector<float> u(cells, 1.0f), v(cells, 1e-39f);
  ASSERT_EQ(std::fpclassify(v[0]), FP_SUBNORMAL);
  for (int fuse : {1, 3}) {
    cpu::VolumeEngine<float> engine(problem, params, {"cpu", 2, fuse, 0});
    engine.load(0, u, v);
#if defined(__SSE__)
    constexpr unsigned mode = ~0x3Fu;  // the mode bits, not the sticky exception flags
    const unsigned before = _mm_getcsr() & mode;
    engine.advance(3);
    EXPECT_EQ(_mm_getcsr() & mode, before) << "the engine changed the caller's floating-point mode";
#else
    engine.advance(3);
#endif
    std::vector<float> out(cells, -1.0f);
    engine.copy_state(0, nullptr, out.data());
    EXPECT_EQ(out, std::vector<float>(cells, 0.0f)) << "fuse " << fuse;
  }
}

TEST(VolumeEngine, RejectsBadOptions) {
  const Problem problem =
      volume_problem({3, 5, 7}, Stencil::seven_point(), Boundary::ZeroFlux, Precision::Single);
  const Parameters params[1] = {problem.params};
  EXPECT_THROW(cpu::VolumeEngine<float>(problem, params, {"cpu", 0, -1, 0}), InvalidInput);
  EXPECT_THROW(cpu::VolumeEngine<float>(
                   problem, params, {"cpu", 0, cpu::VolumeEngine<float>::max_fuse_steps + 1, 0}),
               InvalidInput);
  EXPECT_THROW(cpu::VolumeEngine<float>(problem, params, {"cpu", -2, 0, 0}), InvalidInput);
  cpu::VolumeEngine<float> engine(problem, params, {"cpu", 1, 0, 0});
  const std::vector<float> wrong(10);
  EXPECT_THROW(engine.load(0, wrong, wrong), InvalidInput);
}

}  // namespace
