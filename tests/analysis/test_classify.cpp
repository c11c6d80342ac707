// The pattern classifier on synthetic images whose class is known by construction: discs on a
// lattice, parallel stripes, a labyrinth, circular holes, uniform fields, objects that wrap around
// a periodic edge, and every refused input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "analysis/classify.hpp"
#include "model/model.hpp"

namespace grayscott::analysis {
namespace {

using Image = std::vector<double>;

// An image of rows x cols with v = high where inside(r, c), low elsewhere.
Image paint(std::int64_t rows, std::int64_t cols,
            const std::function<bool(std::int64_t, std::int64_t)>& inside, double high = 0.3,
            double low = 0.0) {
  Image v(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      v[static_cast<std::size_t>(r * cols + c)] = inside(r, c) ? high : low;
    }
  }
  return v;
}

// Discs of `radius` centred on a square lattice of `spacing` (offset by `offset`), measured on
// the torus when periodic.
std::function<bool(std::int64_t, std::int64_t)> lattice_discs(double radius, std::int64_t spacing,
                                                              std::int64_t offset) {
  const auto period = static_cast<double>(spacing);
  return [=](std::int64_t r, std::int64_t c) {
    const auto dr = static_cast<double>((r - offset) % spacing + spacing);
    const auto dc = static_cast<double>((c - offset) % spacing + spacing);
    const double y = std::fmod(dr + period / 2, period) - period / 2;
    const double x = std::fmod(dc + period / 2, period) - period / 2;
    return x * x + y * y <= radius * radius;
  };
}

Classification run(const Image& v, std::int64_t rows, std::int64_t cols, bool periodic,
                   double change = unknown_change) {
  return classify(std::span<const double>(v), rows, cols, periodic, change);
}

TEST(ClassNames, AreStableAndRoundTrip) {
  const std::vector<std::string> expected{"decayed", "uniform", "spots", "stripes",
                                          "holes",   "mixed",   "waves"};
  ASSERT_EQ(pattern_class_names.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(pattern_class_names[i], expected[i]);
    EXPECT_EQ(to_string(static_cast<PatternClass>(i)), expected[i]);
    EXPECT_EQ(parse_pattern_class(expected[i]), static_cast<PatternClass>(i));
  }
  EXPECT_THROW(parse_pattern_class("labyrinth"), InvalidInput);
}

TEST(Classify, DiscsOnALatticeAreSpots) {
  for (const bool periodic : {true, false}) {
    const auto c = run(paint(128, 128, lattice_discs(5.0, 16, 8)), 128, 128, periodic);
    EXPECT_EQ(c.pattern, PatternClass::Spots) << "periodic " << periodic;
    EXPECT_EQ(c.features.objects.count, 64);
    EXPECT_NEAR(c.features.objects.mean_area, std::numbers::pi * 25, 6.0);
    EXPECT_LT(c.features.objects.area_cv, 0.01);
    EXPECT_GT(c.features.objects.mean_roundness, 0.8);  // pixel edges: a small disc's is 0.85
    EXPECT_LT(c.features.objects.mean_elongation, 1.1);
    EXPECT_EQ(c.features.holes.count, 1);  // the background, one connected sea
    EXPECT_NEAR(c.features.covered, 64 * std::numbers::pi * 25 / (128.0 * 128), 0.02);
  }
}

TEST(Classify, SmoothSpotsOfAnotherScaleAreSpots) {
  // Gaussian bumps (not a two-level image) of height 0.45 on a background of 0.02: the midpoint
  // threshold cuts each at its half height.
  const std::int64_t rows = 96, cols = 80;
  Image v(static_cast<std::size_t>(rows * cols), 0.02);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const double y = std::fmod(static_cast<double>(r), 24.0) - 12.0;
      const double x = std::fmod(static_cast<double>(c), 20.0) - 10.0;
      v[static_cast<std::size_t>(r * cols + c)] += 0.43 * std::exp(-(x * x + y * y) / 18.0);
    }
  }
  const auto c = run(v, rows, cols, true);
  EXPECT_EQ(c.pattern, PatternClass::Spots);
  EXPECT_EQ(c.features.objects.count, 16);
  EXPECT_NEAR(c.features.threshold, 0.02 + 0.43 / 2, 1e-3);
}

