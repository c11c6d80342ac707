// What pattern an image of v holds: features of one 2D image (how much of it is covered, its
// connected components and holes, how fast it still changes) and the class they make (decayed,
// uniform, spots, stripes, holes, mixed, waves). Self-contained: it reads a plain row-major array,
// so the run pipeline, the command line and the Python module call it alike, and it names no
// engine and no file.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

namespace grayscott::analysis {

// The classes, in the order of pattern_class_names (their numbers are stable: files store the
// names in this order, and a class is added at the end).
enum class PatternClass : std::uint8_t {
  Decayed,  // uniform, v ~ 0: the unreacted medium (Pearson's red state)
  Uniform,  // uniform and alive: v the same everywhere but not ~ 0 (Pearson's blue state)
  Spots,    // isolated round regions of high v on a low background
  Stripes,  // elongated, branching or connected regions: stripes, worms, labyrinths, rings
  Holes,    // isolated round regions of low v in a high background (negative spots)
  Mixed,    // round and elongated objects side by side, neither dominating (spots and stripes)
  Waves,    // still changing: spatiotemporal chaos, travelling or pulsating structures
};

inline constexpr std::array<std::string_view, 7> pattern_class_names{
    "decayed", "uniform", "spots", "stripes", "holes", "mixed", "waves"};

std::string_view to_string(PatternClass pattern);
// A name of pattern_class_names; throws InvalidInput otherwise.
PatternClass parse_pattern_class(std::string_view name);

// The smallest image classified: fewer rows or columns than this hold too few cells to tell a spot
// from a stripe (a Gray-Scott spot is some 6 to 15 cells across), and are refused.
inline constexpr std::int64_t min_classified_side = 16;

// Connected components of one phase of the thresholded image (v above the threshold, or the holes:
// v at or below it). Components of fewer than min_component_cells cells are left out as noise.
struct PhaseFeatures {
  std::int64_t count = 0;        // components
  double mean_area = 0;          // cells per component
  double area_cv = 0;            // standard deviation of the areas / their mean (0: all alike)
  double mean_roundness = 0;     // 64 A / (pi P^2), capped at 1: a disc 1, a stripe far less
  double mean_elongation = 0;    // sqrt of the ratio of the second moments' eigenvalues: disc 1
  double round_fraction = 0;     // the share of the components' area in round ones (below)
  std::int64_t wrapping = 0;     // components that wrap all the way around a periodic grid
  std::int64_t cut_by_edge = 0;  // components that touch the edge of a non-periodic image
};

// Cells a component needs to be counted: smaller ones are single noisy cells, not structures.
inline constexpr std::int64_t min_component_cells = 3;

// RMS change of v per step between the two images the run pipeline compares: unknown unless set.
inline constexpr double unknown_change = std::numeric_limits<double>::quiet_NaN();

struct Features {
  std::int64_t rows = 0, cols = 0;
  bool periodic = false;
  double v_min = 0, v_max = 0, v_mean = 0;
  // The level that splits the image into objects and background: the midpoint of v's range
  // (see classify.cpp for why).
  double threshold = 0;
  double covered = 0;     // fraction of the cells with v above the threshold
  PhaseFeatures objects;  // components of v > threshold (8-connected)
  PhaseFeatures holes;    // components of v <= threshold (4-connected)
  // sqrt(mean((v_i - v_{i-1})^2)) / (steps between images i-1 and i): how much v still changes,
  // per step (grid units: with dt = 1, per unit of model time). NaN: not known (one image). The
  // image loop's statistics hold the same number (ImageStatistics::change_rms_per_step in
  // analysis/statistics.hpp).
  double change_per_step = unknown_change;
};

// The thresholds of classify(), with the values docs/classification.md validates and explains.
struct Thresholds {
  // v_max - v_min below this: a uniform image (Gray-Scott's v spans 0 to ~0.5; a pattern's
  // contrast is 0.2 or more, rounding and slow relaxation leave far less than 0.01).
  double uniform_range = 0.01;
  // A uniform image whose mean v is below this is the unreacted medium (decayed).
  double decayed_level = 0.01;
  // More change per step than this: waves. Measured on Pearson's points (docs/classification.md):
  // chaos and pulsating spots change by 9e-5 to 6e-4 per step, a pattern still growing into the
  // unreacted medium by at most 4e-5 (its growth front), a settled one by less than 1e-5.
  double waves_change = 6e-5;
  // A component is round when its elongation is at most this and its roundness at least
  // round_min_roundness (and it does not wrap around the grid).
  double round_max_elongation = 2.0;
  double round_min_roundness = 0.5;
  // Share of the minority phase's area in round components: at least spots_min_round makes spots
  // (or holes: at most a tenth of the area elongated), at most stripes_max_round stripes (at
  // least three quarters elongated: stripe patterns carry short pieces and a few solitons),
  // between the two mixed.
  double spots_min_round = 0.9;
  double stripes_max_round = 0.25;
};

// The features of one image of v, rows x cols, row-major. `periodic`: the image wraps around (a
// component crossing an edge is one component). `change_per_step` is stored as given (NaN: not
// known); `thresholds` says which components are round (round_fraction). Throws InvalidInput for
// a grid smaller than min_classified_side on either side, a size that does not match rows x cols,
// or a value that is not finite.
Features features(std::span<const float> v, std::int64_t rows, std::int64_t cols, bool periodic,
                  double change_per_step = unknown_change, const Thresholds& thresholds = {});
Features features(std::span<const double> v, std::int64_t rows, std::int64_t cols, bool periodic,
                  double change_per_step = unknown_change, const Thresholds& thresholds = {});

// The class that features make (see Thresholds; the round_* ones act in features()).
PatternClass classify(const Features& features, const Thresholds& thresholds = {});

struct Classification {
  PatternClass pattern = PatternClass::Decayed;
  Features features;
};

// Both at once: the entry point for the run pipeline and the front ends.
Classification classify(std::span<const float> v, std::int64_t rows, std::int64_t cols,
                        bool periodic, double change_per_step = unknown_change,
                        const Thresholds& thresholds = {});
Classification classify(std::span<const double> v, std::int64_t rows, std::int64_t cols,
                        bool periodic, double change_per_step = unknown_change,
                        const Thresholds& thresholds = {});

// sqrt(mean((current - previous)^2)) / steps: what features() takes as change_per_step, from two
// images `steps` steps apart. Throws InvalidInput for sizes that differ, an empty image or
// steps < 1.
double change_per_step(std::span<const float> previous, std::span<const float> current,
                       std::int64_t steps);
double change_per_step(std::span<const double> previous, std::span<const double> current,
                       std::int64_t steps);

}  // namespace grayscott::analysis
