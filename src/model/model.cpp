#include "model/model.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

}  // namespace

std::string bound_text(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return format_number(value);
  const double unit = std::pow(10.0, std::floor(std::log10(value)) - 2);
  // The floored value is a three-digit number up to rounding (164 * 0.01 = 1.6400000000000001):
  // printed to three digits and read back, it is that number exactly.
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", std::floor(value / unit) * unit);
  return shortest_text(std::strtod(text, nullptr));
}

namespace {

double parse_double(std::string_view text, std::string_view what) {
  // from_chars for double is available in g++ 11+, and is locale-independent.
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // A number past float64's range (1e400) is a number, named as such.
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
    throw InvalidInput(std::string(what) + ": '" + std::string(text) +
                       "' is out of range for a float64");
  }
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw InvalidInput(std::string(what) + ": '" + std::string(text) + "' is not a number");
  }
  return value;
}

}  // namespace

std::string shortest_text(double value) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

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

Stencil Stencil::seven_point() { return {StencilKind::SevenPoint, {}}; }
Stencil Stencil::nineteen_point() { return {StencilKind::NineteenPoint, {}}; }

Stencil Stencil::parse(std::string_view text) {
  if (text == "oono-puri") return oono_puri();
  if (text == "pretty") return pretty();
  if (text == "five-point") return five_point();
  if (text == "seven-point") return seven_point();
  if (text == "nineteen-point") return nineteen_point();
  const auto is_letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  if (text.find(',') == std::string_view::npos &&
      std::any_of(text.begin(), text.end(), is_letter)) {
    // A name, mistyped: not a weight that is not a number.
    throw InvalidInput("stencil: unknown stencil '" + std::string(text) +
                       "' (known: oono-puri, pretty, five-point, seven-point, nineteen-point, or 9 "
                       "comma-separated weights)");
  }
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
        "stencil: expected oono-puri, pretty, five-point, seven-point, nineteen-point or 9 "
        "comma-separated weights, got " +
        std::to_string(values.size()) + " values");
  }
  std::array<double, 9> weights{};
  for (std::size_t i = 0; i < 9; ++i) {
    if (!std::isfinite(values[i])) throw InvalidInput("stencil: weights must be finite numbers");
    weights[i] = values[i];
  }
  return custom(weights);
}

void Stencil::check_diffusive() const {
  if (!diffusive()) {
    throw InvalidInput("stencil " + name() +
                       " is anti-diffusive: its Laplacian's Fourier symbol reaches +" +
                       format_number(symbol_range().highest) +
                       " at some wave numbers, where it must be at most 0 (explicit Euler would "
                       "amplify those modes at any dt)");
  }
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
    case StencilKind::SevenPoint:
      return "seven-point";
    case StencilKind::NineteenPoint:
      return "nineteen-point";
  }
  return "custom";
}

std::string Grid::text() const {
  return (depth > 1 ? std::to_string(depth) + "x" : std::string()) + std::to_string(rows) + "x" +
         std::to_string(cols);
}

namespace {

// Appends the real roots of a2 x^2 + a1 x + a0 = 0 (the vertex when rounding pushed a double root's
// discriminant below zero). Candidates only: a spurious one costs an evaluation, never a wrong
// extreme.
void add_roots(double a2, double a1, double a0, std::vector<double>& out) {
  if (a2 == 0.0) {
    if (a1 != 0.0) out.push_back(-a0 / a1);
    return;
  }
  const double discriminant = a1 * a1 - 4.0 * a2 * a0;
  if (discriminant < 0.0) {
    out.push_back(-a1 / (2.0 * a2));
    return;
  }
  // The form without cancellation between -a1 and the square root.
  const double h = -0.5 * (a1 + std::copysign(std::sqrt(discriminant), a1));
  out.push_back(h / a2);
  if (h != 0.0) out.push_back(a0 / h);
}

}  // namespace

