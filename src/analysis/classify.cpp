#include "analysis/classify.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace grayscott::analysis {

std::string_view to_string(PatternClass pattern) {
  return pattern_class_names.at(static_cast<std::size_t>(pattern));
}

PatternClass parse_pattern_class(std::string_view name) {
  for (std::size_t i = 0; i < pattern_class_names.size(); ++i) {
    if (pattern_class_names[i] == name) return static_cast<PatternClass>(i);
  }
  throw InvalidInput(
      "pattern class: expected decayed, uniform, spots, stripes, holes, mixed or "
      "waves, got '" +
      std::string(name) + "'");
}

namespace {

void check_grid(std::size_t size, std::int64_t rows, std::int64_t cols) {
  if (rows < min_classified_side || cols < min_classified_side) {
    throw InvalidInput("classify: an image of " + std::to_string(rows) + "x" +
                       std::to_string(cols) + " cells is too small to tell its pattern (at least " +
                       std::to_string(min_classified_side) + "x" +
                       std::to_string(min_classified_side) + ")");
  }
  // rows, cols >= 16 here; the quotient guards the product against overflow.
  if (static_cast<std::uint64_t>(rows) > size / static_cast<std::uint64_t>(cols) ||
      static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) != size) {
    throw InvalidInput("classify: " + std::to_string(size) + " values do not make an image of " +
                       std::to_string(rows) + "x" + std::to_string(cols));
  }
}

// One component's sums while it is labelled.
struct Component {
  std::int64_t area = 0;
  std::int64_t perimeter = 0;  // cell edges between the component and the other phase
  double sum_r = 0, sum_c = 0, sum_rr = 0, sum_cc = 0, sum_rc = 0;  // unwrapped coordinates
  bool wraps = false;  // reached one cell along two paths that differ by a turn of the grid
  bool cut_by_edge = false;
};

struct Shape {
  std::int64_t area;
  double roundness, elongation;
  bool wraps, cut_by_edge;
};

// Labels the components of the cells where in_phase is 1 by breadth-first search. Each cell
// reached carries how many times its path wrapped around a periodic grid, so that a component
// crossing an edge has one set of coordinates for its moments, and a component that closes on
// itself around the torus (a stripe spanning the grid) is seen as such. The queue holds row and
// column (no division per cell), and cells away from the frame take a path without its checks:
// the labelling is most of classify's time.
std::vector<Shape> components(const std::vector<std::uint8_t>& in_phase, std::int64_t rows,
                              std::int64_t cols, bool periodic, bool eight_connected) {
  static constexpr int steps8[8][2] = {{-1, 0},  {1, 0},  {0, -1}, {0, 1},
                                       {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};
  const int neighbours = eight_connected ? 8 : 4;
  const auto cells = static_cast<std::size_t>(rows * cols);
  // Per cell reached: the turns of the grid its path made along rows and columns.
  struct Wraps {
    std::int32_t r = 0, c = 0;
  };
  struct Place {
    std::int32_t r, c;
  };
  // Kept from call to call on each thread (a run classifies every image): no page of them is
  // faulted in again. `wraps` is written where a cell is reached, before it is read.
  thread_local std::vector<std::uint8_t> reached;
  thread_local std::vector<Wraps> wraps;
  thread_local std::vector<Place> queue;
  reached.assign(cells, 0);
  if (wraps.size() < cells) wraps.resize(cells);
  queue.reserve(cells);
  std::vector<Shape> shapes;
  std::ptrdiff_t offsets[8];
  for (int n = 0; n < 8; ++n) offsets[n] = steps8[n][0] * cols + steps8[n][1];

  for (std::size_t seed = 0; seed < cells; ++seed) {
    if (!in_phase[seed] || reached[seed]) continue;
    Component comp;
    reached[seed] = 1;
    const auto r0 = static_cast<std::int32_t>(static_cast<std::int64_t>(seed) / cols);
    const auto c0 = static_cast<std::int32_t>(static_cast<std::int64_t>(seed) % cols);
    queue.assign(1, Place{r0, c0});
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const auto [r, c] = queue[head];
      const std::size_t cell = static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) +
                               static_cast<std::size_t>(c);
      const Wraps here = wraps[cell];
      // Coordinates relative to the seed, unwrapped: small numbers, exact sums.
      const double ur = static_cast<double>(r - r0 + here.r * rows);
      const double uc = static_cast<double>(c - c0 + here.c * cols);
      ++comp.area;
      comp.sum_r += ur;
      comp.sum_c += uc;
      comp.sum_rr += ur * ur;
      comp.sum_cc += uc * uc;
      comp.sum_rc += ur * uc;
      const bool interior = r > 0 && r < rows - 1 && c > 0 && c < cols - 1;
      for (int n = 0; n < neighbours; ++n) {
        std::int32_t nr = r + steps8[n][0], nc = c + steps8[n][1];
        Wraps there = here;
        std::size_t next;
        if (interior) {
          next = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(cell) + offsets[n]);
        } else {
          if (nr < 0 || nr >= rows || nc < 0 || nc >= cols) {
            if (!periodic) {
              comp.cut_by_edge = true;  // the frame is not a boundary of the object
              continue;
            }
            if (nr < 0) nr += static_cast<std::int32_t>(rows), --there.r;
            if (nr >= rows) nr -= static_cast<std::int32_t>(rows), ++there.r;
            if (nc < 0) nc += static_cast<std::int32_t>(cols), --there.c;
            if (nc >= cols) nc -= static_cast<std::int32_t>(cols), ++there.c;
          }
          next = static_cast<std::size_t>(nr) * static_cast<std::size_t>(cols) +
                 static_cast<std::size_t>(nc);
        }
        if (!in_phase[next]) {
          if (n < 4) ++comp.perimeter;
          continue;
        }
        if (!reached[next]) {
          reached[next] = 1;
          wraps[next] = there;
          queue.push_back(Place{nr, nc});
        } else if (wraps[next].r != there.r || wraps[next].c != there.c) {
          comp.wraps = true;
        }
      }
    }
    if (comp.area < min_component_cells) continue;

    const double a = static_cast<double>(comp.area);
    const double mr = comp.sum_r / a, mc = comp.sum_c / a;
    // Each cell is a unit square, not a point: its own variance 1/12 on each axis keeps a
    // one-cell-wide line finite.
    const double vrr = comp.sum_rr / a - mr * mr + 1.0 / 12;
    const double vcc = comp.sum_cc / a - mc * mc + 1.0 / 12;
    const double vrc = comp.sum_rc / a - mr * mc;
    const double mean = 0.5 * (vrr + vcc);
    const double spread = std::sqrt(0.25 * (vrr - vcc) * (vrr - vcc) + vrc * vrc);
    const double largest = mean + spread, smallest = std::max(mean - spread, 1e-12);
    // A disc of radius r has area pi r^2 and, counted in cell edges, a perimeter of about 8 r
    // (4/pi times its length): 64 A / (pi P^2) is then 1, as 4 pi A / P^2 is for a true circle.
    const double p = static_cast<double>(comp.perimeter);
    const double roundness =
        comp.perimeter > 0 ? std::min(1.0, 64.0 * a / (std::numbers::pi * p * p)) : 0.0;
    shapes.push_back(
        {comp.area, roundness, std::sqrt(largest / smallest), comp.wraps, comp.cut_by_edge});
  }
  return shapes;
}

