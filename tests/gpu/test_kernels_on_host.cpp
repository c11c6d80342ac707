// The CUDA kernels' source run on the host, where no GPU is (gpu/kernel_emulation.hpp), checked
// bitwise against the CPU engine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/kernel_emulation.hpp"
// (the kernels first: the emulation's macros must not reach other headers)
#include "engine/cpu/cpu_engine.hpp"
#include "engine_test_support.hpp"

using namespace grayscott;
namespace kernels = grayscott::cuda::detail;

namespace {

using kernel_emulation::launch;

struct Batch {
  std::vector<float> u, v;  // members * cells
};

// The engine's launch sequence for `steps` steps, `fuse` per launch, from NaN-poisoned outputs.
template <StencilKind K, Boundary B>
Batch run_kernels(const Problem& problem, const std::vector<Parameters>& members,
                  const std::vector<reference::State>& starts, int steps, int fuse) {
  const int rows = static_cast<int>(problem.grid.rows), cols = static_cast<int>(problem.grid.cols);
  const std::size_t cells = problem.grid.cells(), count = members.size();
  std::vector<float> u[2], v[2];
  for (int b = 0; b < 2; ++b) {
    u[b].assign(count * cells, NAN);
    v[b].assign(count * cells, NAN);
  }
  for (std::size_t m = 0; m < count; ++m) {
    std::copy(starts[m].u.begin(), starts[m].u.end(), u[0].begin() + m * cells);
    std::copy(starts[m].v.begin(), starts[m].v.end(), v[0].begin() + m * cells);
  }
  std::vector<Coefficients<float>> coefficients;
  for (const auto& p : members) coefficients.push_back(Coefficients<float>::from(p));
  kernels::StencilWeights<float> weights{};
  for (int k = 0; k < 9; ++k) weights.w[k] = static_cast<float>(problem.stencil.weights[k]);
  int current = 0;
  for (int left = steps; left > 0;) {
    const int k = std::min(fuse, left);
    const kernels::StepArgs<float> args{u[current].data(),
                                        v[current].data(),
                                        u[1 - current].data(),
                                        v[1 - current].data(),
                                        coefficients.data(),
                                        weights,
                                        rows,
                                        cols};
    const auto z = static_cast<unsigned>(count);
    if (k == 1) {
      launch({kernels::blocks(cols, kernels::step_block_x),
              kernels::blocks(rows, kernels::step_block_y), z},
             {kernels::step_block_x, kernels::step_block_y, 1},
             [&] { kernels::step_kernel<K, B, float>(args); });
    } else {
      const int out_w = kernels::fused_region_w - 2 * k, out_h = kernels::fused_region_h - 2 * k;
      launch({kernels::blocks(cols, out_w), kernels::blocks(rows, out_h), z},
             {kernels::fused_block_x, kernels::fused_block_y, 1},
             [&] { kernels::fused_kernel<K, B, float>(args, k); });
    }
    current = 1 - current;
    left -= k;
  }
  return {u[current], v[current]};
}

Batch run_cpu(const Problem& problem, const std::vector<Parameters>& members,
              const std::vector<reference::State>& starts, int steps) {
  cpu::CpuEngine<float> engine(problem, members, {BackendKind::Cpu, 1, 0, 0});
  for (std::size_t m = 0; m < members.size(); ++m) {
    engine.load(m, std::vector<float>(starts[m].u.begin(), starts[m].u.end()),
                std::vector<float>(starts[m].v.begin(), starts[m].v.end()));
  }
  engine.advance(steps);
  engine.capture({true, true});
  const std::size_t cells = problem.grid.cells();
  Batch out{std::vector<float>(members.size() * cells), std::vector<float>(members.size() * cells)};
  for (std::size_t m = 0; m < members.size(); ++m) {
    engine.read_captured(m, out.u.data() + m * cells, out.v.data() + m * cells);
  }
  return out;
}

std::int64_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return static_cast<std::int64_t>(i);
  }
  return -1;
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
        Problem problem;
        problem.grid = {rows, cols};
        problem.stencil = stencil;
        problem.boundary = boundary;
        problem.params = {0.03, 0.06, 0.2, 0.1, 0.5};
        problem.validate();
        const std::vector<Parameters> members = {problem.params, {0.04, 0.065, 0.15, 0.08, 0.4}};
        const std::vector<reference::State> starts = {
            grayscott::testing::varied_state(rows, cols, 5),
            grayscott::testing::varied_state(rows, cols, 6)};
        constexpr int steps = 7;
        const Batch expected = run_cpu(problem, members, starts, steps);
        for (int fuse : {1, 3}) {
          SCOPED_TRACE(stencil.name() + " " + std::string(to_string(boundary)) + " " +
                       std::to_string(rows) + "x" + std::to_string(cols) + " fuse " +
                       std::to_string(fuse));
          Batch got;
          kernels::dispatch(stencil.kind, boundary, [&]<StencilKind K, Boundary B>() {
            got = run_kernels<K, B>(problem, members, starts, steps, fuse);
          });
          EXPECT_EQ(first_difference(got.u, expected.u), -1);
          EXPECT_EQ(first_difference(got.v, expected.v), -1);
        }
      }
    }
  }
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
