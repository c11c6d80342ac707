// Functions written once for the host and a device (the per-cell arithmetic, a histogram's bins).
#pragma once

// A backend that compiles these for a device defines GRAYSCOTT_DEVICE_CODE in its device sources
// (the CUDA backend does, in its CMakeLists.txt); every other compilation sees plain inline host
// functions.
#if defined(GRAYSCOTT_DEVICE_CODE)
#define GRAYSCOTT_HD __host__ __device__ __forceinline__
#define GRAYSCOTT_UNROLL _Pragma("unroll")
#else
#define GRAYSCOTT_HD inline __attribute__((always_inline))
// As far as the longest loop it marks (a volume's eighteen neighbours): a shorter count leaves GCC
// a loop inside the vector loops, which then stay scalar.
#define GRAYSCOTT_UNROLL _Pragma("GCC unroll 18")
#endif

