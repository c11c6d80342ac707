// The root attributes a run file and a sweep file both hold, written and read in one place so
// that the two files describe a problem alike.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/statistics.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::io {

// The root attributes a run file and a sweep file share: grid (depth only for a volume),
// diffusion, time step, images, stencil, boundary, precision (feed and kill are per member in a
// sweep).
void write_problem_attributes(hid_t root, const Problem& problem, std::int64_t images,
                              std::int64_t steps_per_image);

class RunFileReader;
// The shared parameters as write_problem_attributes records them (feed and kill left default).
// Refuses a file whose images are not of the grid its attributes give (refuse_changed_file).
Problem read_problem_attributes(const RunFileReader& file);

// Throws InvalidInput "FILE: <what> (the file was changed by another program): nothing done with
// it", for a file whose attributes disagree with its datasets (edited by hand, or by another
// program), refused before it is read, continued or described by those attributes.
[[noreturn]] void refuse_changed_file(const RunFileReader& file, const std::string& what);

// The start's attributes, a run file's and a sweep file's: init, init_values (the values inside
// its shape).
void write_initial_attributes(hid_t root, const InitialState& initial);
InitialState read_initial_attributes(const RunFileReader& file);

// What a run or a sweep measures of its images (--stats, --classify, --until-steady), as the root
// attributes stats_histogram_bins, stats_histogram_range, classify, until_steady and
// steady_images, which a continued run or sweep reads back.
struct AnalysisAttributes {
  std::optional<analysis::HistogramSpec> statistics;
  double until_steady = 0;  // 0: never settled
  std::int64_t steady_images = 0;
  bool classify = false;
};
void write_analysis_attributes(hid_t root, const AnalysisAttributes& analysis);

// Where a simulation stood towards settling at its newest checkpoint, in a file made with
// --until-steady, so that a continued run or sweep settles where an uninterrupted one does: the
// change of v per step of the images before the checkpoint (newest last, at most the criterion's
// image count), and the image it settled at (-1: it had not).
struct SteadyHistory {
  std::vector<double> recent_changes;
  std::int64_t settled_image = -1;
};
// One simulation's history from its series of changes per step (`changes`, one per image) and
// its newest checkpoint after `checkpoint_images` images, as `analysis` asked: the changes of at
// most its steady_images images before the checkpoint, and `settled_image` where the checkpoint
// holds it (the simulation frozen there since).
SteadyHistory steady_history(const AnalysisAttributes& analysis, std::span<const double> changes,
                             std::int64_t checkpoint_images, std::int64_t settled_image = -1);
AnalysisAttributes read_analysis_attributes(const RunFileReader& file);

}  // namespace grayscott::io
