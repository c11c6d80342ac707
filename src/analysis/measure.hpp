// The statistics of one member's image (analysis/statistics.hpp), computed on the threads of an
// OpenMP team (analysis/measure.cpp, for float and double).
#pragma once

#include <cstddef>

#include "analysis/statistics.hpp"

namespace grayscott::analysis {

// The sums of one member's image of `cells` values of u and v (either may be null: its sums
// stay empty), v counted into spec's histogram, and the change from `v_before` (null: none),
// which then takes v's values (the next image's "before", in the same pass over memory). Its
// cells are split among the threads of an OpenMP team; the floating-point sums are kept per chunk
// of cells and added in chunk order, so that they come out the same for any number of threads (a
// resumed run may use another); counts and extremes need no order.
template <class Real>
ImageSums member_sums(const HistogramSpec& spec, const Real* u, const Real* v, Real* v_before,
                      std::size_t cells);

extern template ImageSums member_sums<float>(const HistogramSpec&, const float*, const float*,
                                             float*, std::size_t);
extern template ImageSums member_sums<double>(const HistogramSpec&, const double*, const double*,
                                              double*, std::size_t);

}  // namespace grayscott::analysis
