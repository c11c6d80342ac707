#include "model/model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <sstream>
#include <vector>

namespace grayscott {

namespace {

std::string format_number(double x) {
  std::ostringstream out;
  out.precision(6);
  out << x;
  return out.str();
}

double parse_double(std::string_view text, std::string_view what) {
  // from_chars for double is available in g++ 11+, and is locale-independent.
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw InvalidInput(std::string(what) + ": '" + std::string(text) + "' is not a number");
  }
  return value;
}

}  // namespace

Stencil Stencil::oono_puri() {
  return {StencilKind::OonoPuri, {0.25, 0.5, 0.25, 0.5, 0.0, 0.5, 0.25, 0.5, 0.25}};
}
Stencil Stencil::pretty() {
  return {StencilKind::Pretty, {1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0}};
}
Stencil Stencil::five_point() {
  return {StencilKind::FivePoint, {0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0}};
}
Stencil Stencil::custom(const std::array<double, 9>& weights) {
  Stencil s{StencilKind::Custom, weights};
  s.weights[4] = 0.0;  // the centre never contributes
  return s;
}

Stencil Stencil::parse(std::string_view text) {
  if (text == "oono-puri") return oono_puri();
  if (text == "pretty") return pretty();
  if (text == "five-point") return five_point();
  std::vector<double> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    values.push_back(parse_double(text.substr(start, comma - start), "stencil weight"));
    start = comma + 1;
  }
  if (values.size() != 9) {
    throw InvalidInput(
        "stencil: expected oono-puri, pretty, five-point or 9 comma-separated "
        "weights, got " +
        std::to_string(values.size()) + " values");
  }
  std::array<double, 9> weights{};
  for (std::size_t i = 0; i < 9; ++i) {
    if (!std::isfinite(values[i])) throw InvalidInput("stencil: weights must be finite numbers");
    weights[i] = values[i];
  }
  return custom(weights);
}

std::string Stencil::name() const {
  switch (kind) {
    case StencilKind::OonoPuri:
      return "oono-puri";
    case StencilKind::Pretty:
      return "pretty";
    case StencilKind::FivePoint:
      return "five-point";
    case StencilKind::Custom:
      return "custom";
  }
  return "custom";
}

double Stencil::spectral_radius() const {
  // The Laplacian's symbol at wave vector (a, b) is -sum_n w_n (1 - cos(n . (a, b))). Sampling a
  // fine periodic lattice that contains 0 and pi is exact for the built-in stencils (their extrema
  // sit at multiples of pi) and within a fraction of a percent for any other weights.
  constexpr int samples = 128;
  double radius = 0.0;
  for (int i = 0; i <= samples; ++i) {
    for (int j = 0; j <= samples; ++j) {
      const double a = std::numbers::pi * i / samples * 2.0 - std::numbers::pi;
      const double b = std::numbers::pi * j / samples * 2.0 - std::numbers::pi;
      double symbol = 0.0;
      for (int dr = -1; dr <= 1; ++dr) {
        for (int dc = -1; dc <= 1; ++dc) {
          if (dr == 0 && dc == 0) continue;
          symbol += weights[(dr + 1) * 3 + (dc + 1)] * (1.0 - std::cos(dr * a + dc * b));
        }
      }
      radius = std::max(radius, std::abs(symbol));
    }
  }
  return radius;
}

double Problem::dt_limit() const {
  const double d = std::max(params.du, params.dv);
  const double radius = stencil.spectral_radius();
  if (d <= 0.0 || radius <= 0.0) return INFINITY;
  return 2.0 / (d * radius);
}

void Problem::validate() const {
  if (grid.rows <= 0) throw InvalidInput("rows must be a positive integer");
  if (grid.cols <= 0) throw InvalidInput("cols must be a positive integer");
  // Indices stay in 32 bits per axis on every backend; 2^31 x 2^31 cells is far past any machine.
  constexpr std::int64_t max_extent = (std::int64_t{1} << 31) - 1;
  if (grid.rows > max_extent)
    throw InvalidInput("rows must be at most " + std::to_string(max_extent));
  if (grid.cols > max_extent)
    throw InvalidInput("cols must be at most " + std::to_string(max_extent));
  const struct {
    const char* name;
    double value;
  } rates[] = {{"feed", params.feed},
               {"kill", params.kill},
               {"du", params.du},
               {"dv", params.dv},
               {"dt", params.dt}};
  for (const auto& r : rates) {
    if (!std::isfinite(r.value) || r.value < 0.0) {
      throw InvalidInput(std::string(r.name) + " must be a finite non-negative number, got " +
                         format_number(r.value));
    }
  }
  if (params.dt == 0.0) throw InvalidInput("dt must be positive");
  for (double w : stencil.weights) {
    if (!std::isfinite(w)) throw InvalidInput("stencil: weights must be finite numbers");
  }
  const double limit = dt_limit();
  if (params.dt > limit) {
    throw InvalidInput("dt " + format_number(params.dt) +
                       " exceeds the explicit-Euler stability limit " + format_number(limit) +
                       " of stencil " + stencil.name() + " with du " + format_number(params.du) +
                       " and dv " + format_number(params.dv));
  }
}

SeedRectangle seed_rectangle(const Grid& grid) {
  auto clamp = [](std::int64_t x, std::int64_t hi) { return std::clamp<std::int64_t>(x, 0, hi); };
  const std::int64_t R = grid.rows, C = grid.cols;
  return {clamp(7 * R / 16 - 4, R), clamp(8 * R / 16 - 4, R), clamp(7 * C / 16, C),
          clamp(8 * C / 16, C)};
}

std::string_view to_string(Boundary b) {
  switch (b) {
    case Boundary::ZeroFlux:
      return "zero-flux";
    case Boundary::Periodic:
      return "periodic";
    case Boundary::Fixed:
      return "fixed";
  }
  return "zero-flux";
}

std::string_view to_string(Precision p) { return p == Precision::Single ? "single" : "double"; }

Boundary parse_boundary(std::string_view text) {
  if (text == "zero-flux") return Boundary::ZeroFlux;
  if (text == "periodic") return Boundary::Periodic;
  if (text == "fixed") return Boundary::Fixed;
  throw InvalidInput("boundary: expected zero-flux, periodic or fixed, got '" + std::string(text) +
                     "'");
}

Precision parse_precision(std::string_view text) {
  if (text == "single" || text == "float" || text == "float32") return Precision::Single;
  if (text == "double" || text == "float64") return Precision::Double;
  throw InvalidInput("precision: expected single or double, got '" + std::string(text) + "'");
}

}  // namespace grayscott
