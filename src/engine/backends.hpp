// What the pipeline asks of the backends without naming one: blocks of a grid split over MPI
// ranks, whether a device is there, how much memory it has, and the CPU's fuse depth. The
// factories behind engine.hpp's make_engine and these are the only places that know the backends.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "engine/subdomain.hpp"
#include "model/model.hpp"

namespace grayscott {

struct SubdomainOptions {
  bool on_device = false;                  // false: the CPU
  int threads = 1;                         // CPU: OpenMP threads
  int device = 0;                          // device ordinal
  bool messages_in_device_memory = false;  // device: halos handed to MPI in device memory
};

// This process's block of a grid split over processes.
template <class Real>
std::unique_ptr<SubdomainStepper<Real>> make_subdomain(const Problem& problem,
                                                       const LocalLayout& layout, GlobalEdges edges,
                                                       const SubdomainOptions& options);

// Whether a device backend is usable here (otherwise false, with the reason in `why`).
bool device_available(std::string* why);
// The devices this process sees (0 when none).
int device_count();
// The memory of the smallest device this process sees, in bytes; 0 when there is none.
std::uint64_t smallest_device_memory();
// Steps the CPU engine fuses per pass over `grid` (`members` of it) with `threads` threads, by
// default.
int cpu_fuse_depth(const Grid& grid, Precision precision, int threads, std::size_t members = 1);

}  // namespace grayscott
