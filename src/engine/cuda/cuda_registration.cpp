// The CUDA backend's entry in the registry. Built with or without CUDA: without it, every query
// answers with the reason (cuda_unavailable.cpp), so `--backend cuda` and `info` say why.
#include <cstdio>
#include <string>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/registry.hpp"

namespace grayscott::cuda {

namespace {

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  int preference() const override { return 100; }
  bool on_device() const override { return true; }
  int device_count() const override { return cuda::device_count(); }
  bool available(int device, std::string* why) const override {
    return cuda::available(why, device);
  }
  std::vector<std::string> describe() const override {
    std::string why;
    if (!cuda::available(&why, 0)) return {"unavailable: " + why};
    std::vector<std::string> lines;
    for (const auto& d : cuda::devices()) {
      char line[512];
      std::snprintf(line, sizeof line, "device %d: %s, %.1f GiB, compute capability %d.%d",
                    d.ordinal, d.name.c_str(), static_cast<double>(d.memory_bytes) / (1u << 30),
                    d.major, d.minor);
      lines.emplace_back(line);
    }
    return lines;
  }
  std::uint64_t free_memory(int device) const override { return cuda::free_memory(device); }
  std::string refuses(const Problem& problem, std::size_t members) const override {
    return cuda::refuses(problem.grid, members);
  }
  std::string refuses_blocks(const Problem& problem) const override {
    return cuda::refuses_blocks(problem.grid);
  }
  std::size_t members_per_engine(const Problem&) const override { return max_members; }
  // One launch fuses a fixed number of steps whatever the grid (launch_plan.hpp).
  int default_fuse_steps(const Grid&, Precision, int, std::size_t) const override { return 0; }
  // One exchange per step: deeper halos have not been measured on a GPU yet.
  int default_halo_depth(const Grid&, Precision, int) const override { return 1; }
  CopyBandwidth copy_bandwidth(const EngineOptions& options) const override {
    return {cuda::copy_bandwidth(options.device),
            "device-to-device copy on CUDA device " + std::to_string(options.device)};
  }
  ArithmeticPeak arithmetic_peak(const EngineOptions& options, Precision precision) const override {
    return {cuda::arithmetic_peak(options.device, precision == Precision::Double),
            "chains of fused multiply-adds compiled as the engine, every thread of CUDA device " +
                std::to_string(options.device)};
  }
  std::string_view mpi_device_memory() const override { return "cuda"; }

  std::unique_ptr<Engine<float>> make_engine(std::type_identity<float>, const Problem& problem,
                                             std::span<const Parameters> member_params,
                                             const EngineOptions& options) const override {
    return cuda::make_engine<float>(problem, member_params, options);
  }
  std::unique_ptr<Engine<double>> make_engine(std::type_identity<double>, const Problem& problem,
                                              std::span<const Parameters> member_params,
                                              const EngineOptions& options) const override {
    return cuda::make_engine<double>(problem, member_params, options);
  }
  std::unique_ptr<SubdomainStepper<float>> make_subdomain(
      std::type_identity<float>, const Problem& problem, const LocalLayout& layout,
      GlobalEdges edges, const SubdomainOptions& options) const override {
    return cuda::make_subdomain<float>(problem, layout, edges, options.device,
                                       options.messages_in_device_memory);
  }
  std::unique_ptr<SubdomainStepper<double>> make_subdomain(
      std::type_identity<double>, const Problem& problem, const LocalLayout& layout,
      GlobalEdges edges, const SubdomainOptions& options) const override {
    return cuda::make_subdomain<double>(problem, layout, edges, options.device,
                                        options.messages_in_device_memory);
  }
};

}  // namespace

const Backend& registered_backend() {
  static const CudaBackend backend;
  return backend;
}

}  // namespace grayscott::cuda
