// Helpers shared by the engine tests of every backend: states that exercise every cell, and
// comparisons against the float64 reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "reference/from_model.hpp"
#include "reference/reference.hpp"

namespace grayscott {
// Readable names for parameterised tests.
inline void PrintTo(const Stencil& s, std::ostream* os) { *os << s.name(); }
inline void PrintTo(Boundary b, std::ostream* os) { *os << to_string(b); }
}  // namespace grayscott

namespace grayscott::testing {

// A stable problem (the comparisons must not be between two NaNs) with rates that exercise both
// reaction terms.
inline Problem stable_problem(std::int64_t rows, std::int64_t cols, const Stencil& stencil,
                              Boundary boundary, Precision precision) {
  Problem problem;
  problem.grid = {rows, cols};
  problem.stencil = stencil;
  problem.boundary = boundary;
  problem.precision = precision;
  problem.params = {0.03, 0.06, 0.2, 0.1, 0.5};
  problem.validate();
  return problem;
}

// Parameterised engine tests: (stencil, boundary, rows x cols), named e.g. oono_puri_periodic_3x5.
using Shape = std::pair<std::int64_t, std::int64_t>;
using EngineCase = std::tuple<Stencil, Boundary, Shape>;

inline std::string engine_case_name(const ::testing::TestParamInfo<EngineCase>& info) {
  const auto& [stencil, boundary, shape] = info.param;
  std::string name = stencil.name() + "_" + std::string(to_string(boundary)) + "_" +
                     std::to_string(shape.first) + "x" + std::to_string(shape.second);
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

using grayscott::to_reference;
using grayscott::varied_state;

// Relative L2 difference ||a - b|| / ||b||.
template <class Real>
double relative_l2(const std::vector<Real>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    norm += b[i] * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

template <class Real>
double max_abs_difference(const std::vector<Real>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - b[i]);
    worst = (d > worst || std::isnan(d)) ? d : worst;
  }
  return worst;
}

// Index of the first value whose bits differ, or -1.
template <class Real>
std::int64_t first_bitwise_difference(const std::vector<Real>& a, const std::vector<Real>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Real)) != 0) return static_cast<std::int64_t>(i);
  }
  return -1;
}

}  // namespace grayscott::testing