Stencil::SymbolRange Stencil::symbol_range() const {
  if (three_dimensional()) {
    // With face weight f and edge weight e, and c_i the cosine of the wave number along axis i,
    // -L = 2f sum_i (1 - c_i) + 4e sum_{i<j} (1 - c_i c_j): affine in each c_i, so its extremes
    // over [-1, 1]^3 lie at the eight corners, evaluated exactly here. The lowest is -L(0) = 0.
    const double f = kind == StencilKind::SevenPoint ? 1.0 / 6 : 1.0 / 18;
    const double e = kind == StencilKind::SevenPoint ? 0.0 : 1.0 / 36;
    double highest = 0.0;  // of -L
    for (int corner = 0; corner < 8; ++corner) {
      const double c[3] = {corner & 1 ? -1.0 : 1.0, corner & 2 ? -1.0 : 1.0,
                           corner & 4 ? -1.0 : 1.0};
      const double faces = (1 - c[0]) + (1 - c[1]) + (1 - c[2]);
      const double edges = (1 - c[0] * c[1]) + (1 - c[0] * c[2]) + (1 - c[1] * c[2]);
      highest = std::max(highest, 2 * f * faces + 4 * e * edges);
    }
    return {-highest, 0.0};
  }
  // With a the wave number along rows and b along columns, a neighbour and its opposite share a
  // cosine, so -L(a, b) = cr (1 - cos a) + cc (1 - cos b) + cd (1 - cos(a + b))
  // + ce (1 - cos(a - b)), each c the sum of such a pair of weights. For fixed b this is
  // A - B cos a + C sin a with A = cr + cc (1 - x) + cd + ce, B = cr + (cd + ce) x,
  // C = (cd - ce) sin b and x = cos b: its extremes over a are A -/+ sqrt(q), q = B^2 + C^2, a
  // quadratic in x. Over x in [-1, 1] those extremes lie at x = +-1, where q = 0, or where
  // d/dx (A -/+ sqrt(q)) = 0, whose square, 4 cc^2 q = q'^2, is a quadratic equation in x.
  // Evaluating every candidate is exact: no sampling can miss a narrow peak.
  const auto& w = weights;
  const double cr = w[1] + w[7], cc = w[3] + w[5], cd = w[0] + w[8], ce = w[2] + w[6];
  const double s = cd + ce, t = cd - ce;
  const double q2 = s * s - t * t, q1 = 2.0 * cr * s, q0 = cr * cr + t * t;
  std::vector<double> candidates = {-1.0, 1.0};
  add_roots(q2, q1, q0, candidates);
  if (q2 != 0.0) candidates.push_back(-q1 / (2.0 * q2));  // where q is smallest or largest
  const double k = cc * cc;
  add_roots(4.0 * q2 * (q2 - k), 4.0 * q1 * (q2 - k), q1 * q1 - 4.0 * k * q0, candidates);
  // -L(0) = 0 exactly, whatever the rounding below.
  double lowest = 0.0, highest = 0.0;  // of -L
  for (double x : candidates) {
    if (!std::isfinite(x)) continue;
    x = std::clamp(x, -1.0, 1.0);
    const double a = cr + cc * (1.0 - x) + s;
    const double root = std::sqrt(std::max(0.0, (q2 * x + q1) * x + q0));
    lowest = std::min(lowest, a - root);
    highest = std::max(highest, a + root);
  }
  return {-highest, -lowest};
}

bool Stencil::diffusive() const {
  // Rounding in symbol_range() is a few ulps of the weights' size; anything above that is a mode
  // the weights really amplify.
  double scale = 0.0;
  for (double w : weights) scale += std::abs(w);
  return symbol_range().highest <= 1e-12 * scale;
}

double Stencil::spectral_radius() const {
  const SymbolRange range = symbol_range();
  return std::max(-range.lowest, range.highest);
}

double Problem::dt_limit(double radius, const Parameters& params) {
  const double decay_u = params.feed + params.du * radius;
  const double decay_v = params.feed + params.kill + params.dv * radius;
  const double fastest = std::max(decay_u, decay_v);
  return fastest > 0.0 ? 2.0 / fastest : INFINITY;
}

double Problem::dt_stable_everywhere(double radius, const Parameters& params) {
  const double decay_u = 1.0 + params.feed + params.du * radius;
  const double decay_v = params.feed + params.kill + params.dv * radius;
  return 2.0 / std::max(decay_u, decay_v);
}

// The fastest-decaying mode, -L = -lowest, sets the limits (a diffusive stencil has no other).
double Problem::dt_limit() const { return dt_limit(-stencil.symbol_range().lowest, params); }

double Problem::dt_stable_everywhere() const {
  return dt_stable_everywhere(-stencil.symbol_range().lowest, params);
}

void Parameters::validate() const {
  const struct {
    const char* name;
    double value;
  } rates[] = {{"feed", feed}, {"kill", kill}, {"du", du}, {"dv", dv}, {"dt", dt}};
  for (const auto& r : rates) {
    // A time step of 0 steps nothing: dt alone must be above 0.
    const bool dt_rate = std::string_view(r.name) == "dt";
    if (!std::isfinite(r.value) || r.value < 0.0 || (dt_rate && r.value == 0.0)) {
      throw InvalidInput(std::string(r.name) + " must be a finite " +
                         (dt_rate ? "positive" : "non-negative") + " number, got " +
                         format_number(r.value));
    }
  }
}

