// The CUDA engine on volumes: the streaming kernel and the one-thread-per-cell kernel bitwise equal
// to each other and to the plain host loop over the shared per-cell functions, batches of members
// with their own rates, every cell written and captured, and the float64 reference within a
// tolerance. Tests skip, saying why, where there is no device.
#include <gtest/gtest.h>

#include <limits>
#include <tuple>

#include "engine/cpu/subnormals.hpp"
#include "gpu_test_support.hpp"
#include "volume_test_support.hpp"

using namespace grayscott;
using namespace grayscott::testing;

namespace {

// Runs the CUDA engine for `steps` from `starts` (one member each, with `members`' rates), each
// device buffer poisoned with NaN first; returns every member's u and v, member after member.
template <class Real>
Fields<Real> run_gpu_volume(const Problem& problem, const std::vector<Parameters>& members,
                            const std::vector<reference::Volume>& starts, std::int64_t steps,
                            int fuse) {
  EngineOptions options;
  options.backend = "cuda";
  options.fuse_steps = fuse;
  auto engine = make_engine<Real>(problem, members, options);
  EXPECT_EQ(engine->backend(), "cuda");
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  const std::vector<Real> poison(cells, nan);
  for (std::size_t m = 0; m < members.size(); ++m) engine->load(m, poison, poison);
  engine->advance(1);  // the other ping-pong buffer: NaN everywhere
  engine->capture({true, true});
  std::vector<Real> sink(cells);
  engine->read_captured(0, sink.data(), sink.data());
  for (std::size_t m = 0; m < members.size(); ++m) {
    engine->load(m, to_precision<Real>(starts[m].u), to_precision<Real>(starts[m].v));
  }
  engine->advance(steps);
  engine->capture({true, true});
  Fields<Real> out{std::vector<Real>(members.size() * cells, nan),
                   std::vector<Real>(members.size() * cells, nan)};
  for (std::size_t m = 0; m < members.size(); ++m) {
    engine->read_captured(m, out.u.data() + m * cells, out.v.data() + m * cells);
  }
  const auto view = engine->state();
  EXPECT_EQ(view.member_stride, cells);
  return out;
}

template <class Real>
Fields<Real> run_host_volume(const Problem& problem, const std::vector<Parameters>& members,
                             const std::vector<reference::Volume>& starts, std::int64_t steps) {
  const cpu::FlushSubnormals<Real> flush;  // as the kernels (nvcc --ftz=true)
  Fields<Real> out;
  for (std::size_t m = 0; m < members.size(); ++m) {
    auto u = to_precision<Real>(starts[m].u);
    auto v = to_precision<Real>(starts[m].v);
    host_volume_steps<Real>(problem, members[m], u, v, steps);
    out.u.insert(out.u.end(), u.begin(), u.end());
    out.v.insert(out.v.end(), v.begin(), v.end());
  }
  return out;
}

using VolumeCase = std::tuple<Stencil, Boundary, VolumeShape>;

std::string volume_case_name(const ::testing::TestParamInfo<VolumeCase>& info) {
  const auto& [stencil, boundary, shape] = info.param;
  std::string name = stencil.name() + "_" + std::string(to_string(boundary)) + "_" + shape.text();
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

template <class Real>
void check_bitwise(const VolumeCase& c) {
  const auto& [stencil, boundary, shape] = c;
  const Problem problem = volume_problem(shape, stencil, boundary, precision_of<Real>());
  const std::vector<Parameters> members = {problem.params, {0.04, 0.065, 0.15, 0.08, 0.4}};
  std::vector<reference::Volume> starts;
  for (std::uint32_t seed : {5u, 6u}) {
    starts.push_back(varied_volume(shape.depth, shape.rows, shape.cols, seed));
  }
  constexpr std::int64_t steps = 23;
  const auto expected = run_host_volume<Real>(problem, members, starts, steps);
  for (int fuse : {1, 0}) {
    SCOPED_TRACE(fuse == 1 ? "one thread per cell" : "streaming");
    const auto got = run_gpu_volume<Real>(problem, members, starts, steps, fuse);
    ASSERT_EQ(count_non_finite(got.u), 0u) << "cells left unwritten (NaN poison)";
    ASSERT_EQ(count_non_finite(got.v), 0u) << "cells left unwritten (NaN poison)";
    EXPECT_EQ(first_bitwise_difference(got.u, expected.u), -1);
    EXPECT_EQ(first_bitwise_difference(got.v, expected.v), -1);
  }
}

}  // namespace

class CudaVolume : public ::testing::TestWithParam<VolumeCase> {};

TEST_P(CudaVolume, BothKernelsEqualHostLoopBitwiseFloat) {
  GRAYSCOTT_REQUIRE_GPU();
  check_bitwise<float>(GetParam());
}
TEST_P(CudaVolume, BothKernelsEqualHostLoopBitwiseDouble) {
  GRAYSCOTT_REQUIRE_GPU();
  check_bitwise<double>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    StencilsBoundariesShapes, CudaVolume,
    ::testing::Combine(::testing::Values(Stencil::seven_point(), Stencil::nineteen_point()),
                       ::testing::Values(Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed),
                       ::testing::Values(VolumeShape{2, 3, 4}, VolumeShape{3, 5, 7},
                                         VolumeShape{5, 37, 70}, VolumeShape{40, 70, 90})),
    volume_case_name);

// A periodic cube, 100 steps, against the float64 reference.
TEST(CudaVolumeEngine, SeedRunMatchesFloat64Reference) {
  GRAYSCOTT_REQUIRE_GPU();
  for (const Stencil& stencil : {Stencil::seven_point(), Stencil::nineteen_point()}) {
    SCOPED_TRACE(stencil.name());
    const Problem problem =
        volume_problem({32, 32, 32}, stencil, Boundary::Periodic, Precision::Double);
    reference::Volume start = varied_volume(32, 32, 32, 9);
    const auto got = run_gpu_volume<double>(problem, {problem.params}, {start}, 100, 0);
    const reference::Model3 model = to_reference3(problem);
    for (int s = 0; s < 100; ++s) reference::step(model, start);
    EXPECT_LE(relative_l2(got.u, start.u), 1e-12);
    EXPECT_LE(relative_l2(got.v, start.v), 1e-12);
  }
}
