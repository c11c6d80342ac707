# The optional CUDA backend. GRAYSCOTT_CUDA=AUTO builds it when a CUDA compiler is found, ON
# requires it, OFF leaves it out; GRAYSCOTT_WITH_CUDA says what was decided.
if(GRAYSCOTT_CUDA STREQUAL "AUTO")
  # The toolkit's usual place, which is not on PATH by default: `pip install .` on a GPU machine
  # builds the module with CUDA as scripts/build does.
  if(NOT DEFINED ENV{CUDACXX} AND NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    find_program(GRAYSCOTT_NVCC_ON_PATH nvcc)
    if(NOT GRAYSCOTT_NVCC_ON_PATH)
      set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(GRAYSCOTT_WITH_CUDA ON)
  else()
    set(GRAYSCOTT_WITH_CUDA OFF)
    message(STATUS "grayscott: no CUDA compiler found, building without the CUDA backend")
  endif()
elseif(GRAYSCOTT_CUDA)
  set(GRAYSCOTT_WITH_CUDA ON)
else()
  set(GRAYSCOTT_WITH_CUDA OFF)
endif()

if(GRAYSCOTT_WITH_CUDA)
  # Hopper machine code plus PTX, which newer GPUs compile when the program starts.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
  endif()
  # The runtime linked in, so the program needs only the driver where it runs.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # C++20 as for the host code. CMake 3.25 does not know nvcc 13's C++20 flag, so tell it.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  message(STATUS "grayscott: CUDA backend on (${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")
endif()
