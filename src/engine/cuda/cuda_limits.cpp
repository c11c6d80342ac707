// The CUDA engine's launch limits, in plain host C++ so that the registry (and its tests) know
// them on a machine without a GPU.
#include <climits>
#include <string>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/launch_plan.hpp"

namespace grayscott::cuda {

std::string refuses(const Grid& grid, std::size_t members) {
  if (members > max_members) {
    return "the CUDA backend runs at most " + std::to_string(max_members) +
           " members at once, not " + std::to_string(members);
  }
  if (grid.rows > INT_MAX || grid.cols > INT_MAX || grid.cells() > INT_MAX) {
    return "the CUDA backend takes at most 2^31 - 1 cells per member";
  }
  if (detail::blocks(grid.rows, detail::step_block_y) > 65535) {  // the launch grid's y limit
    return "the CUDA backend takes at most " + std::to_string(65535 * detail::step_block_y) +
           " rows";
  }
  return {};
}

}  // namespace grayscott::cuda
