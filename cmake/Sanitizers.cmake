# GRAYSCOTT_SANITIZE: build everything with the compiler's sanitizers, e.g. "address,undefined" or
# "thread" (the presets asan-ubsan and tsan; scripts/check runs the tests under both).
set(GRAYSCOTT_SANITIZE "" CACHE STRING "Sanitizers to build with: e.g. address,undefined or thread")
if(GRAYSCOTT_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${GRAYSCOTT_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${GRAYSCOTT_SANITIZE})
  message(STATUS "grayscott: sanitizers ${GRAYSCOTT_SANITIZE}")
endif()
