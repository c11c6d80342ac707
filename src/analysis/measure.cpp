// The statistics of one member's image: vectorised passes over blocks of cells that stay in the
// first-level cache, on the threads of an OpenMP team.
//
// Compiled with -fno-trapping-math (src/CMakeLists.txt): under the default, GCC may not evaluate
// both sides of a comparison's choice in a vector (either could raise a floating-point exception
// flag), so the histogram's bin search would stay scalar. No flag is read here or anywhere in the
// project, and no value changes: contraction stays off, nothing is reassociated.
#include "analysis/measure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace grayscott::analysis {
namespace {

// Adds n values of one field to its sums (about `shift`, see FieldSums), vectorised.
template <class Real>
void add_field(FieldSums& sums, const Real* x, std::size_t n, double shift) {
  double lo = sums.min, hi = sums.max, s = 0, ss = 0;
#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : s, ss)
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
    s += d - shift;
    ss += (d - shift) * (d - shift);
  }
  sums.min = lo;
  sums.max = hi;
  sums.sum += s;
  sums.sum_squares += ss;
}

// Counts values into a histogram's bins, into interleaved tallies per bin: most cells of a grid
// lie in few bins (v near 0 where nothing grew), and counting a run of them into one tally makes
// each increment wait for the one before it.
class BinCounter {
 public:
  explicit BinCounter(const HistogramSpec& spec)
      : spec_(spec),
        copies_(spec.bins <= 4096 ? interleaved : 1),
        tallies_(static_cast<std::size_t>(copies_) * static_cast<std::size_t>(spec.bins), 0) {
    const double scale = spec.bins / (spec.high - spec.low);
    low_ = static_cast<float>(spec.low);
    scale_ = static_cast<float>(scale);
    // How far a position computed in single precision can be from the exact one, eight times
    // over: the rounding of low and of the scale (half an ulp each, relative), of the difference
    // and of the product, each at most 2^-24 of its size.
    margin_ = 8.0f * 0x1p-24f * static_cast<float>(std::abs(spec.low) * scale + spec.bins + 1);
  }

  // Counts n <= block values.
  template <class Real>
  void count(const Real* x, std::size_t n) {
    alignas(64) std::int32_t bins[block];
    if (!(std::is_same_v<Real, float> && margin_ < 0.25f && single_precision_bins(x, n, bins))) {
#pragma omp simd
      for (std::size_t i = 0; i < n; ++i) bins[i] = spec_.bin_of<Real>(x[i]);
    }
    std::uint64_t* tally = tallies_.data();
    const std::size_t stride = static_cast<std::size_t>(spec_.bins);
    std::size_t i = 0;
    if (copies_ == interleaved) {
      for (; i + interleaved <= n; i += interleaved) {
#pragma GCC unroll 8
        for (std::size_t k = 0; k < interleaved; ++k) ++tally[k * stride + bins[i + k]];
      }
    }
    for (; i < n; ++i) ++tally[bins[i]];
  }

  void add_to(std::vector<std::uint64_t>& histogram) const {
    const std::size_t bins = static_cast<std::size_t>(spec_.bins);
    histogram.resize(bins, 0);
    for (int copy = 0; copy < copies_; ++copy)
      for (std::size_t b = 0; b < bins; ++b) histogram[b] += tallies_[copy * bins + b];
  }

  // Tallies per bin where the bins are few enough, each value counted into the next: eight took
  // 1.8-1.9 ms an image of the course's grid on two cores, four 2.2, sixteen no less than eight.
  static constexpr int interleaved = 8;
  // The values a pass takes at a time: they stay in the first-level cache between the passes of
  // the reductions and the counts over them.
  static constexpr std::size_t block = 2048;

