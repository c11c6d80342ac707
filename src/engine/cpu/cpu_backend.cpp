// The CPU backend's entry in the registry: OpenMP threads over host memory, on every machine.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cpu/cpu_subdomain.hpp"
#include "engine/cpu/cpu_volume_block.hpp"
#include "engine/cpu/volume_engine.hpp"
#include "engine/host_buffer.hpp"
#include "engine/registry.hpp"

namespace grayscott::cpu {

namespace {

// STREAM-like copy bandwidth of the host memory with `threads` threads, read and write counted,
// best of several passes over arrays far larger than the caches.
double host_copy_bandwidth(int threads) {
  using Clock = std::chrono::steady_clock;
  // Two arrays of 256 MiB: far beyond any last-level cache, so the copy runs from memory.
  constexpr std::size_t bytes = std::size_t{256} << 20;
  HostBuffer<unsigned char> source(bytes), target(bytes);
  const auto chunk = [&](int t) {
    const std::size_t per = (bytes / static_cast<std::size_t>(threads) + 4095) / 4096 * 4096;
    const std::size_t begin = std::min(bytes, per * static_cast<std::size_t>(t));
    return std::pair{begin, std::min(bytes, begin + per) - begin};
  };
#pragma omp parallel num_threads(threads)
  {  // first touch by the thread that will copy each part
    const auto [begin, length] = chunk(omp_get_thread_num());
    std::memset(source.data() + begin, 1 + omp_get_thread_num(), length);
    std::memset(target.data() + begin, 0, length);
  }
  double best = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < 6; ++pass) {
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads)
    {
      const auto [begin, length] = chunk(omp_get_thread_num());
      std::memcpy(target.data() + begin, source.data() + begin, length);
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  // Read the copy back, so the copies are observably used and known to be complete.
  for (std::size_t i = 0; i < bytes; i += 4096) {
    if (target[i] != source[i]) throw std::runtime_error("copy bandwidth probe: the copy is wrong");
  }
  return 2.0 * static_cast<double>(bytes) / best;
}

// Independent chains of x = x * m + a in Real, each a fused multiply-add (multiply_add(), as the
// engine's kernels write them), `iterations` times over: with this file compiled as the engine is
// (-march=native), the vectoriser gives the straight-line chains the engine's vector width. Twelve
// cache lines of chains keep more operations in flight than the arithmetic units' latency times
// their throughput on current x86 and Arm cores, so the loop runs at the issue rate, from
// registers: the machine's peak, two floating-point operations per lane and instruction.
template <class Real>
__attribute__((noinline)) Real multiply_add_chains(std::int64_t iterations, Real m, Real a,
                                                   Real seed) {
  constexpr int chains = 12 * 64 / static_cast<int>(sizeof(Real));
  Real x[chains];
  for (int k = 0; k < chains; ++k) x[k] = seed + static_cast<Real>(k) * Real(1e-3);
  for (std::int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 256
    for (int k = 0; k < chains; ++k) x[k] = multiply_add(x[k], m, a);
    // Opaque to the optimiser: the loops cannot be interchanged (which would make each chain's
    // latency the limit) nor the iterations folded.
    asm("" : "+r"(a));
  }
  Real sum = 0;
  for (int k = 0; k < chains; ++k) sum += x[k];
  return sum;
}

// Floating-point operations per second of `threads` threads each running multiply_add_chains, best
// of short passes (a third of a millisecond on a current x86 core): on a machine shared with
// other work, some passes still find every core free, where passes of 0.1 s found a core taken
// and measured half the peak. At least 200 passes, and more while the best still improves (by
// 1 % within the last 100), for at most a second: on a busy machine, a few hundred passes in a
// row can all find a core taken.
template <class Real>
double host_arithmetic_peak(int threads) {
  using Clock = std::chrono::steady_clock;
  constexpr int chains = 12 * 64 / static_cast<int>(sizeof(Real));
  constexpr std::int64_t iterations = std::int64_t{1} << 16;
  double best = std::numeric_limits<double>::infinity();
  const auto probe_start = Clock::now();
  int last_improvement = 0;
  for (int pass = 0; pass < 200 || (pass - last_improvement < 100 &&
                                    Clock::now() - probe_start < std::chrono::seconds(1));
       ++pass) {
    bool finite = true;
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads) reduction(&& : finite)
    {
      // x tends to a / (1 - m) = 1: no overflow, no subnormal numbers.
      const Real sum = multiply_add_chains<Real>(iterations, Real(0.75), Real(0.25),
                                                 static_cast<Real>(omp_get_thread_num()));
      finite = std::isfinite(sum);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < 0.99 * best) last_improvement = pass;
    best = std::min(best, seconds);
    if (!finite) throw std::runtime_error("arithmetic peak probe: a chain did not converge");
  }
  return 2.0 * static_cast<double>(iterations) * chains * threads / best;
}

// A block of a grid split over MPI ranks: a plane's (CpuSubdomain) or a volume's (CpuVolumeBlock).
template <class Real>
std::unique_ptr<SubdomainStepper<Real>> make_cpu_block(const Problem& problem,
                                                       const LocalLayout& layout, GlobalEdges edges,
                                                       const SubdomainOptions& options) {
  check_block_layout(problem.grid, layout);
  if (problem.grid.volume()) {
    return std::make_unique<CpuVolumeBlock<Real>>(problem, problem.params, layout, edges,
                                                  options.threads);
  }
  return std::make_unique<CpuSubdomain<Real>>(problem, problem.params, layout, edges,
                                              options.threads);
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  int preference() const override { return 0; }
  bool on_device() const override { return false; }
  int device_count() const override { return 0; }
  bool available(int, std::string*) const override { return true; }
  std::vector<std::string> describe() const override {
    return {std::to_string(omp_get_max_threads()) + " OpenMP threads"};
  }
  std::uint64_t free_memory(int) const override { return 0; }
  std::string refuses(const Problem&, std::size_t) const override { return {}; }
  std::string refuses_blocks(const Problem&) const override { return {}; }
  std::size_t members_per_engine(const Problem&) const override {
    return std::numeric_limits<std::size_t>::max();
  }
  int default_fuse_steps(const Grid& grid, Precision precision, int threads,
                         std::size_t members) const override {
    if (grid.volume()) {
      return precision == Precision::Single
                 ? VolumeEngine<float>::automatic_fuse_steps(grid, members, threads)
                 : VolumeEngine<double>::automatic_fuse_steps(grid, members, threads);
    }
    return precision == Precision::Single
               ? CpuEngine<float>::automatic_fuse_steps(grid, members, threads)
               : CpuEngine<double>::automatic_fuse_steps(grid, members, threads);
  }
  // A block fuses the steps after each exchange, as deep as the serial engine would fuse a grid
  // of its size and as the block allows.
  int default_halo_depth(const Grid& block, Precision precision, int threads) const override {
    const int fuse = default_fuse_steps(block, precision, threads, 1);
    return static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>({fuse, block.rows, block.cols})));
  }
  CopyBandwidth copy_bandwidth(const EngineOptions& options) const override {
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    return {host_copy_bandwidth(threads),
            "memcpy of 256 MiB with " + std::to_string(threads) + " threads"};
  }
  ArithmeticPeak arithmetic_peak(const EngineOptions& options, Precision precision) const override {
    const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
    return {precision == Precision::Single ? host_arithmetic_peak<float>(threads)
                                           : host_arithmetic_peak<double>(threads),
            "chains of fused multiply-adds compiled as the engine, " + std::to_string(threads) +
                " threads"};
  }
  std::string_view mpi_device_memory() const override { return {}; }

  std::unique_ptr<Engine<float>> make_engine(std::type_identity<float>, const Problem& problem,
                                             std::span<const Parameters> member_params,
                                             const EngineOptions& options) const override {
    if (problem.grid.volume())
      return std::make_unique<VolumeEngine<float>>(problem, member_params, options);
    return std::make_unique<CpuEngine<float>>(problem, member_params, options);
  }
  std::unique_ptr<Engine<double>> make_engine(std::type_identity<double>, const Problem& problem,
                                              std::span<const Parameters> member_params,
                                              const EngineOptions& options) const override {
    if (problem.grid.volume())
      return std::make_unique<VolumeEngine<double>>(problem, member_params, options);
    return std::make_unique<CpuEngine<double>>(problem, member_params, options);
  }
  std::unique_ptr<SubdomainStepper<float>> make_subdomain(
      std::type_identity<float>, const Problem& problem, const LocalLayout& layout,
      GlobalEdges edges, const SubdomainOptions& options) const override {
    return make_cpu_block<float>(problem, layout, edges, options);
  }
  std::unique_ptr<SubdomainStepper<double>> make_subdomain(
      std::type_identity<double>, const Problem& problem, const LocalLayout& layout,
      GlobalEdges edges, const SubdomainOptions& options) const override {
    return make_cpu_block<double>(problem, layout, edges, options);
  }
};

}  // namespace

const Backend& registered_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace grayscott::cpu
