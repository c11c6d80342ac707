// Copying an image out of the engine's state: with the finite check in the same pass, and for a
// large image with non-temporal ("streaming") stores.
//
// Why streaming: an ordinary store first reads the destination's cache line from memory (to own
// it), so a copy moves three bytes for every two it should; and the image, once copied, is read by
// nothing on this core (the disk's DMA takes it, or HDF5 reads it much later), so keeping it in
// the cache only evicts the state the next steps need. A streaming store writes the line straight
// to memory. Measured on the course's image (1080 x 1920 float32, just stepped, both threads;
// `bench_cpu_engine --benchmark_filter=CopyImage`): 0.90 ms with ordinary stores against 0.34 ms.
//
// Streaming stores are weakly ordered: each thread that made them calls streaming_fence() before
// another thread may read what they wrote.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace grayscott::cpu {

// Below this many bytes per field a copy stays in the cache: the writer (or a small batch's next
// member) finds it there.
constexpr std::size_t streaming_copy_min_bytes = std::size_t(1) << 20;

// Copies n values and says whether all are finite: one pass, branch-free, so that the loop
// vectorises.
template <class Real>
bool copy_finite(const Real* from, std::int64_t n, Real* to) {
  bool finite = true;
  for (std::int64_t i = 0; i < n; ++i) {
    const Real x = from[i];
    to[i] = x;
    finite &= std::isfinite(x);
  }
  return finite;
}

inline void streaming_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

namespace detail {
// The widest streaming store the target has, for float and double vectors of that width.
#if defined(__AVX512F__)
constexpr std::size_t stream_bytes = 64;
inline void stream(float* to, __m512 x) { _mm512_stream_ps(to, x); }
inline void stream(double* to, __m512d x) { _mm512_stream_pd(to, x); }
#elif defined(__AVX__)
constexpr std::size_t stream_bytes = 32;
inline void stream(float* to, __m256 x) { _mm256_stream_ps(to, x); }
inline void stream(double* to, __m256d x) { _mm256_stream_pd(to, x); }
#elif defined(__SSE2__)
constexpr std::size_t stream_bytes = 16;
inline void stream(float* to, __m128 x) { _mm_stream_ps(to, x); }
inline void stream(double* to, __m128d x) { _mm_stream_pd(to, x); }
#endif

#if defined(__SSE2__)
// Streams n values (a multiple of the vector width, `to` aligned to it) and says whether all are
// finite. Finite x gives x - x = 0 exactly; infinity and NaN give NaN, which every later sum
// keeps: a subtraction and an addition per vector, no branch. (Valid without -ffinite-math-only,
// which this project never sets.)
template <class Real>
bool stream_finite(const Real* from, std::int64_t n, Real* to) {
  typedef Real Vector __attribute__((vector_size(stream_bytes)));
  constexpr auto lanes = static_cast<std::int64_t>(stream_bytes / sizeof(Real));
  Vector sum = {};
  for (std::int64_t i = 0; i < n; i += lanes) {
    Vector x;
    std::memcpy(&x, from + i, sizeof x);  // an unaligned load
    stream(to + i, x);
    sum += x - x;
  }
  bool finite = true;
  for (std::int64_t lane = 0; lane < lanes; ++lane) finite &= sum[lane] == 0;
  return finite;
}
#endif
}  // namespace detail

// copy_finite with streaming stores where the target has them (x86-64), for the destination's
// whole vector-aligned middle; its unaligned ends are copied as ordinary stores.
template <class Real>
bool streaming_copy_finite(const Real* from, std::int64_t n, Real* to) {
#if defined(__SSE2__)
  constexpr auto width = static_cast<std::int64_t>(detail::stream_bytes / sizeof(Real));
  const auto address = reinterpret_cast<std::uintptr_t>(to);
  if (address % sizeof(Real) != 0) return copy_finite(from, n, to);
  std::int64_t head =
      static_cast<std::int64_t>((detail::stream_bytes - address % detail::stream_bytes) %
                                detail::stream_bytes / sizeof(Real));
  if (head > n) head = n;
  const std::int64_t body = (n - head) / width * width;
  bool finite = copy_finite(from, head, to);
  if (body > 0) finite = detail::stream_finite(from + head, body, to + head) && finite;
  return copy_finite(from + head + body, n - head - body, to + head + body) && finite;
#else
  return copy_finite(from, n, to);
#endif
}

}  // namespace grayscott::cpu
