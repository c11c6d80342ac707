// float32 stepping with subnormal numbers flushed to zero, results and operands alike.
//
// Why: a small grid (a batch's 128x128 member) fills with values of v below float's smallest
// normal number (1.2e-38) as the pattern's tail decays: 4 % of the cells after 32 steps, 13 %
// after 128, against 0.06 % on a 4096x4096 grid. Arithmetic on subnormal numbers takes the CPU's
// slow path (a microcode assist on many x86 cores), which made a batch step at 0.7 (AMD EPYC) down
// to 0.16 (Intel Xeon) of a large grid's rate. Flushed, the values are zero: a change of less than
// 1.2e-38 in a cell, far below what any tolerance or picture can see. GPUs do the same with
// nvcc's --ftz=true (the CUDA backend's build uses it, so both backends still round alike), as does
// XLA's CPU backend (JAX). float64 keeps IEEE subnormals: a GPU cannot flush them, and they appear
// only 308 orders of magnitude down.
//
// The setting is per thread: each stepping thread sets it for the length of its work and restores
// what it found, so that a caller's own arithmetic (NumPy in the Python module's thread) is left as
// it was.
#pragma once

#include <type_traits>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace grayscott::cpu {

template <class Real>
class FlushSubnormals {
 public:
  FlushSubnormals() {
    if constexpr (flushes) {
#if defined(__SSE__) || defined(__x86_64__)
      saved_ = _mm_getcsr();
      _mm_setcsr(saved_ | flush_to_zero | denormals_are_zero);
#elif defined(__aarch64__)
      saved_ = __builtin_aarch64_get_fpcr64();
      __builtin_aarch64_set_fpcr64(saved_ | flush_to_zero);
#endif
    }
  }
  ~FlushSubnormals() {
    if constexpr (flushes) {
#if defined(__SSE__) || defined(__x86_64__)
      _mm_setcsr(static_cast<unsigned>(saved_));
#elif defined(__aarch64__)
      __builtin_aarch64_set_fpcr64(saved_);
#endif
    }
  }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

  // Whether this build can flush on this architecture (x86-64 and AArch64); elsewhere float32
  // keeps subnormals, and runs slower where they appear.
  static constexpr bool supported =
#if defined(__SSE__) || defined(__x86_64__) || defined(__aarch64__)
      true;
#else
      false;
#endif

 private:
  static constexpr bool flushes = std::is_same_v<Real, float> && supported;
#if defined(__SSE__) || defined(__x86_64__)
  static constexpr unsigned flush_to_zero = 0x8000;       // MXCSR.FTZ: subnormal results
  static constexpr unsigned denormals_are_zero = 0x0040;  // MXCSR.DAZ: subnormal operands
  unsigned saved_ = 0;
#elif defined(__aarch64__)
  static constexpr unsigned long long flush_to_zero = 1ull << 24;  // FPCR.FZ: both
  unsigned long long saved_ = 0;
#endif
};

}  // namespace grayscott::cpu
