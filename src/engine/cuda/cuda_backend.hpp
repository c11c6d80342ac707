// The CUDA backend's entry points, seen by the rest of the program. When the build has no CUDA,
// cuda_unavailable.cpp implements them by saying so.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/subdomain.hpp"

namespace grayscott::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int major = 0, minor = 0;
};

// True when this build has CUDA and a usable device; otherwise false with the reason in `why`.
bool available(std::string* why);
// The devices seen; throws std::runtime_error saying why there are none.
std::vector<DeviceInfo> devices();

// Device-to-device copy bandwidth of device `ordinal` in bytes/s (a STREAM-like copy, read + write
// counted), the roofline the benchmark reports against.
double copy_bandwidth(int ordinal);

template <class Real>
std::unique_ptr<Engine<Real>> make_engine(const Problem& problem,
                                          std::span<const Parameters> member_params,
                                          const EngineOptions& options);

// One block of a grid split over processes (engine/subdomain.hpp), on device `ordinal`: the
// block stays in device memory and only halo messages leave it, through pinned host memory, or
// not at all with `messages_in_device_memory` (for an MPI library that reads device memory).
template <class Real>
std::unique_ptr<SubdomainStepper<Real>> make_subdomain(const Problem& problem,
                                                       const LocalLayout& layout, GlobalEdges edges,
                                                       int ordinal, bool messages_in_device_memory);

}  // namespace grayscott::cuda
