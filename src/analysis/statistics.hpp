// Statistics of every image, computed in the time loop from the image it already holds: the
// range, mean and standard deviation of u and v, a histogram of v (as ADIOS2's Gray-Scott
// example computes in situ), and how much v changed since the previous image. What they are and
// how they merge; analysis/measure.hpp computes them. The processes stepping one grid merge
// their sums (ImageSums::merge, or an allreduce of the same numbers), so the result does not
// depend on how the grid was split beyond the rounding of a sum.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/histogram_bin.hpp"
#include "model/model.hpp"

namespace grayscott::analysis {

// The histogram of v: `bins` equal bins over [low, high]. A value below low counts in the first
// bin, one above high in the last, so that the counts always add up to the cells.
struct HistogramSpec {
  int bins = 50;
  double low = 0.0;
  double high = 1.0;
  static constexpr int max_bins = 1'000'000;
  // The histogram a front end asks for, checked: throws InvalidInput naming its settings (the
  // command line's histogram-bins and histogram-range unless told otherwise) for bins outside 1 to
  // max_bins, a range that is not two finite numbers low < high, or one whose edges, rounded to
  // the field's `precision` (float32 for a single-precision run), would not be distinct numbers:
  // beyond its range, closer together than two of its steps at the range's ends, or below its
  // smallest normal numbers (-1e39,1e39 put every value of v in the last bin of a float32 run).
  static HistogramSpec checked(std::int64_t bins, double low, double high,
                               std::string_view bins_name = "histogram-bins",
                               std::string_view range_name = "histogram-range",
                               Precision precision = Precision::Double) {
    if (bins < 1 || bins > max_bins) {
      throw InvalidInput(std::string(bins_name) + " must be a whole number from 1 to " +
                         std::to_string(max_bins) + ", got " + std::to_string(bins));
    }
    if (!std::isfinite(low) || !std::isfinite(high) || !(low < high)) {
      throw InvalidInput(std::string(range_name) +
                         " must be two finite numbers LOW,HIGH with LOW < HIGH, got " +
                         shortest_text(low) + "," + shortest_text(high));
    }
    const bool single = precision == Precision::Single;
    const double epsilon =
        single ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    const double largest =
        single ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
    const double smallest =
        single ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
    const double magnitude = std::max(std::fabs(low), std::fabs(high));
    const double bin_width = (high - low) / static_cast<double>(bins);
    if (magnitude > largest / 4 || !std::isfinite(high - low) ||
        !(bin_width >= std::max(2 * epsilon * magnitude, smallest))) {
      throw InvalidInput(std::string(range_name) + " " + shortest_text(low) + "," +
                         shortest_text(high) + " in " + std::to_string(bins) +
                         " bins: the edges are not distinct " + (single ? "single" : "double") +
                         "-precision numbers (each bin must span two of their steps at the "
                         "range's ends)");
    }
    return {static_cast<int>(bins), low, high};
  }
  void validate() const { checked(bins, low, high); }
  // The bin of x, as numpy.histogram finds it (analysis/histogram_bin.hpp).
  template <class Real>
  int bin_of(Real x) const {
    return histogram_bin<Real>(x, bins, low, high);
  }
};

// One field's sums: extremes, and the sum and sum of squares of x - shift (u about 1 and v about
// 0, the feed's rest state that most cells sit near, so that a small spread is not lost to
// cancellation in sum of squares minus square of sum).
struct FieldSums {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  double sum_squares = 0;
  void merge(const FieldSums& other) {
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    sum += other.sum;
    sum_squares += other.sum_squares;
  }
};

// Everything the statistics of one image are made of, for one member; mergeable.
struct ImageSums {
  std::uint64_t cells = 0;
  FieldSums u, v;
  double change_max = 0;          // the largest |v - v before|
  double change_sum_squares = 0;  // the sum of (v - v before)^2
  bool has_change = false;        // a previous image (or the start) was known
  std::vector<std::uint64_t> histogram;
  void merge(const ImageSums& other) {
    cells += other.cells;
    u.merge(other.u);
    v.merge(other.v);
    change_max = std::max(change_max, other.change_max);
    change_sum_squares += other.change_sum_squares;
    if (histogram.size() < other.histogram.size()) histogram.resize(other.histogram.size());
    for (std::size_t i = 0; i < other.histogram.size(); ++i) histogram[i] += other.histogram[i];
  }
};

// The statistics of one image of one member, as written to the file.
struct ImageStatistics {
  double u_min = NAN, u_max = NAN, u_mean = NAN, u_std = NAN;
  double v_min = NAN, v_max = NAN, v_mean = NAN, v_std = NAN;
  double change_max = NAN;           // max |v - v at the previous image| (or at the start)
  double change_rms_per_step = NAN;  // sqrt(mean((v - v before)^2)) / steps between them
  std::vector<std::uint64_t> histogram;
  // With --classify (analysis/classify.hpp): the pattern class, by its number in
  // pattern_class_names (-1: not classified, e.g. a member that diverged), and the features that
  // made it.
  int pattern_class = -1;
  double covered = NAN;           // fraction of the cells above the threshold
  double objects = NAN;           // components of v above it
  double holes = NAN;             // components of v at or below it
  double object_mean_area = NAN;  // cells per object
  double round_fraction = NAN;    // share of the minority phase's area in round components
};

// The classification's features, in the order of classification_values (the files'
// /stats/<name> beside /stats/class).
inline constexpr const char* classification_names[] = {"covered", "objects", "holes",
                                                      "object_mean_area", "round_fraction"};

// The statistics' names, in ImageStatistics' order of its values (the files' /stats/<name>).
inline constexpr const char* statistics_names[] = {
    "u_min", "u_max", "u_mean", "u_std", "v_min", "v_max", "v_mean", "v_std", "change_max",
    "change_rms_per_step"};

// ImageStatistics' values in the order of statistics_names.
inline std::array<double, 10> statistics_values(const ImageStatistics& s) {
  return {s.u_min, s.u_max, s.u_mean, s.u_std, s.v_min,
          s.v_max, s.v_mean, s.v_std, s.change_max, s.change_rms_per_step};
}

inline std::array<double, 5> classification_values(const ImageStatistics& s) {
  return {s.covered, s.objects, s.holes, s.object_mean_area, s.round_fraction};
}

constexpr double u_shift = 1.0;
constexpr double v_shift = 0.0;

inline ImageStatistics finish(const ImageSums& sums, std::int64_t steps_between) {
  ImageStatistics s;
  s.histogram = sums.histogram;
  if (sums.cells == 0) return s;
  const double n = static_cast<double>(sums.cells);
  const auto mean_and_std = [n](const FieldSums& f, double shift, double& mean, double& std) {
    const double shifted_mean = f.sum / n;
    mean = shift + shifted_mean;
    std = std::sqrt(std::max(0.0, f.sum_squares / n - shifted_mean * shifted_mean));
  };
  if (sums.u.min <= sums.u.max) {
    s.u_min = sums.u.min;
    s.u_max = sums.u.max;
    mean_and_std(sums.u, u_shift, s.u_mean, s.u_std);
  }
  if (sums.v.min <= sums.v.max) {
    s.v_min = sums.v.min;
    s.v_max = sums.v.max;
    mean_and_std(sums.v, v_shift, s.v_mean, s.v_std);
  }
  if (sums.has_change && steps_between > 0) {
    s.change_max = sums.change_max;
    s.change_rms_per_step =
        std::sqrt(sums.change_sum_squares / n) / static_cast<double>(steps_between);
  }
  return s;
}

}  // namespace grayscott::analysis
