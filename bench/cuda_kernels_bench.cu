// The fused kernel's variants side by side on one GPU: the engine's (each thread's cells strided
// down the region) and the one that takes them down a column with the rows in registers
// (engine/cuda/kernels.cuh), on the course's grid from its seed, in both precisions and at
// several fused depths. Each is timed with CUDA events over the same launches (median of
// --repeat runs), and their final states must agree bitwise, or the figure is refused.
//
// Usage: bench_cuda_kernels [--rows N] [--cols N] [--steps N] [--repeat N] [--device N]
// Prints one line per precision, depth and variant: milliseconds a run, Gcell-updates/s, and the
// ratio to the engine's kernel at that depth.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cuda/cuda_support.cuh"
#include "engine/cuda/kernels.cuh"
#include "model/initial_state.hpp"

using namespace grayscott;
namespace kernels = grayscott::cuda::detail;
using kernels::check;

namespace {

struct Options {
  int rows = 1080, cols = 1920;
  long long steps = 3200;  // 100 images of 32 steps
  int repeat = 5, device = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(name + ": expected a value");
    const long long value = std::atoll(argv[++i]);
    if (value <= 0 && name != "--device")
      throw std::invalid_argument(name + ": expected a positive integer");
    if (name == "--rows")
      o.rows = static_cast<int>(value);
    else if (name == "--cols")
      o.cols = static_cast<int>(value);
    else if (name == "--steps")
      o.steps = value;
    else if (name == "--repeat")
      o.repeat = static_cast<int>(value);
    else if (name == "--device")
      o.device = static_cast<int>(value);
    else
      throw std::invalid_argument("unknown option " + name);
  }
  return o;
}

template <class Real>
struct Result {
  double milliseconds = 0;
  std::vector<Real> v;
};

// `steps` steps of the course's problem (oono-puri, zero-flux, the seed) at `depth` steps a
// launch, with the fused kernel's variant DownColumns (the one-step kernel for depth 1).
template <class Real, bool DownColumns>
Result<Real> run(const Options& o, int depth) {
  Problem problem;
  problem.grid = {o.rows, o.cols};
  problem.validate();
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  std::vector<Real> u0(cells), v0(cells);
  fill_initial_state<Real>(problem.grid, InitialState{}, u0, v0);  // the seed
  kernels::DeviceBuffer<Real> u[2] = {kernels::DeviceBuffer<Real>(cells),
                                      kernels::DeviceBuffer<Real>(cells)};
  kernels::DeviceBuffer<Real> v[2] = {kernels::DeviceBuffer<Real>(cells),
                                      kernels::DeviceBuffer<Real>(cells)};
  const auto coefficients =
      Coefficients<Real>::from(problem.params, problem.outside, problem.stencil.kind);
  kernels::DeviceBuffer<Coefficients<Real>> device_coefficients(1);
  check(cudaMemcpy(device_coefficients.data(), &coefficients, sizeof coefficients,
                   cudaMemcpyHostToDevice),
        "uploading the coefficients");
  kernels::StencilWeights<Real> weights{};
  for (int k = 0; k < 9; ++k) weights.w[k] = static_cast<Real>(problem.stencil.weights[k]);
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "creating an event");
  check(cudaEventCreate(&stop), "creating an event");
  std::vector<double> times;
  Result<Real> result;
  for (int r = 0; r <= o.repeat; ++r) {  // run 0 warms up
    check(cudaMemcpy(u[0].data(), u0.data(), cells * sizeof(Real), cudaMemcpyHostToDevice),
          "uploading u");
    check(cudaMemcpy(v[0].data(), v0.data(), cells * sizeof(Real), cudaMemcpyHostToDevice),
          "uploading v");
    check(cudaEventRecord(start), "recording an event");
    const int parity = kernels::for_each_launch(
        o.steps, depth, 0, o.rows, o.cols, 1, [&](const kernels::Launch& plan) {
          const int p = plan.parity;
          const kernels::StepArgs<Real> args{u[p].data(), v[p].data(), u[1 - p].data(),
                                             v[1 - p].data(), device_coefficients.data(),
                                             weights,     o.rows,      o.cols};
          const dim3 grid(plan.grid.x, plan.grid.y, plan.grid.z);
          const dim3 block(plan.block.x, plan.block.y, plan.block.z);
          constexpr auto K = StencilKind::OonoPuri;
          constexpr auto B = Boundary::ZeroFlux;
          if (plan.fused())
            kernels::fused_kernel<K, B, Real, DownColumns><<<grid, block>>>(args, plan.steps);
          else
            kernels::step_kernel<K, B, Real><<<grid, block>>>(args);
          check(cudaGetLastError(), "launching a kernel");
        });
    check(cudaEventRecord(stop), "recording an event");
    check(cudaEventSynchronize(stop), "waiting for the run");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "reading the time");
    if (r > 0) times.push_back(ms);
    if (r == o.repeat) {
      result.v.resize(cells);
      check(cudaMemcpy(result.v.data(), v[parity].data(), cells * sizeof(Real),
                       cudaMemcpyDeviceToHost),
            "downloading v");
    }
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  result.milliseconds = times[times.size() / 2];
  return result;
}

template <class Real>
int compare(const Options& o, const char* precision) {
  int refused = 0;
  const double updates = static_cast<double>(o.rows) * o.cols * static_cast<double>(o.steps);
  for (int depth : {1, 2, 4, 6, 8}) {
    const Result<Real> engine = run<Real, false>(o, depth);
    std::printf("%-7s depth %d  %-13s %9.3f ms  %7.1f Gcell-updates/s\n", precision, depth,
                "engine", engine.milliseconds, updates / engine.milliseconds / 1e6);
    if (depth == 1) continue;  // the variants differ only in the fused kernel
    const Result<Real> columns = run<Real, true>(o, depth);
    const bool same =
        std::memcmp(columns.v.data(), engine.v.data(), engine.v.size() * sizeof(Real)) == 0;
    if (!same) {
      std::printf("%-7s depth %d  %-13s differs from the engine's kernel: no figure\n", precision,
                  depth, "down-columns");
      ++refused;
      continue;
    }
    std::printf("%-7s depth %d  %-13s %9.3f ms  %7.1f Gcell-updates/s  %.3fx the engine's\n",
                precision, depth, "down-columns", columns.milliseconds,
                updates / columns.milliseconds / 1e6, engine.milliseconds / columns.milliseconds);
  }
  return refused;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    check(cudaSetDevice(o.device), "selecting the device");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, o.device), "reading the device's properties");
    std::printf("%s: %dx%d, %lld steps, oono-puri, zero-flux, from the seed; median of %d runs\n",
                prop.name, o.rows, o.cols, o.steps, o.repeat);
    int refused = compare<float>(o, "single");
    refused += compare<double>(o, "double");
    return refused == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_kernels: %s\n", e.what());
    return 2;
  }
}
