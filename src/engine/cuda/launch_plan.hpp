// The CUDA engine's launch plan, in plain host C++: how an advance of n steps becomes CUDA graphs
// (at most max_graph_steps steps each), each graph a sequence of launches (fuse steps each, the
// last one shorter), each launch reading one ping-pong buffer and writing the other, on a launch
// grid sized for the kernel it runs. The engine records its graphs from it and the host-run kernel
// tests (tests/gpu/test_kernels_on_host.cpp) execute it, so both run the same launches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace grayscott::cuda::detail {

// Launch shapes, shared by the engine (grid sizes) and the kernels.
inline constexpr int step_block_x = 32, step_block_y = 8;
// A volume's streaming kernel: a block of threads covers a tile of volume_block_y rows and
// volume_block_x columns and marches along depth through a slab of planes, holding three planes
// of the tile and its one-cell rim in shared memory.
inline constexpr int volume_block_x = 32, volume_block_y = 16;
inline constexpr int volume_tile_w = volume_block_x + 2, volume_tile_h = volume_block_y + 2;
// A slab is at least this many planes deep (a slab loads two planes beyond its own: 25% more at
// 8), and a volume is cut into more slabs only while its tiles make fewer blocks than
// volume_target_blocks (enough to fill a large GPU several times over). To be tuned on the GPU.
inline constexpr int volume_min_slab = 8;
inline constexpr long long volume_target_blocks = 2048;
inline constexpr int fused_block_x = 32, fused_block_y = 8;
inline constexpr int fused_region_w = 64, fused_region_h = 32;  // shared-memory region per block
inline constexpr int fused_max_steps = 8;  // region minus a 2k halo must keep a useful centre
inline constexpr int fused_cells_x = fused_region_w / fused_block_x;  // cells per thread
inline constexpr int fused_cells_y = fused_region_h / fused_block_y;

// Steps per launch when EngineOptions::fuse_steps is 0. A starting point chosen by counting
// (a 64x32 region loaded for a 56x24 centre: ~3 bytes of memory traffic per cell-update in single
// precision instead of 16, ~19% of cells computed twice); to be tuned on the GPU.
inline constexpr int default_fuse_steps = 4;

// Steps per launch for EngineOptions::fuse_steps (validated: 0..fused_max_steps).
inline int steps_per_launch(int fuse_option) {
  return fuse_option == 0 ? default_fuse_steps : fuse_option;
}

// The largest step count held in one CUDA graph; longer advances replay it.
inline constexpr std::int64_t max_graph_steps = 1024;

