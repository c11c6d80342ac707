// Statistics of every image, computed in the time loop from the image it already holds: the
// range, mean and standard deviation of u and v, a histogram of v (as ADIOS2's Gray-Scott
// example computes in situ), and how much v changed since the previous image. Threads split a
// member's cells; the processes stepping one grid merge their sums (ImageSums::merge, or an
// allreduce of the same numbers), so the result does not depend on how the grid was split
// beyond the rounding of a sum.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace grayscott::analysis {

// The histogram of v: `bins` equal bins over [low, high]. A value below low counts in the first
// bin, one above high in the last, so that the counts always add up to the cells.
struct HistogramSpec {
  int bins = 50;
  double low = 0.0;
  double high = 1.0;
  static constexpr int max_bins = 1'000'000;
  // Throws InvalidInput: bins from 1 to max_bins, low < high, both finite.
  void validate() const {
    if (bins < 1 || bins > max_bins) {
      throw InvalidInput("histogram-bins must be a whole number from 1 to " +
                         std::to_string(max_bins) + ", got " + std::to_string(bins));
    }
    if (!std::isfinite(low) || !std::isfinite(high) || !(low < high)) {
      throw InvalidInput("histogram-range must be two finite numbers LOW,HIGH with LOW < HIGH, got " +
                         shortest_text(low) + "," + shortest_text(high));
    }
  }
  int bin_of(double x) const {
    const double position = (x - low) / (high - low) * bins;
    // NaN (a member of a sweep that diverged) falls in the first bin: the comparisons are false.
    if (!(position >= 1.0)) return 0;
    if (!(position < bins)) return bins - 1;
    return static_cast<int>(position);
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
};

// The statistics' names, in ImageStatistics' order of its values (the files' /stats/<name>).
inline constexpr const char* statistics_names[] = {
    "u_min", "u_max", "u_mean", "u_std", "v_min", "v_max", "v_mean", "v_std", "change_max",
    "change_rms_per_step"};

// ImageStatistics' values in the order of statistics_names.
inline std::array<double, 10> statistics_values(const ImageStatistics& s) {
  return {s.u_min, s.u_max, s.u_mean, s.u_std, s.v_min,
          s.v_max, s.v_mean, s.v_std, s.change_max, s.change_rms_per_step};
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

// The sums over `cells` values of u and v (either may be null: its sums stay empty) and the
// change from `v_before` (null: none), on the calling thread. The histogram must be sized.
template <class Real>
void accumulate(ImageSums& sums, const HistogramSpec& spec, const Real* u, const Real* v,
                const Real* v_before, std::size_t cells) {
  // Blocks that stay in the first-level cache: one pass of vectorised reductions, one of
  // histogram counts (which do not vectorise) over the same values.
  constexpr std::size_t block = 2048;
  for (std::size_t begin = 0; begin < cells; begin += block) {
    const std::size_t n = std::min(block, cells - begin);
    if (u != nullptr) {
      const Real* x = u + begin;
      double lo = sums.u.min, hi = sums.u.max, s = 0, ss = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : s, ss)
      for (std::size_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(x[i]);
        lo = std::min(lo, d);
        hi = std::max(hi, d);
        s += d - u_shift;
        ss += (d - u_shift) * (d - u_shift);
      }
      sums.u.min = lo;
      sums.u.max = hi;
      sums.u.sum += s;
      sums.u.sum_squares += ss;
    }
    if (v != nullptr) {
      const Real* x = v + begin;
      double lo = sums.v.min, hi = sums.v.max, s = 0, ss = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : s, ss)
      for (std::size_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(x[i]);
        lo = std::min(lo, d);
        hi = std::max(hi, d);
        s += d - v_shift;
        ss += (d - v_shift) * (d - v_shift);
      }
      sums.v.min = lo;
      sums.v.max = hi;
      sums.v.sum += s;
      sums.v.sum_squares += ss;
      if (v_before != nullptr) {
        const Real* b = v_before + begin;
        double largest = sums.change_max, squares = 0;
#pragma omp simd reduction(max : largest) reduction(+ : squares)
        for (std::size_t i = 0; i < n; ++i) {
          const double d = static_cast<double>(x[i]) - static_cast<double>(b[i]);
          largest = std::max(largest, std::abs(d));
          squares += d * d;
        }
        sums.change_max = largest;
        sums.change_sum_squares += squares;
      }
      std::uint64_t* counts = sums.histogram.data();
      for (std::size_t i = 0; i < n; ++i) ++counts[spec.bin_of(static_cast<double>(x[i]))];
    }
  }
  sums.cells += cells;
  sums.has_change = v_before != nullptr;
}

// The sums of one member's image, its cells split among the threads of an OpenMP team. The
// floating-point sums are kept per chunk of cells and added in chunk order, so that they come out
// the same for any number of threads (a resumed run may use another); counts, extremes need no
// order.
template <class Real>
ImageSums member_sums(const HistogramSpec& spec, const Real* u, const Real* v,
                      const Real* v_before, std::size_t cells) {
  constexpr std::size_t chunk_cells = 4096;
  const std::size_t chunks = (cells + chunk_cells - 1) / chunk_cells;
  std::vector<double> chunk_sums(chunks * 5);
  ImageSums total;
  total.histogram.assign(static_cast<std::size_t>(spec.bins), 0);
  // Small images on one thread: a team costs more than it saves below ~128k cells.
#pragma omp parallel if (cells >= (std::size_t{1} << 17))
  {
    ImageSums mine;
    mine.histogram.assign(static_cast<std::size_t>(spec.bins), 0);
#pragma omp for schedule(static) nowait
    for (std::int64_t chunk = 0; chunk < static_cast<std::int64_t>(chunks); ++chunk) {
      const std::size_t begin = static_cast<std::size_t>(chunk) * chunk_cells;
      const std::size_t n = std::min(chunk_cells, cells - begin);
      const FieldSums u_before = mine.u, v_before_sums = mine.v;
      const double change_before = mine.change_sum_squares;
      mine.u.sum = mine.u.sum_squares = mine.v.sum = mine.v.sum_squares = 0;
      mine.change_sum_squares = 0;
      accumulate(mine, spec, u ? u + begin : nullptr, v ? v + begin : nullptr,
                 v_before ? v_before + begin : nullptr, n);
      double* out = &chunk_sums[static_cast<std::size_t>(chunk) * 5];
      out[0] = mine.u.sum;
      out[1] = mine.u.sum_squares;
      out[2] = mine.v.sum;
      out[3] = mine.v.sum_squares;
      out[4] = mine.change_sum_squares;
      mine.u.sum = u_before.sum;
      mine.u.sum_squares = u_before.sum_squares;
      mine.v.sum = v_before_sums.sum;
      mine.v.sum_squares = v_before_sums.sum_squares;
      mine.change_sum_squares = change_before;
    }
#pragma omp critical(grayscott_statistics_merge)
    total.merge(mine);  // extremes and counts: any order gives the same
  }
  total.u.sum = total.u.sum_squares = total.v.sum = total.v.sum_squares = 0;
  total.change_sum_squares = 0;
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    const double* in = &chunk_sums[chunk * 5];
    total.u.sum += in[0];
    total.u.sum_squares += in[1];
    total.v.sum += in[2];
    total.v.sum_squares += in[3];
    total.change_sum_squares += in[4];
  }
  total.cells = cells;
  total.has_change = v_before != nullptr;
  return total;
}

}  // namespace grayscott::analysis
