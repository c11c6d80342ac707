// Helpers for the GPU tests: skipping without a device, and running the CUDA and CPU engines on
// the same problem from the same state.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "engine/engine.hpp"
#include "engine_test_support.hpp"

// Skips the test, saying why, when this build or this machine cannot run CUDA.
#define GRAYSCOTT_REQUIRE_GPU()                                        \
  do {                                                                 \
    std::string gpu_missing_reason;                                    \
    if (!::grayscott::cuda::available(&gpu_missing_reason)) {          \
      GTEST_SKIP() << "no usable CUDA device: " << gpu_missing_reason; \
    }                                                                  \
  } while (0)

namespace grayscott::testing {

template <class Real>
std::vector<Real> to_real(const std::vector<double>& x) {
  return {x.begin(), x.end()};
}

template <class Real>
constexpr Precision precision_of() {
  return sizeof(Real) == sizeof(float) ? Precision::Single : Precision::Double;
}

inline const Stencil& custom_stencil() {
  static const Stencil s = Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15});
  return s;
}

template <class Real>
struct Fields {
  std::vector<Real> u, v;
};

struct GpuRunOptions {
  int fuse = 0;
  std::int64_t chunk = 0;  // steps per advance() call; 0 = all at once
  bool poison = true;
};

// Runs the CUDA engine for `steps` from `start`. With `poison`, every device buffer the run
// writes (both ping-pong buffers, the staging buffers) and the host outputs hold NaN before the
// real run, so a cell the kernels or copies miss shows up as NaN.
template <class Real>
Fields<Real> run_gpu(const Problem& problem, const reference::State& start, std::int64_t steps,
                     const GpuRunOptions& run = {}) {
  EngineOptions options;
  options.backend = "cuda";
  options.fuse_steps = run.fuse;
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<Real>(problem, params, options);
  EXPECT_EQ(engine->backend(), "cuda");
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  if (run.poison) {
    const std::vector<Real> poison(cells, nan);
    engine->load(0, poison, poison);
    engine->advance(1);             // the other ping-pong buffer: NaN everywhere
    engine->capture({true, true});  // the staging and pinned buffers: NaN
    std::vector<Real> sink(cells);
    engine->read_captured(0, sink.data(), sink.data());
  }
  engine->load(0, to_real<Real>(start.u), to_real<Real>(start.v));
  const std::int64_t chunk = run.chunk > 0 ? run.chunk : steps;
  for (std::int64_t done = 0; done < steps; done += chunk)
    engine->advance(std::min(chunk, steps - done));
  engine->capture({true, true});
  Fields<Real> out{std::vector<Real>(cells, nan), std::vector<Real>(cells, nan)};
  engine->read_captured(0, out.u.data(), out.v.data());
  return out;
}

template <class Real>
Fields<Real> run_cpu(const Problem& problem, const reference::State& start, std::int64_t steps) {
  EngineOptions options;
  options.backend = "cpu";
  const Parameters params[1] = {problem.params};
  cpu::CpuEngine<Real> engine(problem, params, options);
  engine.load(0, to_real<Real>(start.u), to_real<Real>(start.v));
  engine.advance(steps);
  engine.capture({true, true});
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  Fields<Real> out{std::vector<Real>(cells), std::vector<Real>(cells)};
  engine.read_captured(0, out.u.data(), out.v.data());
  return out;
}

template <class Real>
std::vector<double> to_double(const std::vector<Real>& x) {
  return {x.begin(), x.end()};
}

template <class Real>
std::size_t count_non_finite(const std::vector<Real>& x) {
  std::size_t n = 0;
  for (Real value : x) n += std::isfinite(value) ? 0 : 1;
  return n;
}

}  // namespace grayscott::testing
