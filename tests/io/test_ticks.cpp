// The atlas's axis ticks (io/pictures/ticks.hpp): round values at their place along the axis, each
// labelled in full, never closer than the labels need.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/pictures/ticks.hpp"

namespace grayscott::io {
namespace {

std::vector<std::string> texts(const std::vector<AxisTick>& ticks) {
  std::vector<std::string> out;
  for (const AxisTick& tick : ticks) out.push_back(tick.text);
  return out;
}

void expect_positions(const std::vector<AxisTick>& ticks, const std::vector<double>& want) {
  ASSERT_EQ(ticks.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(ticks[i].position, want[i], 1e-9) << ticks[i].text;
  }
}

}  // namespace

TEST(AtlasTicks, AnEvenSweepGetsRoundValuesNotItsOwn) {
  // grayscott sweep --feed 0.010:0.060:4: its values 0.01, 0.02667, 0.04333, 0.06, tiles 100
  // pixels apart. The ticks are 0.01 ... 0.06, placed where a linear axis puts them.
  const std::vector<double> feeds = {0.01, 0.01 + 0.05 / 3, 0.01 + 0.1 / 3, 0.06};
  const std::vector<double> centres = {0, 100, 200, 300};
  const auto ticks = choose_ticks(feeds, centres, 20);
  EXPECT_EQ(texts(ticks),
            (std::vector<std::string>{"0.01", "0.02", "0.03", "0.04", "0.05", "0.06"}));
  expect_positions(ticks, {0, 60, 120, 180, 240, 300});
  EXPECT_EQ(ticks[3].value, 0.04);  // the double the label names, not 4 * 0.01
}

TEST(AtlasTicks, LabelsHaveTheDigitsTheirStepNeedsAndNoMore) {
  // A step of 0.002 would put ticks 40 pixels apart, closer than the 50 asked: 0.005 it is.
  const auto ticks = choose_ticks(std::vector<double>{0.04, 0.05}, std::vector<double>{0, 200}, 50);
  EXPECT_EQ(texts(ticks), (std::vector<std::string>{"0.04", "0.045", "0.05"}));
  expect_positions(ticks, {0, 100, 200});
  // With room for more, the finer step: at most six ticks, 40 pixels apart.
  const auto finer = choose_ticks(std::vector<double>{0.04, 0.05}, std::vector<double>{0, 200}, 20);
  EXPECT_EQ(texts(finer),
            (std::vector<std::string>{"0.04", "0.042", "0.044", "0.046", "0.048", "0.05"}));
}

TEST(AtlasTicks, ACrowdedAxisGetsFewerTicksSpacedForTheirLabels) {
  const std::vector<double> kills = {0.04, 0.05, 0.06, 0.07};
  for (double apart : {10.0, 19.0, 30.0, 45.0, 70.0}) {
    const auto ticks = choose_ticks(kills, std::vector<double>{0, 22, 44, 66}, apart);
    ASSERT_FALSE(ticks.empty());
    EXPECT_LE(ticks.size(), 6u);
    for (std::size_t i = 1; i < ticks.size(); ++i) {
      EXPECT_GE(ticks[i].position - ticks[i - 1].position, apart) << ticks[i].text;
    }
    for (const AxisTick& tick : ticks) {
      EXPECT_GE(tick.value, 0.04 - 1e-12);
      EXPECT_LE(tick.value, 0.07 + 1e-12);
    }
  }
  EXPECT_EQ(texts(choose_ticks(kills, std::vector<double>{0, 22, 44, 66}, 19)),
            (std::vector<std::string>{"0.04", "0.05", "0.06", "0.07"}));
  EXPECT_EQ(texts(choose_ticks(kills, std::vector<double>{0, 22, 44, 66}, 30)),
            (std::vector<std::string>{"0.04", "0.06"}));
}

TEST(AtlasTicks, UnevenValuesPlaceTicksBetweenTheTilesAroundThem) {
  // Tiles at 0.01, 0.011 and 0.05: 0.02 lies 9/39 of the way from the second to the third.
  const auto ticks =
      choose_ticks(std::vector<double>{0.01, 0.011, 0.05}, std::vector<double>{0, 100, 200}, 20);
  EXPECT_EQ(texts(ticks), (std::vector<std::string>{"0.01", "0.02", "0.03", "0.04", "0.05"}));
  expect_positions(ticks,
                   {0, 100 + 100 * 9.0 / 39, 100 + 100 * 19.0 / 39, 100 + 100 * 29.0 / 39, 200});
}

TEST(AtlasTicks, FeedIncreasingUpwardsHasDecreasingPositions) {
  const auto ticks =
      choose_ticks(std::vector<double>{0.01, 0.02, 0.03}, std::vector<double>{200, 100, 0}, 40);
  EXPECT_EQ(texts(ticks), (std::vector<std::string>{"0.01", "0.015", "0.02", "0.025", "0.03"}));
  expect_positions(ticks, {200, 150, 100, 50, 0});
}

TEST(AtlasTicks, OneValueIsLabelledInShortestRoundTripForm) {
  const double third = 0.13 / 3;  // 0.043333333333333335
  const auto ticks = choose_ticks(std::vector<double>{third}, std::vector<double>{42.5}, 20);
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_EQ(ticks[0].text, "0.043333333333333335");
  EXPECT_EQ(std::strtod(ticks[0].text.c_str(), nullptr), third);
  EXPECT_EQ(ticks[0].position, 42.5);
  EXPECT_EQ(shortest_text(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(shortest_text(0.054), "0.054");
}

TEST(AtlasTicks, NoStepSpacingTwoTicksLeavesOne) {
  // 0.0115 to 0.0145 in 10 pixels: no two round values fit 20 pixels apart, and no coarser step
  // than 0.002 has a multiple in the range.
  const auto ticks =
      choose_ticks(std::vector<double>{0.0115, 0.0145}, std::vector<double>{0, 10}, 20);
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_GE(ticks[0].value, 0.0115);
  EXPECT_LE(ticks[0].value, 0.0145);
  EXPECT_EQ(std::strtod(ticks[0].text.c_str(), nullptr), ticks[0].value);
}

TEST(AtlasTicks, EveryLabelReadsBackAsItsValue) {
  // Ranges of every scale and offset: each label is its value in full, a multiple of the step.
  for (double lo : {0.0, 0.0123, 0.9, 3.0, 170.0}) {
    for (double span : {1e-4, 0.0037, 0.05, 0.7, 12.0, 900.0}) {
      const auto ticks =
          choose_ticks(std::vector<double>{lo, lo + span}, std::vector<double>{0, 400}, 18);
      ASSERT_GE(ticks.size(), 2u) << lo << " + " << span;
      // The step is 1, 2 or 5 times a power of ten.
      const double apart = ticks[1].value - ticks[0].value;
      const double power = std::pow(10.0, std::floor(std::log10(apart) + 1e-9));
      const double mantissa = std::round(apart / power);
      EXPECT_TRUE(mantissa == 1 || mantissa == 2 || mantissa == 5) << apart;
      EXPECT_NEAR(apart / power, mantissa, 1e-6);
      const double step = mantissa * power;
      for (const AxisTick& tick : ticks) {
        EXPECT_EQ(std::strtod(tick.text.c_str(), nullptr), tick.value) << tick.text;
        EXPECT_NEAR(tick.value / step, std::round(tick.value / step), 1e-6) << tick.text;
        EXPECT_NEAR(tick.position, 400 * (tick.value - lo) / span, 1e-6) << tick.text;
      }
    }
  }
}

TEST(AtlasTicks, TickTextDropsTrailingZerosOnly) {
  EXPECT_EQ(tick_text(0.04, 3), "0.04");
  EXPECT_EQ(tick_text(0.045, 3), "0.045");
  EXPECT_EQ(tick_text(0.0, 3), "0");
  EXPECT_EQ(tick_text(-0.0, 2), "0");
  EXPECT_EQ(tick_text(20, 0), "20");
  EXPECT_EQ(tick_text(100, 0), "100");
  EXPECT_EQ(tick_text(1.5, 1), "1.5");
}

}  // namespace grayscott::io
