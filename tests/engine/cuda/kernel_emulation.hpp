// The CUDA kernels' source compiled for the host, where no GPU is. A grid of blocks runs in one of
// two ways:
// - launch(): each thread of a block is a fiber (ucontext) on the calling thread; a
//   __syncthreads() switches to the next fiber of the block, and once every fiber has reached it
//   the first one goes on. Blocks run one after another, so block-shared arrays become
//   function-local statics. Fibers cost a context switch per barrier, not an OS thread's wake-up,
//   so grids of many blocks run in well under a second.
// - launch_sequential(): for kernels with no __syncthreads (one thread per cell, halo packing),
//   every thread of every block runs in turn on the calling thread, which is cheaper still.
// Atomic additions are plain ones (one thread runs at a time).
// This checks what is GPU-only in the kernels (indexing, tiles, halos, regions, boundaries,
// members) against the CPU code, bitwise, on any machine. It says nothing about the GPU itself
// (memory model, the compiler's device code): the tests labelled gpu do that on a device.
#pragma once

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

namespace kernel_emulation {
struct Index3 {
  unsigned x = 1, y = 1, z = 1;
};
inline Index3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0};
inline Index3 blockDim, gridDim;

namespace fibers {
struct Fiber {
  ucontext_t context{};
  bool done = false;
};
inline constexpr std::size_t stack_bytes = 256 * 1024;
inline ucontext_t scheduler{};
inline std::vector<Fiber> block;
inline std::vector<std::unique_ptr<char[]>> stacks;
inline unsigned current = 0;
inline const std::function<void()>* body = nullptr;
inline bool in_launch = false;

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "kernel_emulation: %s\n", what);
  std::abort();
}

inline void entry() {
  (*body)();
  block[current].done = true;
}  // returns to the scheduler through uc_link

// Readies fiber t to run entry() from the start (a function of its own: getcontext returns twice
// in the compiler's eyes, which must not see the caller's loop variables).
[[gnu::noinline]] inline void prepare(unsigned t) {
  Fiber& f = block[t];
  f.done = false;
  if (getcontext(&f.context) != 0) fail("getcontext failed");
  f.context.uc_stack.ss_sp = stacks[t].get();
  f.context.uc_stack.ss_size = stack_bytes;
  f.context.uc_link = &scheduler;
  makecontext(&f.context, entry, 0);
}

// Resumes fiber t up to its next barrier or its end (a function of its own, as above).
[[gnu::noinline]] inline void resume(unsigned t, unsigned width) {
  current = t;
  threadIdx = {t % width, t / width, 0};
  if (swapcontext(&scheduler, &block[t].context) != 0) fail("swapcontext failed");
}

// Runs one block: every fiber to its next barrier (or its end), in turn, until all have ended.
inline void run_block(unsigned threads, unsigned width) {
  for (unsigned t = 0; t < threads; ++t) prepare(t);
  for (;;) {
    unsigned finished = 0;
    for (unsigned t = 0; t < threads; ++t) {
      resume(t, width);
      finished += block[t].done ? 1 : 0;
    }
    if (finished == threads) return;
    // Some threads ended while others wait at a barrier: a __syncthreads() not reached by all.
    if (finished != 0) fail("__syncthreads() not reached by every thread of a block");
  }
}
}  // namespace fibers

// One thread runs at a time: an atomic addition is a plain one.
template <class T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

inline void __syncthreads() {
  if (!fibers::in_launch) fibers::fail("__syncthreads() under launch_sequential()");
  if (swapcontext(&fibers::block[fibers::current].context, &fibers::scheduler) != 0) {
    fibers::fail("swapcontext failed");
  }
}

// Runs `body` as `grid` blocks of block.x * block.y threads, one block at a time.
inline void launch(Index3 grid, Index3 block, const std::function<void()>& body) {
  blockDim = block;
  gridDim = grid;
  const unsigned threads = block.x * block.y;
  fibers::block.resize(threads);
  while (fibers::stacks.size() < threads) {
    fibers::stacks.push_back(std::make_unique<char[]>(fibers::stack_bytes));
  }
  fibers::body = &body;
  fibers::in_launch = true;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        fibers::run_block(threads, block.x);
      }
    }
  }
  fibers::in_launch = false;
  fibers::body = nullptr;  // the body lives only as long as this launch
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
using kernel_emulation::atomicAdd;
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
#include "engine/cuda/statistics_kernels.cuh"
#include "engine/cuda/subdomain_kernels.cuh"
#include "engine/cuda/volume_kernels.cuh"
#undef __shared__
#undef __launch_bounds__
#undef __forceinline__
#undef __host__
#undef __device__
#undef __global__