PhaseFeatures summarise(const std::vector<Shape>& shapes, const Thresholds& thresholds) {
  PhaseFeatures out;
  out.count = static_cast<std::int64_t>(shapes.size());
  if (shapes.empty()) return out;
  double area = 0, area2 = 0, roundness = 0, elongation = 0;
  for (const Shape& s : shapes) {
    const double a = static_cast<double>(s.area);
    area += a;
    area2 += a * a;
    roundness += s.roundness;
    elongation += s.elongation;
    out.wrapping += s.wraps ? 1 : 0;
    out.cut_by_edge += s.cut_by_edge ? 1 : 0;
  }
  const double n = static_cast<double>(shapes.size());
  out.mean_area = area / n;
  out.area_cv = std::sqrt(std::max(0.0, area2 / n - out.mean_area * out.mean_area)) / out.mean_area;
  out.mean_roundness = roundness / n;
  out.mean_elongation = elongation / n;
  // Components cut by the frame of a non-periodic image show only part of their shape: their
  // area does not vote, unless nothing else does.
  const bool skip_cut = out.cut_by_edge < out.count;
  double voting = 0, round = 0;
  for (const Shape& s : shapes) {
    if (skip_cut && s.cut_by_edge) continue;
    const double a = static_cast<double>(s.area);
    voting += a;
    if (!s.wraps && s.elongation <= thresholds.round_max_elongation &&
        s.roundness >= thresholds.round_min_roundness) {
      round += a;
    }
  }
  out.round_fraction = voting > 0 ? round / voting : 0.0;
  return out;
}

