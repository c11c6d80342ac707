// The CUDA backend's queries: is CUDA usable here, which devices, how fast is a device's memory.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_support.cuh"
#include "model/cell_update.hpp"

namespace grayscott::cuda {

namespace {

// Eight independent chains of x = x * m + a per thread, each a fused multiply-add (multiply_add(),
// as the kernels write them): a full device of such threads keeps every arithmetic unit busy.
constexpr int peak_chains = 8;
template <class Real>
__global__ void multiply_add_chains(Real* out, int iterations, Real m, Real a) {
  const unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  Real x[peak_chains];
#pragma unroll
  for (int k = 0; k < peak_chains; ++k) x[k] = static_cast<Real>(index % 64 + k) * Real(1e-3);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < peak_chains; ++k) x[k] = multiply_add(x[k], m, a);
  }
  Real sum = 0;
#pragma unroll
  for (int k = 0; k < peak_chains; ++k) sum += x[k];
  out[index] = sum;  // stored, so that no chain is dead code
}

// An empty kernel: asking for its attributes tells whether this build has code the device runs.
__global__ void probe_kernel() {}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Why cudaGetDeviceCount failed, in words a user can act on.
std::string describe_failure(cudaError_t status) {
  (void)cudaGetLastError();
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  if (driver == 0) return std::string("no NVIDIA driver found (") + cudaGetErrorName(status) + ")";
  if (status == cudaErrorInsufficientDriver) {
    return "the NVIDIA driver supports CUDA " + version_text(driver) + ", older than the CUDA " +
           version_text(runtime) + " this grayscott was built with";
  }
  if (status == cudaErrorNoDevice) return "no CUDA device found";
  return cudaGetErrorString(status);
}

// The number of devices, or the reason there are none (empty when count > 0).
int count_devices(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = describe_failure(status);
    return 0;
  }
  if (count == 0) why = "no CUDA device found";
  return count;
}

// Empty when device `ordinal` (already current) runs this build's kernels, else why not.
std::string kernel_problem(int ordinal) {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, probe_kernel);
  if (status == cudaSuccess) return {};
  (void)cudaGetLastError();
  cudaDeviceProp p{};
  (void)cudaGetDeviceProperties(&p, ordinal);
  return "device " + std::to_string(ordinal) + " (" + p.name + ", compute capability " +
         std::to_string(p.major) + "." + std::to_string(p.minor) +
         ") cannot run this build's kernels (" + cudaGetErrorString(status) +
         "); rebuild with CMAKE_CUDA_ARCHITECTURES naming it";
}

}  // namespace

namespace detail {

int select_device(int ordinal) {
  std::string why;
  const int count = count_devices(why);
  if (count == 0) throw std::runtime_error("--backend cuda: " + why);
  if (ordinal < 0 || ordinal >= count) {
    throw InvalidInput("--device " + std::to_string(ordinal) + ": no such CUDA device (" +
                       std::to_string(count) + " found, numbered from 0)");
  }
  check(cudaSetDevice(ordinal), "selecting the device");
  const std::string problem = kernel_problem(ordinal);
  if (!problem.empty()) throw std::runtime_error("--backend cuda: " + problem);
  return ordinal;
}

}  // namespace detail

bool available(std::string* why, int ordinal) {
  std::string reason;
  const int count = count_devices(reason);
  if (count > 0 && (ordinal < 0 || ordinal >= count)) {
    reason = "no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) +
             " found, numbered from 0)";
  } else if (count > 0) {
    const cudaError_t status = cudaSetDevice(ordinal);
    reason = status == cudaSuccess ? kernel_problem(ordinal) : describe_failure(status);
  }
  if (why) *why = reason;
  return reason.empty();
}

int device_count() {
  std::string why;
  return count_devices(why);
}

std::uint64_t free_memory(int ordinal) {
  detail::select_device(ordinal);
  std::size_t free_bytes = 0, total_bytes = 0;
  detail::check(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free device memory");
  return free_bytes;
}

std::vector<DeviceInfo> devices() {
  std::string why;
  const int count = count_devices(why);
  if (count == 0) throw std::runtime_error("CUDA: " + why);
  std::vector<DeviceInfo> list;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    detail::check(cudaGetDeviceProperties(&p, d), "reading device properties");
    list.push_back({d, p.name, p.totalGlobalMem, p.major, p.minor});
  }
  return list;
}