TEST(Classify, ParallelStripesAreStripes) {
  for (const bool periodic : {true, false}) {
    // Sinusoidal stripes along the columns, period 16 (a whole number of periods: they wrap).
    Image v(128 * 128);
    for (std::int64_t r = 0; r < 128; ++r) {
      for (std::int64_t c = 0; c < 128; ++c) {
        v[static_cast<std::size_t>(r * 128 + c)] =
            0.15 + 0.15 * std::sin(2 * std::numbers::pi * static_cast<double>(c) / 16.0);
      }
    }
    const auto c = run(v, 128, 128, periodic);
    EXPECT_EQ(c.pattern, PatternClass::Stripes) << "periodic " << periodic;
    EXPECT_EQ(c.features.objects.count, 8);
    if (periodic) {
      EXPECT_EQ(c.features.objects.wrapping, 8);  // each stripe closes on itself around the torus
    } else {
      EXPECT_EQ(c.features.objects.cut_by_edge, 8);
    }
    EXPECT_NEAR(c.features.covered, 0.5, 0.05);
  }
}

TEST(Classify, ShortParallelWormsAreStripes) {
  // Bars 40 long and 5 wide, far from every edge.
  const auto c = run(paint(128, 128,
                           [](std::int64_t r, std::int64_t col) {
                             return r >= 20 && r < 100 && (col % 16) < 5 && (r % 50) < 40;
                           }),
                     128, 128, false);
  EXPECT_EQ(c.pattern, PatternClass::Stripes);
  EXPECT_GT(c.features.objects.mean_elongation, 5.0);
}

// A labyrinth: the sign of band-passed noise (the difference of two box blurs of a fixed random
// field), whose two phases both meander through the whole grid.
Image labyrinth(std::int64_t n) {
  std::vector<double> noise(static_cast<std::size_t>(n * n));
  std::uint64_t state = 12345;
  for (double& x : noise) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5;
  }
  const auto blur = [n](const std::vector<double>& in, int radius, int passes) {
    std::vector<double> a = in, b(in.size());
    for (int pass = 0; pass < passes; ++pass) {
      for (int axis = 0; axis < 2; ++axis) {
        for (std::int64_t r = 0; r < n; ++r) {
          for (std::int64_t c = 0; c < n; ++c) {
            double sum = 0;
            for (int d = -radius; d <= radius; ++d) {
              const std::int64_t rr = axis == 0 ? (r + d + n) % n : r;
              const std::int64_t cc = axis == 1 ? (c + d + n) % n : c;
              sum += a[static_cast<std::size_t>(rr * n + cc)];
            }
            b[static_cast<std::size_t>(r * n + c)] = sum / (2 * radius + 1);
          }
        }
        std::swap(a, b);
      }
    }
    return a;
  };
  const auto fine = blur(noise, 2, 3), coarse = blur(noise, 6, 3);
  Image v(noise.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = fine[i] - coarse[i] > 0 ? 0.32 : 0.05;
  return v;
}

TEST(Classify, LabyrinthIsStripes) {
  const auto v = labyrinth(128);
  const auto c = run(v, 128, 128, true);
  EXPECT_EQ(c.pattern, PatternClass::Stripes);
  EXPECT_NEAR(c.features.covered, 0.5, 0.1);
  EXPECT_LT(std::max(c.features.objects.round_fraction, c.features.holes.round_fraction), 0.25);
}

TEST(Classify, CircularHolesAreHoles) {
  for (const bool periodic : {true, false}) {
    const auto c = run(paint(128, 128, lattice_discs(4.0, 16, 8), 0.0, 0.35), 128, 128, periodic);
    EXPECT_EQ(c.pattern, PatternClass::Holes) << "periodic " << periodic;
    EXPECT_EQ(c.features.holes.count, 64);
    EXPECT_EQ(c.features.objects.count, 1);
    EXPECT_GT(c.features.covered, 0.5);
  }
}

TEST(Classify, SpotsBesideStripesAreMixed) {
  // The left half discs, the right half bars along the rows: as much area in each.
  const auto discs = lattice_discs(5.0, 16, 8);
  const auto c = run(paint(128, 128,
                           [&](std::int64_t r, std::int64_t col) {
                             if (col < 64) return discs(r, col);
                             return col >= 68 && col < 124 && (r % 16) < 3;
                           }),
                     128, 128, true);
  EXPECT_EQ(c.pattern, PatternClass::Mixed);
  EXPECT_GT(c.features.objects.round_fraction, 0.25);
  EXPECT_LT(c.features.objects.round_fraction, 0.9);
}

TEST(Classify, UniformFields) {
  const Image zero(64 * 64, 0.0);
  EXPECT_EQ(run(zero, 64, 64, true).pattern, PatternClass::Decayed);
  Image tiny(64 * 64, 1e-4);
  tiny[100] = 2e-3;  // a trace left by a decayed pattern
  EXPECT_EQ(run(tiny, 64, 64, false).pattern, PatternClass::Decayed);
  const Image alive(64 * 64, 0.25);
  const auto c = run(alive, 64, 64, true);
  EXPECT_EQ(c.pattern, PatternClass::Uniform);
  EXPECT_DOUBLE_EQ(c.features.v_mean, 0.25);
  EXPECT_EQ(c.features.covered, 0.0);
}

