#include "engine/backends.hpp"

#include <algorithm>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cpu/cpu_subdomain.hpp"
#include "engine/cuda/cuda_backend.hpp"

namespace grayscott {

template <class Real>
std::unique_ptr<SubdomainStepper<Real>> make_subdomain(const Problem& problem,
                                                       const LocalLayout& layout, GlobalEdges edges,
                                                       const SubdomainOptions& options) {
  if (options.on_device) {
    return cuda::make_subdomain<Real>(problem, layout, edges, options.device,
                                      options.messages_in_device_memory);
  }
  return std::make_unique<cpu::CpuSubdomain<Real>>(problem, problem.params, layout, edges,
                                                   options.threads);
}

bool device_available(std::string* why) { return cuda::available(why); }

int device_count() {
  if (!cuda::available(nullptr)) return 0;
  return static_cast<int>(cuda::devices().size());
}

std::uint64_t smallest_device_memory() {
  if (!cuda::available(nullptr)) return 0;
  std::uint64_t smallest = UINT64_MAX;
  for (const auto& device : cuda::devices()) {
    smallest = std::min<std::uint64_t>(smallest, device.memory_bytes);
  }
  return smallest == UINT64_MAX ? 0 : smallest;
}

int cpu_fuse_depth(const Grid& grid, Precision precision, int threads, std::size_t members) {
  return precision == Precision::Single
             ? cpu::CpuEngine<float>::automatic_fuse_steps(grid, members, threads)
             : cpu::CpuEngine<double>::automatic_fuse_steps(grid, members, threads);
}

template std::unique_ptr<SubdomainStepper<float>> make_subdomain(const Problem&, const LocalLayout&,
                                                                 GlobalEdges,
                                                                 const SubdomainOptions&);
template std::unique_ptr<SubdomainStepper<double>> make_subdomain(const Problem&,
                                                                  const LocalLayout&, GlobalEdges,
                                                                  const SubdomainOptions&);

}  // namespace grayscott
