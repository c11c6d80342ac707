// The root attributes a run file and a sweep file both hold, written and read in one place so
// that the two files describe a problem alike.
#pragma once

#include <hdf5.h>

#include <cstdint>

#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::io {

// The root attributes a run file and a sweep file share: grid, diffusion, time step, images,
// stencil, boundary, precision (feed and kill are per member in a sweep).
void write_problem_attributes(hid_t root, const Problem& problem, std::int64_t images,
                              std::int64_t steps_per_image);

class RunFileReader;
// The shared parameters as write_problem_attributes records them (feed and kill left default).
Problem read_problem_attributes(const RunFileReader& file);

// The start's attributes, a run file's and a sweep file's: init, init_values (the values inside
// its shape).
void write_initial_attributes(hid_t root, const InitialState& initial);
InitialState read_initial_attributes(const RunFileReader& file);

}  // namespace grayscott::io
