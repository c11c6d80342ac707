#include "pipeline/state_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/registry.hpp"
#include "io/files/memory.hpp"
#include "io/files/output_path.hpp"

namespace grayscott::pipeline {

std::uint64_t available_memory_for(const Backend& backend, int device) {
  return backend.on_device() ? backend.free_memory(device) : io::available_memory();
}

void check_state_fits(const Problem& problem, std::size_t members, const EngineOptions& options,
                      int blocks_here) {
  const Backend& backend = *choose_backend(options, problem, members).backend;
  const double element = problem.precision == Precision::Single ? 4.0 : 8.0;
  const int sharing = std::max(blocks_here, 1);
  // In floating point: an absurd grid must not wrap around to a small number.
  const double needed = 4.0 * element * static_cast<double>(members) *
                        static_cast<double>(sharing) * static_cast<double>(problem.grid.depth) *
                        static_cast<double>(problem.grid.rows) *
                        static_cast<double>(problem.grid.cols);
  const std::uint64_t available = available_memory_for(backend, options.device);
  if (available == 0 || needed <= static_cast<double>(available)) return;
  const std::uint64_t bytes = needed >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(needed);
  const std::string cells = problem.grid.text() + " cells (" +
                            std::string(to_string(problem.precision)) + " precision" +
                            (members > 1 ? ", " + std::to_string(members) + " members" : "") + ")";
  const std::string what = blocks_here == 0 ? "the state of " + cells + " needs "
                           : sharing == 1
                               ? "the state of this rank's block of " + cells + " needs "
                               : "the states of the blocks of " + std::to_string(sharing) +
                                     " ranks on this node, each of up to " + cells + ", need ";
  throw OutOfMemory(std::string(problem.grid.volume() ? "depth x rows x cols" : "rows x cols") +
                    ": " + what + io::format_bytes(bytes) + " of " +
                    (backend.on_device() ? "device" : "host") + " memory, and " +
                    io::format_bytes(available) + " is available");
}

}  // namespace grayscott::pipeline
