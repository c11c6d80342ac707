#include "io/pictures/ticks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace grayscott::io {

std::string tick_text(double value, int decimals) {
  char text[400];  // room for any double in fixed notation
  std::snprintf(text, sizeof text, "%.*f", std::clamp(decimals, 0, 60), value);
  std::string out = text;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

std::string shortest_text(double value) {
  char text[64];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

std::vector<AxisTick> choose_ticks(std::span<const double> values, std::span<const double> centres,
                                   double min_spacing, int max_ticks) {
  if (values.size() != centres.size()) {
    throw std::invalid_argument("choose_ticks: one centre per value is needed");
  }
  if (values.empty()) return {};
  if (values.size() == 1) return {{values[0], centres[0], shortest_text(values[0])}};
  const double lo = values.front(), hi = values.back();
  const std::size_t last_segment = values.size() - 2;
  // Where the axis puts `value`: linear between the centres of the values on either side.
  const auto position = [&](double value) {
    const auto above = std::upper_bound(values.begin(), values.end(), value) - values.begin();
    const std::size_t i =
        std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(above - 1, 0)), last_segment);
    const double along = (value - values[i]) / (values[i + 1] - values[i]);
    return centres[i] + along * (centres[i + 1] - centres[i]);
  };
  max_ticks = std::max(max_ticks, 1);
  // From steps too small to fit (more than max_ticks multiples in the range) upwards: the first
  // that fits is the finest. Among steps 1, 2 and 5 times each power of ten, one lies in any
  // interval (x, 2.5x], so a step of the range or less with at most max_ticks multiples exists.
  const double span = hi - lo;
  const int smallest = static_cast<int>(std::floor(std::log10(span / max_ticks))) - 1;
  const int largest = static_cast<int>(std::ceil(std::log10(span))) + 1;
  std::optional<AxisTick> lone;  // where no step spaces two ticks far enough apart
  for (int e = smallest; e <= largest; ++e) {
    for (const int m : {1, 2, 5}) {
      const double step = m * std::pow(10.0, e);
      // A little slack for values and steps a rounding away from a multiple: both ends count.
      const double slack = 1e-9;
      const double first = std::ceil(lo / step - slack), last = std::floor(hi / step + slack);
      if (last < first || last - first + 1 > max_ticks) continue;
      std::vector<AxisTick> ticks;
      for (double k = first; k <= last; ++k) {
        // k * m / 10^-e rather than k * step: the double nearest the decimal the label shows.
        const double value = e < 0 ? k * m / std::pow(10.0, -e) : k * step;
        ticks.push_back({value, position(value), tick_text(value, std::max(0, -e))});
      }
      bool apart = true;
      for (std::size_t i = 1; i < ticks.size(); ++i) {
        apart = apart && std::abs(ticks[i].position - ticks[i - 1].position) >= min_spacing;
      }
      if (apart) return ticks;
      if (!lone) lone = ticks[ticks.size() / 2];
    }
  }
  if (lone) return {*lone};
  return {{lo, centres[0], shortest_text(lo)}};  // not reached: a step always fits
}

}  // namespace grayscott::io
