// The statistics of one member's image (analysis/statistics.hpp), computed on the threads of an
// OpenMP team: whoever includes this compiles with OpenMP.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "analysis/statistics.hpp"

namespace grayscott::analysis {

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

// The sums over `cells` values of u and v (either may be null: its sums stay empty) and the
// change from `v_before` (null: none), which then takes v's values (the next image's "before",
// in the same pass over memory), on the calling thread. The histogram must be sized.
template <class Real>
void accumulate(ImageSums& sums, const HistogramSpec& spec, const Real* u, const Real* v,
                Real* v_before, std::size_t cells) {
  // Blocks that stay in the first-level cache: one pass of vectorised reductions, one of
  // histogram counts (which do not vectorise) over the same values.
  constexpr std::size_t block = 2048;
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
