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
  // The kernels index a cell by int plane, row and column (and a 64-bit offset, so a member may
  // hold more than 2^31 cells, up to the memory): a column and its neighbours, up to a fused region
  // beyond the last, must stay below INT_MAX.
  if (grid.cols > max_cols) {
    return "the CUDA backend takes at most " + std::to_string(max_cols) + " columns";
  }
  // The one-step kernels (a plane's and a volume's) need the most row blocks: step_block_y rows
  // each, where a volume's streaming kernel has volume_block_y.
  static_assert(detail::volume_block_y >= detail::step_block_y);
  if (detail::blocks(grid.rows, detail::step_block_y) > 65535) {  // the launch grid's y limit
    return "the CUDA backend takes at most " + std::to_string(65535 * detail::step_block_y) +
           " rows";
  }
  // A volume: an int plane index. The streaming kernel's grid x (column blocks times slabs) stays
  // far below its limit: a volume is cut into several slabs only while it has few blocks.
  if (grid.depth > max_depth) {
    return "the CUDA backend takes at most " + std::to_string(max_depth) + " planes";
  }
  return {};
}

std::string refuses_blocks(const Grid& grid) {
  // A block's cells are indexed by int plane, row and column from its first ghost: a block of a
  // grid within these limits stays within them (its rows are checked against the launch grid's
  // limit when it is made, as they depend on the split).
  if (grid.cols > max_cols) {
    return "the CUDA backend takes at most " + std::to_string(max_cols) + " columns";
  }
  if (grid.depth > max_depth) {
    return "the CUDA backend takes at most " + std::to_string(max_depth) + " planes";
  }
  return {};
}

}  // namespace grayscott::cuda