 private:
  // The bins of single-precision values found in single precision, sixteen to a 512-bit vector
  // instead of eight: the position rounds differently from HistogramSpec::bin_of's, which decides
  // only where it lies within margin_ of an edge between two bins. False when some value does
  // (one block in ten, for values spread evenly over 50 bins); bin_of then takes the block.
  template <class Real>
  bool single_precision_bins(const Real* x, std::size_t n, std::int32_t* bins) const {
    const float low = low_, scale = scale_, margin = margin_;
    const float last = static_cast<float>(spec_.bins - 1);
    int doubtful = 0;
#pragma omp simd reduction(| : doubtful)
    for (std::size_t i = 0; i < n; ++i) {
      const float position = (static_cast<float>(x[i]) - low) * scale;
      // NaN falls in the first bin: the comparison is false.
      const float above = position > 0.0f ? position : 0.0f;
      const float clamped = above < last ? above : last;
      const auto bin = static_cast<std::int32_t>(clamped);
      bins[i] = bin;
      // The edge nearest the position, and whether it is one between two bins (1 to bins - 1).
      const float nearest = std::nearbyint(position);
      const float off = position - nearest;
      doubtful |= static_cast<int>((off < margin) & (off > -margin) & (nearest >= 1.0f) &
                                   (nearest <= last));
    }
    return doubtful == 0;
  }

  HistogramSpec spec_;
  float low_ = 0, scale_ = 0, margin_ = 0;
  int copies_;
  std::vector<std::uint64_t> tallies_;
};

// The sums over `cells` values of u and v (either may be null: its sums stay empty) and the
// change from `v_before` (null: none), which then takes v's values (the next image's "before",
// in the same pass over memory), on the calling thread; v's values counted into `counter`.
template <class Real>
void accumulate(ImageSums& sums, BinCounter& counter, const Real* u, const Real* v,
                Real* v_before, std::size_t cells) {
  constexpr std::size_t block = BinCounter::block;
  for (std::size_t begin = 0; begin < cells; begin += block) {
    const std::size_t n = std::min(block, cells - begin);
    if (u != nullptr) add_field(sums.u, u + begin, n, u_shift);
    if (v != nullptr) {
      const Real* x = v + begin;
      add_field(sums.v, x, n, v_shift);
      if (v_before != nullptr) {
        Real* b = v_before + begin;
        double largest = sums.change_max, squares = 0;
#pragma omp simd reduction(max : largest) reduction(+ : squares)
        for (std::size_t i = 0; i < n; ++i) {
          const double d = static_cast<double>(x[i]) - static_cast<double>(b[i]);
          largest = std::max(largest, std::abs(d));
          squares += d * d;
          b[i] = x[i];
        }
        sums.change_max = largest;
        sums.change_sum_squares += squares;
      }
      counter.count(x, n);
    }
  }
  sums.cells += cells;
  sums.has_change = v_before != nullptr;
}

}  // namespace

template <class Real>
ImageSums member_sums(const HistogramSpec& spec, const Real* u, const Real* v,
                      Real* v_before, std::size_t cells) {
  constexpr std::size_t chunk_cells = 4096;
  const std::size_t chunks = (cells + chunk_cells - 1) / chunk_cells;
  std::vector<double> chunk_sums(chunks * 5);
  ImageSums total;
  total.histogram.assign(static_cast<std::size_t>(spec.bins), 0);
  // Small images on one thread: a team costs more than it saves below ~128k cells.
#pragma omp parallel if (cells >= (std::size_t{1} << 17))
  {
    ImageSums mine;
    BinCounter counter(spec);
#pragma omp for schedule(static) nowait
    for (std::int64_t chunk = 0; chunk < static_cast<std::int64_t>(chunks); ++chunk) {
      const std::size_t begin = static_cast<std::size_t>(chunk) * chunk_cells;
      const std::size_t n = std::min(chunk_cells, cells - begin);
      const FieldSums u_before = mine.u, v_before_sums = mine.v;
      const double change_before = mine.change_sum_squares;
      mine.u.sum = mine.u.sum_squares = mine.v.sum = mine.v.sum_squares = 0;
      mine.change_sum_squares = 0;
      accumulate(mine, counter, u ? u + begin : nullptr, v ? v + begin : nullptr,
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
    if (v != nullptr) counter.add_to(mine.histogram);
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

template ImageSums member_sums<float>(const HistogramSpec&, const float*, const float*, float*,
                                      std::size_t);
template ImageSums member_sums<double>(const HistogramSpec&, const double*, const double*,
                                       double*, std::size_t);

}  // namespace grayscott::analysis
