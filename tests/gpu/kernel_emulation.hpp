// The CUDA kernels' source compiled for the host, where no GPU is. A grid of blocks runs in one of
// two ways:
// - launch(): each block becomes blockDim.x * blockDim.y host threads that meet at a std::barrier
//   for every __syncthreads(); block-shared arrays become function-local statics (blocks run one
//   after another).
// - launch_sequential(): for kernels with no __syncthreads (one thread per cell, halo packing),
//   every thread of every block runs in turn on the calling thread, which is far cheaper.
// This checks what is GPU-only in the kernels (indexing, tiles, halos, regions, boundaries,
// members) against the CPU code, bitwise, on any machine. It says nothing about the GPU itself
// (memory model, the compiler's device code): the tests labelled gpu do that on a device.
#pragma once

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace kernel_emulation {
struct Index3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local Index3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0};
inline Index3 blockDim, gridDim;
inline thread_local std::barrier<>* block_barrier = nullptr;
inline void __syncthreads() {
  if (!block_barrier) {
    std::fputs("kernel_emulation: __syncthreads() under launch_sequential()\n", stderr);
    std::abort();
  }
  block_barrier->arrive_and_wait();
}

// Runs `body` as `grid` blocks of block.x * block.y threads, one block at a time.
inline void launch(Index3 grid, Index3 block, const std::function<void()>& body) {
  blockDim = block;
  gridDim = grid;
  const unsigned threads = block.x * block.y;
  std::barrier<> barrier(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      block_barrier = &barrier;
      threadIdx = {t % block.x, t / block.x, 0};
      for (unsigned z = 0; z < grid.z; ++z) {
        for (unsigned y = 0; y < grid.y; ++y) {
          for (unsigned x = 0; x < grid.x; ++x) {
            blockIdx = {x, y, z};
            body();
            barrier.arrive_and_wait();  // the next block reuses the shared arrays
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
}

// Runs `body` for every thread of every block on this thread (kernels without __syncthreads).
inline void launch_sequential(Index3 grid, Index3 block, const std::function<void()>& body) {
  blockDim = block;
  gridDim = grid;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        for (unsigned ty = 0; ty < block.y; ++ty) {
          for (unsigned tx = 0; tx < block.x; ++tx) {
            threadIdx = {tx, ty, 0};
            body();
          }
        }
      }
    }
  }
}
}  // namespace kernel_emulation

using kernel_emulation::__syncthreads;
using kernel_emulation::blockDim;
using kernel_emulation::blockIdx;
using kernel_emulation::gridDim;
using kernel_emulation::threadIdx;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define __shared__ static
#include "engine/cuda/kernels.cuh"
#include "engine/cuda/subdomain_kernels.cuh"
#undef __shared__
#undef __launch_bounds__
#undef __forceinline__
#undef __host__
#undef __device__
#undef __global__
