// Helpers shared by the engine tests of every backend: states that exercise every cell, and
// comparisons against the float64 reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "reference/reference.hpp"

namespace grayscott {
// Readable names for parameterised tests.
inline void PrintTo(const Stencil& s, std::ostream* os) { *os << s.name(); }
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

// A reproducible state with every cell different, so that a wrong neighbour, edge or boundary
// cannot hide in a uniform region. u in [0.3, 1], v in [0, 0.5].
inline reference::State varied_state(std::int64_t rows, std::int64_t cols, std::uint32_t seed = 1) {
  reference::State s{rows, cols, std::vector<double>(rows * cols),
                     std::vector<double>(rows * cols)};
  std::uint32_t x = seed * 2654435761u + 12345u;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return static_cast<double>(x % 1000003u) / 1000003.0;
  };
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    s.u[i] = 0.3 + 0.7 * next();
    s.v[i] = 0.5 * next();
  }
  return s;
}

inline reference::Boundary to_reference(Boundary b) {
  switch (b) {
    case Boundary::ZeroFlux:
      return reference::Boundary::ZeroFlux;
    case Boundary::Periodic:
      return reference::Boundary::Periodic;
    case Boundary::Fixed:
      return reference::Boundary::Fixed;
  }
  return reference::Boundary::ZeroFlux;
}

inline reference::Model to_reference(const Problem& p) {
  return {p.stencil.weights, to_reference(p.boundary),
          p.params.feed,     p.params.kill,
          p.params.du,       p.params.dv,
          p.params.dt};
}

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

}  // namespace grayscott::testing