double copy_bandwidth(int ordinal) {
  detail::select_device(ordinal);
  // Two buffers well beyond the L2 cache, so the copy runs from and to device memory.
  std::size_t free_bytes = 0, total_bytes = 0;
  detail::check(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free device memory");
  const std::size_t bytes = std::min<std::size_t>(std::size_t(512) << 20, free_bytes / 4);
  detail::DeviceBuffer<unsigned char> source(bytes), target(bytes);
  detail::Stream stream;
  detail::check(cudaMemsetAsync(source.data(), 1, bytes, stream.get()), "filling the copy source");
  detail::Event start(true), stop(true);
  auto copy = [&] {
    detail::check(cudaMemcpyAsync(target.data(), source.data(), bytes, cudaMemcpyDeviceToDevice,
                                  stream.get()),
                  "copying for the bandwidth probe");
  };
  for (int i = 0; i < 3; ++i) copy();  // warm-up
  std::vector<float> milliseconds;
  for (int i = 0; i < 15; ++i) {
    detail::check(cudaEventRecord(start.get(), stream.get()), "timing the copy");
    copy();
    detail::check(cudaEventRecord(stop.get(), stream.get()), "timing the copy");
    detail::check(cudaEventSynchronize(stop.get()), "timing the copy");
    float ms = 0;
    detail::check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "timing the copy");
    milliseconds.push_back(ms);
  }
  std::nth_element(milliseconds.begin(), milliseconds.begin() + 7, milliseconds.end());
  const double median_s = static_cast<double>(milliseconds[7]) * 1e-3;
  return 2.0 * static_cast<double>(bytes) / median_s;  // read + write
}

template <class Real>
double arithmetic_peak_of(int ordinal) {
  detail::select_device(ordinal);
  cudaDeviceProp p{};
  detail::check(cudaGetDeviceProperties(&p, ordinal), "reading device properties");
  constexpr int threads_per_block = 256;
  const int blocks = p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / threads_per_block);
  const std::size_t threads = static_cast<std::size_t>(blocks) * threads_per_block;
  // float: 2 x 8 x 4096 operations per thread, some 1e13 in all on a large GPU, milliseconds.
  const int iterations = sizeof(Real) == 4 ? 4096 : 512;
  detail::DeviceBuffer<Real> out(threads);
  detail::Stream stream;
  detail::Event start(true), stop(true);
  auto launch = [&] {
    // x tends to a / (1 - m) = 1: no overflow, no subnormal numbers.
    multiply_add_chains<Real><<<blocks, threads_per_block, 0, stream.get()>>>(
        out.data(), iterations, Real(0.75), Real(0.25));
    detail::check(cudaGetLastError(), "launching the arithmetic peak probe");
  };
  launch();  // warm-up
  std::vector<float> milliseconds;
  for (int i = 0; i < 7; ++i) {
    detail::check(cudaEventRecord(start.get(), stream.get()), "timing the arithmetic probe");
    launch();
    detail::check(cudaEventRecord(stop.get(), stream.get()), "timing the arithmetic probe");
    detail::check(cudaEventSynchronize(stop.get()), "timing the arithmetic probe");
    float ms = 0;
    detail::check(cudaEventElapsedTime(&ms, start.get(), stop.get()),
                  "timing the arithmetic probe");
    milliseconds.push_back(ms);
  }
  const double best_s =
      static_cast<double>(*std::min_element(milliseconds.begin(), milliseconds.end())) * 1e-3;
  return 2.0 * peak_chains * static_cast<double>(iterations) * static_cast<double>(threads) /
         best_s;
}

double arithmetic_peak(int ordinal, bool double_precision) {
  return double_precision ? arithmetic_peak_of<double>(ordinal)
                          : arithmetic_peak_of<float>(ordinal);
}

}  // namespace grayscott::cuda
