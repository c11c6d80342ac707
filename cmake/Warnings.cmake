# Warnings on and clean for the project's own targets.
add_library(grayscott_warnings INTERFACE)
target_compile_options(grayscott_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)

# One arithmetic everywhere: the CPU engine's one-step and fused paths, any thread count and the
# scalar edge code must round identically, so the compiler may not fuse a*b+c on its own.
add_library(grayscott_fp INTERFACE)
target_compile_options(grayscott_fp INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)
if(GRAYSCOTT_NATIVE)
  target_compile_options(grayscott_fp INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
