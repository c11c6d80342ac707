# `cmake --install`: the program, the headers of the C++ API and a CMake package, so that another
# project does
#
#   find_package(grayscott 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE grayscott::grayscott)
#
# and includes <grayscott/model/model.hpp>, <grayscott/model/initial_state.hpp>,
# <grayscott/engine/engine.hpp> and <grayscott/pipeline/run.hpp>: build a problem, step it on an
# engine, read its state, run the pipeline to a file (examples/cpp). The libraries are the static
# ones of the build; grayscott::grayscott brings what they need (HDF5, PNG, FreeType, OpenMP,
# threads, MPI and CUDA when built with them), which the package finds again (find_dependency).
# Only the headers of that API are installed, and they include nothing else of the project's.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GRAYSCOTT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/grayscott CACHE STRING
    "Where `cmake --install` puts the CMake package (relative to the prefix)")
mark_as_advanced(GRAYSCOTT_INSTALL_CMAKEDIR)

# The API: one target over the pipeline and everything under it.
add_library(grayscott_api INTERFACE)
add_library(grayscott::grayscott ALIAS grayscott_api)
target_link_libraries(grayscott_api INTERFACE grayscott_pipeline)
set_target_properties(grayscott_api PROPERTIES EXPORT_NAME grayscott)

# Installed, the headers sit in include/grayscott/{model,engine,pipeline}: a consumer names them
# <grayscott/...>, and their own includes ("model/model.hpp") resolve in include/grayscott.
target_include_directories(grayscott_model INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/grayscott>)

set(_grayscott_exported grayscott_api grayscott_model grayscott_engine grayscott_io
                        grayscott_analysis grayscott_pipeline grayscott_warnings)
if(GRAYSCOTT_WITH_MPI)
  list(APPEND _grayscott_exported grayscott_mpi)
endif()
foreach(_target IN LISTS _grayscott_exported)
  if(NOT _target STREQUAL "grayscott_api")
    string(REPLACE "grayscott_" "" _name ${_target})
    set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_name})  # grayscott::engine, ...
  endif()
endforeach()

install(TARGETS grayscott RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS ${_grayscott_exported} EXPORT grayscottTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(FILES src/model/model.hpp src/model/initial_state.hpp src/model/host_device.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grayscott/model COMPONENT development)
install(FILES src/engine/engine.hpp src/engine/host_buffer.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grayscott/engine COMPONENT development)
install(FILES src/analysis/statistics.hpp src/analysis/histogram_bin.hpp src/analysis/measure.hpp
              src/analysis/classify.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grayscott/analysis COMPONENT development)
install(FILES src/pipeline/run.hpp src/pipeline/job.hpp src/pipeline/image_loop.hpp
              src/pipeline/image_queue.hpp
              src/pipeline/stop_signal.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grayscott/pipeline COMPONENT development)
install(EXPORT grayscottTargets NAMESPACE grayscott:: DESTINATION ${GRAYSCOTT_INSTALL_CMAKEDIR}
        COMPONENT development)

configure_package_config_file(cmake/grayscottConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/grayscottConfig.cmake
                              INSTALL_DESTINATION ${GRAYSCOTT_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/grayscottConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/grayscottConfig.cmake
              ${PROJECT_BINARY_DIR}/package/grayscottConfigVersion.cmake
        DESTINATION ${GRAYSCOTT_INSTALL_CMAKEDIR} COMPONENT development)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/grayscott COMPONENT runtime)
