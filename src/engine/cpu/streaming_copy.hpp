// Copying an image out of the engine's state: with the finite check in the same pass, and for a
// large image with non-temporal ("streaming") stores.
//
// Why streaming: an ordinary store first reads the destination's cache line from memory (to own
// it), so a copy moves three bytes for every two it should; and the image, once copied, is read by
// nothing on this core (the disk's DMA takes it, or HDF5 reads it much later), so keeping it in
// the cache only evicts the state the next steps need. A streaming store writes the line straight
// to memory. Measured on the course's image (1080 x 1920 float32, just stepped, both threads;
// `bench_cpu_engine --benchmark_filter=CopyImage`): 0.93 ms with ordinary stores against 0.34 ms.
//
// Streaming stores are weakly ordered: each thread that made them calls streaming_fence() before
// another thread may read what they wrote.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

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
// Streams n values (a multiple of the vector width, `to` aligned to it) and says whether all are
// finite. Finite x gives x - x = 0 exactly; infinity and NaN give NaN, which every later sum
// keeps: a subtraction and an addition per vector, no branch. (Valid without -ffinite-math-only,
// which this project never sets.)
#if defined(__AVX512F__)
constexpr std::size_t stream_bytes = 64;
inline bool stream_finite(const float* from, std::int64_t n, float* to) {
  __m512 sum = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 16) {
    const __m512 x = _mm512_loadu_ps(from + i);
    _mm512_stream_ps(to + i, x);
    sum = _mm512_add_ps(sum, _mm512_sub_ps(x, x));
  }
  return _mm512_cmp_ps_mask(sum, _mm512_setzero_ps(), _CMP_EQ_OQ) == 0xFFFF;
}
inline bool stream_finite(const double* from, std::int64_t n, double* to) {
  __m512d sum = _mm512_setzero_pd();
  for (std::int64_t i = 0; i < n; i += 8) {
    const __m512d x = _mm512_loadu_pd(from + i);
    _mm512_stream_pd(to + i, x);
    sum = _mm512_add_pd(sum, _mm512_sub_pd(x, x));
  }
  return _mm512_cmp_pd_mask(sum, _mm512_setzero_pd(), _CMP_EQ_OQ) == 0xFF;
}
#elif defined(__AVX__)
constexpr std::size_t stream_bytes = 32;
inline bool stream_finite(const float* from, std::int64_t n, float* to) {
  __m256 sum = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 8) {
    const __m256 x = _mm256_loadu_ps(from + i);
    _mm256_stream_ps(to + i, x);
    sum = _mm256_add_ps(sum, _mm256_sub_ps(x, x));
  }
  return _mm256_movemask_ps(_mm256_cmp_ps(sum, _mm256_setzero_ps(), _CMP_EQ_OQ)) == 0xFF;
}
inline bool stream_finite(const double* from, std::int64_t n, double* to) {
  __m256d sum = _mm256_setzero_pd();
  for (std::int64_t i = 0; i < n; i += 4) {
    const __m256d x = _mm256_loadu_pd(from + i);
    _mm256_stream_pd(to + i, x);
    sum = _mm256_add_pd(sum, _mm256_sub_pd(x, x));
  }
  return _mm256_movemask_pd(_mm256_cmp_pd(sum, _mm256_setzero_pd(), _CMP_EQ_OQ)) == 0xF;
}
#elif defined(__SSE2__)
constexpr std::size_t stream_bytes = 16;
inline bool stream_finite(const float* from, std::int64_t n, float* to) {
  __m128 sum = _mm_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 4) {
    const __m128 x = _mm_loadu_ps(from + i);
    _mm_stream_ps(to + i, x);
    sum = _mm_add_ps(sum, _mm_sub_ps(x, x));
  }
  return _mm_movemask_ps(_mm_cmpeq_ps(sum, _mm_setzero_ps())) == 0xF;
}
inline bool stream_finite(const double* from, std::int64_t n, double* to) {
  __m128d sum = _mm_setzero_pd();
  for (std::int64_t i = 0; i < n; i += 2) {
    const __m128d x = _mm_loadu_pd(from + i);
    _mm_stream_pd(to + i, x);
    sum = _mm_add_pd(sum, _mm_sub_pd(x, x));
  }
  return _mm_movemask_pd(_mm_cmpeq_pd(sum, _mm_setzero_pd())) == 0x3;
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
