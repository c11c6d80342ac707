// A few of the published (F, k) points whose class is not in doubt, run on the CPU engine with
// the validation's setup (docs/classification.md: Pearson's rates and start on a periodic 128x128
// grid, five-point Laplacian, Du = 0.2097, Dv = 0.1049, dt = 1) and classified from the last image
// and its change over the last 200 steps. Fewer steps than the validation's 30000, as many as each
// point needs to show its published class: a few seconds per point on two cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/classify.hpp"
#include "engine/engine.hpp"
#include "model/model.hpp"

namespace grayscott::analysis {
namespace {

struct Point {
  const char* name;  // Pearson's (or Munafo's) class and where it comes from
  double feed, kill;
  std::int64_t steps;
  PatternClass expected;
};

void PrintTo(const Point& p, std::ostream* os) { *os << p.name; }

// Pearson's start (bench/classification.py): u = 1, v = 0, a central square of 20x20 cells at
// u = 1/2, v = 1/4, and +-1 % noise on both fields (v kept non-negative), from a fixed generator.
void pearson_start(std::int64_t side, std::vector<float>& u, std::vector<float>& v) {
  std::uint64_t state = 1;
  const auto noise = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state >> 11) * 0x1.0p-53 * 2 - 1) * 0.01;
  };
  const std::int64_t lo = side / 2 - 10;
  for (std::int64_t r = 0; r < side; ++r) {
    for (std::int64_t c = 0; c < side; ++c) {
      const bool inside = r >= lo && r < lo + 20 && c >= lo && c < lo + 20;
      const auto i = static_cast<std::size_t>(r * side + c);
      u[i] = static_cast<float>((inside ? 0.5 : 1.0) + noise());
      v[i] = static_cast<float>(std::max(0.0, (inside ? 0.25 : 0.0) + noise()));
    }
  }
}

// The image after `steps` steps and the change per step over the last `gap` of them.
Classification simulate(const Point& point, std::int64_t side, std::int64_t gap) {
  Problem problem;
  problem.grid = {side, side};
  problem.stencil = Stencil::five_point();
  problem.boundary = Boundary::Periodic;
  problem.precision = Precision::Single;
  problem.params = {point.feed, point.kill, 0.2097, 0.1049, 1.0};
  problem.validate();
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  std::vector<float> u(cells), v(cells), before(cells);
  pearson_start(side, u, v);
  EngineOptions options;
  options.backend = "cpu";
  const Parameters rates[1] = {problem.params};
  auto engine = make_engine<float>(problem, rates, options);
  engine->load(0, u, v);
  engine->advance(point.steps - gap);
  engine->copy_state(0, nullptr, before.data());
  engine->advance(gap);
  engine->copy_state(0, nullptr, v.data());
  const double change =
      change_per_step(std::span<const float>(before), std::span<const float>(v), gap);
  return classify(std::span<const float>(v), side, side, true, change);
}

class PublishedPoint : public ::testing::TestWithParam<Point> {};

TEST_P(PublishedPoint, HasItsPublishedClass) {
  const Point& point = GetParam();
  const Classification c = simulate(point, 128, 200);
  const Features& f = c.features;
  EXPECT_EQ(to_string(c.pattern), to_string(point.expected))
      << point.name << " F=" << point.feed << " k=" << point.kill << ": covered " << f.covered
      << ", objects " << f.objects.count << " (round " << f.objects.round_fraction << "), holes "
      << f.holes.count << " (round " << f.holes.round_fraction << "), change " << f.change_per_step;
}

// Steps: enough for the start to have grown over the 128x128 grid and settled (or, for the
// chaotic classes, to be still moving).
INSTANTIATE_TEST_SUITE_P(
    Pearson, PublishedPoint,
    ::testing::Values(Point{"beta", 0.026, 0.051, 6000, PatternClass::Waves},
                      Point{"delta", 0.030, 0.055, 15000, PatternClass::Holes},
                      Point{"iota", 0.046, 0.0594, 15000, PatternClass::Holes},
                      Point{"lambda", 0.026, 0.061, 15000, PatternClass::Spots},
                      Point{"theta", 0.038, 0.061, 10000, PatternClass::Stripes},
                      Point{"red", 0.030, 0.070, 3000, PatternClass::Decayed}),
    [](const ::testing::TestParamInfo<Point>& point) { return std::string(point.param.name); });

}  // namespace
}  // namespace grayscott::analysis