void Problem::validate() const {
  if (grid.rows <= 0) throw InvalidInput("rows must be a positive integer");
  if (grid.cols <= 0) throw InvalidInput("cols must be a positive integer");
  if (grid.depth <= 0) throw InvalidInput("depth must be a positive integer (1: a plane)");
  // Indices stay in 32 bits per axis on every backend; 2^31 x 2^31 cells is far past any machine.
  constexpr std::int64_t max_extent = (std::int64_t{1} << 31) - 1;
  if (grid.rows > max_extent)
    throw InvalidInput("rows must be at most " + std::to_string(max_extent));
  if (grid.cols > max_extent)
    throw InvalidInput("cols must be at most " + std::to_string(max_extent));
  if (grid.depth > max_extent)
    throw InvalidInput("depth must be at most " + std::to_string(max_extent));
  if (grid.volume() && !stencil.three_dimensional()) {
    throw InvalidInput("stencil " + stencil.name() + " is a plane's (3x3): a grid of depth " +
                       std::to_string(grid.depth) +
                       " needs a volume's stencil, seven-point or nineteen-point");
  }
  if (!grid.volume() && stencil.three_dimensional()) {
    throw InvalidInput("stencil " + stencil.name() +
                       " is a volume's (3x3x3): it needs a grid of depth 2 or more, and this "
                       "grid is a plane (depth 1)");
  }
  params.validate();
  if (!std::isfinite(outside.u) || !std::isfinite(outside.v)) {
    throw InvalidInput("outside: the fixed boundary's values must be finite numbers, got " +
                       format_number(outside.u) + "," + format_number(outside.v));
  }
  for (double w : stencil.weights) {
    if (!std::isfinite(w)) throw InvalidInput("stencil: weights must be finite numbers");
  }
  stencil.check_diffusive();
  check_stability(-stencil.symbol_range().lowest, params);
}

void Problem::check_stability(double radius, const Parameters& rates) const {
  const double limit = dt_limit(radius, rates);
  if (rates.dt > limit) {
    throw InvalidInput(
        "dt " + format_number(rates.dt) + " exceeds the explicit-Euler stability limit " +
        bound_text(limit) + " of stencil " + stencil.name() + " with du " +
        format_number(rates.du) + ", dv " + format_number(rates.dv) + ", feed " +
        format_number(rates.feed) + " and kill " + format_number(rates.kill) +
        " (at u = 1, v = 0 rounding errors would grow at every step; dt " +
        bound_text(dt_stable_everywhere(radius, rates)) + " is stable at every state)");
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

Outside parse_outside(std::string_view text, std::string_view what) {
  // A range's ends also as LOW:HIGH, as render's --range takes them.
  const bool range = what.find("range") != std::string_view::npos;
  const char separator =
      range && text.find(',') == std::string_view::npos && text.find(':') != std::string_view::npos
          ? ':'
          : ',';
  const std::size_t comma = text.find(separator);
  if (comma == std::string_view::npos ||
      text.find(separator, comma + 1) != std::string_view::npos) {
    // A pair of values of u and v, or a range's two ends.
    const char* form = range ? "LOW,HIGH" : "U,V";
    throw InvalidInput(std::string(what) + ": expected two numbers " + form + ", got '" +
                       std::string(text) + "'");
  }
  const Outside values{parse_double(text.substr(0, comma), what),
                       parse_double(text.substr(comma + 1), what)};
  if (!std::isfinite(values.u) || !std::isfinite(values.v)) {
    throw InvalidInput(std::string(what) + ": the values must be finite numbers, got '" +
                       std::string(text) + "'");
  }
  return values;
}

std::string to_string(const Outside& outside) {
  char text[64];
  auto end = std::to_chars(text, text + sizeof text, outside.u).ptr;
  *end++ = ',';
  end = std::to_chars(end, text + sizeof text, outside.v).ptr;
  return std::string(text, end);
}

Precision parse_precision(std::string_view text) {
  if (text == "single" || text == "float" || text == "float32") return Precision::Single;
  if (text == "double" || text == "float64") return Precision::Double;
  throw InvalidInput("precision: expected single or double, got '" + std::string(text) + "'");
}

}  // namespace grayscott
