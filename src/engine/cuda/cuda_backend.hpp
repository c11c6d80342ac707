// The CUDA backend's entry points, behind its registry entry (cuda_registration.cpp) and seen by
// its tests. When the build has no CUDA, cuda_unavailable.cpp implements them by saying so.
#pragma once

#include <cstdint>
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

// True when this build has CUDA and device `ordinal` runs its kernels; otherwise false with the
// reason in `why`. Creates a context on that device only.
bool available(std::string* why, int ordinal = 0);
// The devices seen, counted without creating a context (0 when none, or no CUDA).
int device_count();
// The devices seen; throws std::runtime_error saying why there are none.
std::vector<DeviceInfo> devices();
// The free memory of device `ordinal`, in bytes.
std::uint64_t free_memory(int ordinal);

// The launch limits of one engine: empty when `members` members of `grid` fit, otherwise why not
// (cuda_limits.cpp, plain host code: the same answer with or without a GPU).
std::string refuses(const Grid& grid, std::size_t members);
// Empty when a block of `grid` split over MPI ranks can be stepped on a device, otherwise why not
// (cuda_limits.cpp): only a plane's blocks exist.
std::string refuses_blocks(const Grid& grid);
// The most members one engine launches at once.
inline constexpr std::size_t max_members = 65535;
// The most columns: the kernels' int column index, plus a fused region's margin, stays below
// INT_MAX.
inline constexpr std::int64_t max_cols = 2147483647 - 256;
// The most planes of a volume: the kernels' int plane index, two planes beyond it included, stays
// below INT_MAX (with the same margin as the columns).
inline constexpr std::int64_t max_depth = 2147483647 - 256;

// Device-to-device copy bandwidth of device `ordinal` in bytes/s (a STREAM-like copy, read + write
// counted), the roofline the benchmark reports against.
double copy_bandwidth(int ordinal);

// Floating-point operations per second of device `ordinal` in float (or double): every thread of a
// full device runs independent chains of x = x * m + a, each a fused multiply-add as the kernels
// write them (two operations), the arithmetic roofline the benchmark reports against.
double arithmetic_peak(int ordinal, bool double_precision);

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