// Blocks needed to cover n cells, per_block at a time.
inline unsigned blocks(long long n, int per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

struct Dims {
  unsigned x = 1, y = 1, z = 1;
};

// One launch: `steps` steps (1: the one-step kernel, more: the fused kernel) from buffer `parity`
// into buffer 1 - parity, on a grid of `grid` blocks of `block` threads (z: the members).
// A volume's launch is one step: the streaming kernel, each block marching through `slab` planes
// (grid x: the tile's column block and the slab), or with `slab` 0 the one-thread-per-cell kernel
// (each thread looping over depth).
struct Launch {
  int steps = 1;
  int parity = 0;
  Dims grid, block;
  bool volume = false;
  int slab = 0;
  bool fused() const { return steps > 1; }
  bool streaming() const { return slab > 0; }
};

// The launch of `steps` steps (1..fused_max_steps) from buffer `parity` over rows x cols cells and
// `members` members.
inline Launch plan_launch(int steps, int parity, std::int64_t rows, std::int64_t cols,
                          std::size_t members) {
  Launch launch;
  launch.steps = steps;
  launch.parity = parity;
  const auto z = static_cast<unsigned>(members);
  if (steps == 1) {
    launch.block = {step_block_x, step_block_y, 1};
    launch.grid = {blocks(cols, step_block_x), blocks(rows, step_block_y), z};
  } else {
    const int out_w = fused_region_w - 2 * steps, out_h = fused_region_h - 2 * steps;
    launch.block = {fused_block_x, fused_block_y, 1};
    launch.grid = {blocks(cols, out_w), blocks(rows, out_h), z};
  }
  return launch;
}

// The planes per slab of a volume's streaming kernel when `blocks_per_slab` blocks cover one
// slab (its tiles times the members): slabs of at least volume_min_slab planes, as many as make
// about volume_target_blocks blocks in all.
inline int volume_slab(std::int64_t depth, long long blocks_per_slab) {
  const long long wanted = (volume_target_blocks + blocks_per_slab - 1) / blocks_per_slab;
  const long long most = (depth + volume_min_slab - 1) / volume_min_slab;
  const long long slabs = std::max(1LL, std::min(wanted, most));
  return static_cast<int>((depth + slabs - 1) / slabs);
}

// A volume's launch of one step from buffer `parity` over depth x rows x cols cells and `members`
// members: the streaming kernel with slabs of `slab` planes (0: volume_slab()'s choice) or, when
// `streaming` is false, the one-thread-per-cell kernel.
inline Launch plan_volume_launch(bool streaming, int parity, std::int64_t depth, std::int64_t rows,
                                 std::int64_t cols, std::size_t members, int slab = 0) {
  Launch launch;
  launch.volume = true;
  launch.parity = parity;
  const auto z = static_cast<unsigned>(members);
  if (!streaming) {
    launch.block = {step_block_x, step_block_y, 1};
    launch.grid = {blocks(cols, step_block_x), blocks(rows, step_block_y), z};
    return launch;
  }
  const unsigned col_blocks = blocks(cols, volume_block_x),
                 row_blocks = blocks(rows, volume_block_y);
  launch.slab = slab > 0
                    ? slab
                    : volume_slab(depth, static_cast<long long>(col_blocks) * row_blocks * members);
  launch.block = {volume_block_x, volume_block_y, 1};
  launch.grid = {col_blocks * blocks(depth, launch.slab), row_blocks, z};
  return launch;
}

// A volume's launches for `steps` steps (one step each) from buffer `parity`, as for_each_launch;
// returns the parity of the buffer holding the result.
template <class Each>
int for_each_volume_launch(std::int64_t steps, bool streaming, int parity, std::int64_t depth,
                           std::int64_t rows, std::int64_t cols, std::size_t members, Each&& each,
                           int slab = 0) {
  for (std::int64_t left = steps; left > 0; --left) {
    each(plan_volume_launch(streaming, parity, depth, rows, cols, members, slab));
    parity = 1 - parity;
  }
  return parity;
}

// The launches of one graph: `steps` steps (1..max_graph_steps), `fuse` per launch, from buffer
// `parity`; calls each(Launch) in order and returns the parity of the buffer holding the result.
template <class Each>
int for_each_launch(std::int64_t steps, int fuse, int parity, std::int64_t rows, std::int64_t cols,
                    std::size_t members, Each&& each) {
  for (std::int64_t left = steps; left > 0; left -= fuse) {
    each(plan_launch(static_cast<int>(std::min<std::int64_t>(fuse, left)), parity, rows, cols,
                     members));
    parity = 1 - parity;
  }
  return parity;
}

// The parity of the result of a graph of `steps` steps, `fuse` per launch, from buffer `parity`.
inline int parity_after(std::int64_t steps, int fuse, int parity) {
  const std::int64_t launches = (steps + fuse - 1) / fuse;
  return launches % 2 == 1 ? 1 - parity : parity;
}

// An advance of `steps` steps as graphs of at most max_graph_steps steps: calls
// each_graph(steps_in_graph, parity) in order and returns the parity of the buffer holding the
// result.
template <class EachGraph>
int for_each_graph(std::int64_t steps, int fuse, int parity, EachGraph&& each_graph) {
  while (steps > 0) {
    const std::int64_t n = std::min(steps, max_graph_steps);
    each_graph(n, parity);
    parity = parity_after(n, fuse, parity);
    steps -= n;
  }
  return parity;
}

}  // namespace grayscott::cuda::detail
