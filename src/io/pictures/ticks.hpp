// The ticks of an atlas's feed and kill axes, chosen as a plotting library chooses them: round
// values at their place along the axis, each labelled in full.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace grayscott::io {

struct AxisTick {
  double value = 0;
  double position = 0;  // pixels along the axis
  std::string text;     // the value as it is printed
};

// Ticks for an axis whose values (ascending, distinct) lie at `centres` (pixels, one per value,
// in the same order: the tiles' centres, increasing or decreasing). The ticks are the multiples
// of a step of 1, 2 or 5 times a power of ten within the values' range, each placed where the
// axis puts its value (linear between the two centres around it). The step is the smallest that
// gives at most `max_ticks` ticks, `min_spacing` pixels or more apart, so that labels as long as
// `min_spacing` along the axis do not touch (a single tick where no step gives two). Each label
// has the decimals its step needs and no more: 0.04, 0.045, 0.05. An axis of one value has one
// tick, at its centre, labelled with the shortest text that reads back as that value.
std::vector<AxisTick> choose_ticks(std::span<const double> values, std::span<const double> centres,
                                   double min_spacing, int max_ticks = 6);

// `value` with `decimals` digits after the point, trailing zeros (and a bare point) dropped:
// tick_text(0.04, 3) is "0.04", tick_text(0.045, 3) is "0.045".
std::string tick_text(double value, int decimals);

// The shortest text that reads back as exactly `value` (0.1 + 0.2 gives 0.30000000000000004).
std::string shortest_text(double value);

}  // namespace grayscott::io
