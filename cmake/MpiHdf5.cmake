# Chooses the HDF5 flavour and whether the MPI build is on.
#   GRAYSCOTT_MPI=OFF  : serial HDF5, no MPI (a machine without MPI builds as before).
#   GRAYSCOTT_MPI=ON   : MPI and a parallel HDF5 are required.
#   GRAYSCOTT_MPI=AUTO : ON when both are found, OFF otherwise.
# Where both flavours are installed side by side (Debian: hdf5/serial and hdf5/openmpi), FindHDF5
# is steered by HDF5_PREFER_PARALLEL; HDF5_ROOT or HDF5_C_COMPILER_EXECUTABLE (h5pcc) override it.
# The choice is checked by compiling against the headers found: H5_HAVE_PARALLEL must be set.
string(TOUPPER "${GRAYSCOTT_MPI}" _grayscott_mpi_request)
if(NOT _grayscott_mpi_request MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "GRAYSCOTT_MPI must be AUTO, ON or OFF (got '${GRAYSCOTT_MPI}')")
endif()

set(GRAYSCOTT_WITH_MPI OFF)
if(NOT _grayscott_mpi_request STREQUAL "OFF")
  if(_grayscott_mpi_request STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
endif()

if(MPI_C_FOUND AND NOT _grayscott_mpi_request STREQUAL "OFF")
  set(HDF5_PREFER_PARALLEL TRUE)
else()
  set(HDF5_PREFER_PARALLEL FALSE)
endif()
find_package(HDF5 REQUIRED COMPONENTS C HL)  # HL: dimension scales (H5DS)

if(MPI_C_FOUND AND NOT _grayscott_mpi_request STREQUAL "OFF")
  include(CheckCSourceCompiles)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_INCLUDES ${HDF5_INCLUDE_DIRS} ${MPI_C_INCLUDE_DIRS})
  check_c_source_compiles([=[
    #include <hdf5.h>
    #if !defined(H5_HAVE_PARALLEL) || !H5_HAVE_PARALLEL
    #error serial HDF5
    #endif
    int main(void) { return 0; }
  ]=] GRAYSCOTT_HDF5_IS_PARALLEL)
  cmake_pop_check_state()
  if(GRAYSCOTT_HDF5_IS_PARALLEL)
    set(GRAYSCOTT_WITH_MPI ON)
  elseif(_grayscott_mpi_request STREQUAL "ON")
    message(FATAL_ERROR "GRAYSCOTT_MPI=ON needs a parallel HDF5 (H5_HAVE_PARALLEL); the HDF5 "
                        "found (${HDF5_INCLUDE_DIRS}) is serial. Point HDF5_ROOT at a parallel one.")
  endif()
endif()
message(STATUS "grayscott: MPI domain decomposition ${GRAYSCOTT_WITH_MPI} (HDF5 in ${HDF5_INCLUDE_DIRS})")