TEST(Classify, ChangingImagesAreWaves) {
  const auto v = paint(128, 128, lattice_discs(5.0, 16, 8));
  EXPECT_EQ(run(v, 128, 128, true, 1e-3).pattern, PatternClass::Waves);
  EXPECT_EQ(run(v, 128, 128, true, 1e-8).pattern, PatternClass::Spots);
  EXPECT_EQ(run(v, 128, 128, true).pattern, PatternClass::Spots);  // change not known
  const Image alive(64 * 64, 0.25);
  EXPECT_EQ(run(alive, 64, 64, true, 1e-3).pattern, PatternClass::Waves);  // a uniform oscillation
}

TEST(Classify, ComponentsAcrossAPeriodicEdgeCountOnce) {
  // One disc centred on the corner: on a torus one spot, in a framed image four quarters.
  const auto corner = [](std::int64_t r, std::int64_t c) {
    const auto y = static_cast<double>(r < 32 ? r : r - 64);
    const auto x = static_cast<double>(c < 32 ? c : c - 64);
    return x * x + y * y <= 36.0;
  };
  const auto v = paint(64, 64, corner);
  const auto torus = run(v, 64, 64, true);
  EXPECT_EQ(torus.features.objects.count, 1);
  EXPECT_EQ(torus.features.objects.wrapping, 0);  // crosses the edges, does not go around
  EXPECT_NEAR(torus.features.objects.mean_area, std::numbers::pi * 36, 8.0);
  EXPECT_LT(torus.features.objects.mean_elongation, 1.1);
  EXPECT_EQ(torus.pattern, PatternClass::Spots);
  const auto framed = run(v, 64, 64, false);
  EXPECT_EQ(framed.features.objects.count, 4);
  EXPECT_EQ(framed.features.objects.cut_by_edge, 4);

  // A band across the top and bottom rows: one stripe on the torus, two in the frame.
  const auto band = paint(64, 64, [](std::int64_t r, std::int64_t) { return r < 3 || r >= 61; });
  EXPECT_EQ(run(band, 64, 64, true).features.objects.count, 1);
  EXPECT_EQ(run(band, 64, 64, true).features.objects.wrapping, 1);
  EXPECT_EQ(run(band, 64, 64, false).features.objects.count, 2);
  // A hole likewise: the background's components wrap too.
  const auto holes = paint(64, 64, corner, 0.0, 0.3);
  EXPECT_EQ(run(holes, 64, 64, true).features.holes.count, 1);
  EXPECT_EQ(run(holes, 64, 64, false).features.holes.count, 4);
}

TEST(Classify, FloatAndDoubleAgree) {
  const auto v = labyrinth(64);
  const std::vector<float> f(v.begin(), v.end());
  const auto a = run(v, 64, 64, true);
  const auto b = classify(std::span<const float>(f), 64, 64, true);
  EXPECT_EQ(a.pattern, b.pattern);
  EXPECT_EQ(a.features.objects.count, b.features.objects.count);
  EXPECT_EQ(a.features.holes.count, b.features.holes.count);
  EXPECT_NEAR(a.features.covered, b.features.covered, 1e-12);
}

TEST(Classify, RefusesWhatItCannotTell) {
  const Image small(15 * 100, 0.1);
  try {
    run(small, 15, 100, true);
    FAIL() << "a 15x100 image was classified";
  } catch (const InvalidInput& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("15x100"), std::string::npos) << message;
    EXPECT_NE(message.find("16x16"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_THROW(run(Image(16 * 16), 16, 17, true), InvalidInput);  // size does not match
  EXPECT_THROW(run(Image(16 * 16), -16, -16, true), InvalidInput);
  EXPECT_THROW(run(Image(16 * 16), std::int64_t{1} << 40, std::int64_t{1} << 40, true),
               InvalidInput);
  Image nan(16 * 16, 0.1);
  nan[7] = std::nan("");
  EXPECT_THROW(run(nan, 16, 16, true), InvalidInput);
  EXPECT_NO_THROW(run(Image(16 * 16), 16, 16, false));
}

TEST(ChangePerStep, IsRmsDifferencePerStep) {
  const Image a(16 * 16, 0.1), b(16 * 16, 0.4);
  EXPECT_NEAR(change_per_step(std::span<const double>(a), std::span<const double>(b), 30), 0.01,
              1e-15);
  EXPECT_EQ(change_per_step(std::span<const double>(a), std::span<const double>(a), 1), 0.0);
  EXPECT_THROW(change_per_step(std::span<const double>(a), std::span<const double>(b), 0),
               InvalidInput);
  const Image shorter(10, 0.1);
  EXPECT_THROW(change_per_step(std::span<const double>(a), std::span<const double>(shorter), 1),
               InvalidInput);
}

}  // namespace
}  // namespace grayscott::analysis
