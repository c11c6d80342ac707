# Warnings on and clean for the project's own targets.
add_library(grayscott_warnings INTERFACE)
target_compile_options(grayscott_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)

# One arithmetic everywhere: the CPU engine's one-step and fused paths, any thread count and the
# scalar edge code must round identically, so the compiler may not fuse a*b+c on its own; the
# fused multiply-adds the cell update writes (model/cell_update.hpp's multiply_add) are the only
# ones, on every backend.
add_library(grayscott_fp INTERFACE)
target_compile_options(grayscott_fp INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)
if(GRAYSCOTT_NATIVE)
  # Whole cache lines of cells per vector where the processor has 512-bit vectors (GCC prefers 256
  # by default): on an AVX-512 Xeon the course's workload stepped 1.13x faster, the 3D and batch
  # presets 1.05-1.25x; a processor without them ignores the preference.
  target_compile_options(grayscott_fp INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-march=native -mprefer-vector-width=512>)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  # A portable build still needs fused multiply-add instructions: without them every multiply_add
  # is a library call and the vector loops fall apart. x86-64-v3 (AVX2 and FMA) is every x86-64
  # processor since 2015; 64-bit Arm has fused multiply-adds in its base instruction set.
  target_compile_options(grayscott_fp INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=x86-64-v3>)
endif()
