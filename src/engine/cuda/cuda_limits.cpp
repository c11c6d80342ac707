// The CUDA engine's launch limits, in plain host C++ so that the registry (and its tests) know
// them on a machine without a GPU.
#include <climits>
#include <string>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/launch_plan.hpp"

namespace grayscott::cuda {

std::string refuses(const Grid& grid, std::size_t members) {
  if (grid.volume()) return "the CUDA backend steps planes only (depth 1) in this build";
  if (members > max_members) {
    return "the CUDA backend runs at most " + std::to_string(max_members) +
           " members at once, not " + std::to_string(members);
  }
  // The kernels index a cell by int row and column (and a 64-bit offset, so a member may hold
  // more than 2^31 cells, up to the memory): a column and its neighbours, up to a fused region
  // beyond the last, must stay below INT_MAX.
  if (grid.cols > max_cols) {
    return "the CUDA backend takes at most " + std::to_string(max_cols) + " columns";
  }
  if (detail::blocks(grid.rows, detail::step_block_y) > 65535) {  // the launch grid's y limit
    return "the CUDA backend takes at most " + std::to_string(65535 * detail::step_block_y) +
           " rows";
  }
  return {};
}

}  // namespace grayscott::cuda