template <class Real>
Features compute_features(std::span<const Real> v, std::int64_t rows, std::int64_t cols,
                          bool periodic, double change, const Thresholds& thresholds) {
  check_grid(v.size(), rows, cols);
  Features f;
  f.rows = rows;
  f.cols = cols;
  f.periodic = periodic;
  f.change_per_step = change;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  for (const Real x : v) {
    const double value = static_cast<double>(x);
    if (!std::isfinite(value)) {
      throw InvalidInput("classify: the image holds a value that is not finite");
    }
    lo = std::min(lo, value);
    hi = std::max(hi, value);
    sum += value;
  }
  f.v_min = lo;
  f.v_max = hi;
  f.v_mean = sum / static_cast<double>(v.size());
  // The midpoint of the range. A Gray-Scott image is two levels (the unreacted v ~ 0 and the
  // reacting v ~ 0.2 to 0.5) joined by steep fronts a few cells wide, so the midpoint cuts every
  // front near its middle whatever the rates, the diffusion constants or the units of the array;
  // a fixed level would miss low-contrast patterns, and a percentile would follow whichever
  // phase covers more of the grid.
  f.threshold = 0.5 * (lo + hi);
  std::vector<std::uint8_t> above(v.size()), below(v.size());
  std::int64_t covered = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    above[i] = static_cast<double>(v[i]) > f.threshold ? 1 : 0;
    below[i] = 1 - above[i];
    covered += above[i];
  }
  f.covered = static_cast<double>(covered) / static_cast<double>(v.size());
  // Eight neighbours for the objects, four for the holes: the pairing under which a closed ring of
  // diagonal steps separates the hole inside it from the outside (digital topology's usual rule).
  // The two labellings are independent: on two threads where a caller's loop does not already
  // spread its work over them (a sweep classifies its members side by side).
#pragma omp parallel sections if (!omp_in_parallel())
  {
#pragma omp section
    f.objects = summarise(components(above, rows, cols, periodic, true), thresholds);
#pragma omp section
    f.holes = summarise(components(below, rows, cols, periodic, false), thresholds);
  }
  return f;
}

template <class Real>
double rms_change(std::span<const Real> previous, std::span<const Real> current,
                  std::int64_t steps) {
  if (previous.size() != current.size() || current.empty()) {
    throw InvalidInput("change per step: the two images must have the same, non-zero size (" +
                       std::to_string(previous.size()) + " and " + std::to_string(current.size()) +
                       " values)");
  }
  if (steps < 1) {
    throw InvalidInput("change per step: steps between the images must be at least 1, got " +
                       std::to_string(steps));
  }
  double sum = 0;
  for (std::size_t i = 0; i < current.size(); ++i) {
    const double d = static_cast<double>(current[i]) - static_cast<double>(previous[i]);
    sum += d * d;
  }
  return std::sqrt(sum / static_cast<double>(current.size())) / static_cast<double>(steps);
}

}  // namespace

Features features(std::span<const float> v, std::int64_t rows, std::int64_t cols, bool periodic,
                  double change_per_step, const Thresholds& thresholds) {
  return compute_features(v, rows, cols, periodic, change_per_step, thresholds);
}
Features features(std::span<const double> v, std::int64_t rows, std::int64_t cols, bool periodic,
                  double change_per_step, const Thresholds& thresholds) {
  return compute_features(v, rows, cols, periodic, change_per_step, thresholds);
}

PatternClass classify(const Features& f, const Thresholds& t) {
  // Still changing wins: a snapshot of chaos can look like any of the steady classes.
  if (std::isfinite(f.change_per_step) && f.change_per_step > t.waves_change) {
    return PatternClass::Waves;
  }
  if (f.v_max - f.v_min < t.uniform_range) {
    return f.v_mean < t.decayed_level ? PatternClass::Decayed : PatternClass::Uniform;
  }
  // The phase that covers less of the grid holds the objects; the other is their background.
  const bool negative = f.covered > 0.5;
  const PhaseFeatures& minority = negative ? f.holes : f.objects;
  if (minority.count == 0) {
    // Nothing but specks below min_component_cells: a uniform state with noise.
    return f.v_mean < t.decayed_level ? PatternClass::Decayed : PatternClass::Uniform;
  }
  if (minority.round_fraction >= t.spots_min_round) {
    return negative ? PatternClass::Holes : PatternClass::Spots;
  }
  if (minority.round_fraction <= t.stripes_max_round) return PatternClass::Stripes;
  return PatternClass::Mixed;
}

Classification classify(std::span<const float> v, std::int64_t rows, std::int64_t cols,
                        bool periodic, double change, const Thresholds& thresholds) {
  Features f = compute_features(v, rows, cols, periodic, change, thresholds);
  return {classify(f, thresholds), f};
}
Classification classify(std::span<const double> v, std::int64_t rows, std::int64_t cols,
                        bool periodic, double change, const Thresholds& thresholds) {
  Features f = compute_features(v, rows, cols, periodic, change, thresholds);
  return {classify(f, thresholds), f};
}

double change_per_step(std::span<const float> previous, std::span<const float> current,
                       std::int64_t steps) {
  return rms_change(previous, current, steps);
}
double change_per_step(std::span<const double> previous, std::span<const double> current,
                       std::int64_t steps) {
  return rms_change(previous, current, steps);
}

}  // namespace grayscott::analysis
