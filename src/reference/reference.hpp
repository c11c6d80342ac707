// An independent float64 reference of the model, written from the contract (docs/model.md) and
// sharing no code with the engines: plain loops, a neighbour lookup that applies the boundary rule,
// the Euler update spelled out. The tests and `grayscott bench` check every backend against it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace grayscott::reference {

enum class Boundary { ZeroFlux, Periodic, Fixed };

struct State {
  std::int64_t rows, cols;
  std::vector<double> u, v;
};

inline State initial_state(std::int64_t rows, std::int64_t cols) {
  State s{rows, cols, std::vector<double>(rows * cols, 1.0), std::vector<double>(rows * cols, 0.0)};
  auto clamp = [](std::int64_t x, std::int64_t hi) { return x < 0 ? 0 : (x > hi ? hi : x); };
  const std::int64_t r0 = clamp(7 * rows / 16 - 4, rows), r1 = clamp(8 * rows / 16 - 4, rows);
  const std::int64_t c0 = clamp(7 * cols / 16, cols), c1 = clamp(8 * cols / 16, cols);
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) {
      s.u[r * cols + c] = 0.0;
      s.v[r * cols + c] = 1.0;
    }
  }
  return s;
}

struct Model {
  std::array<double, 9> weights;
  Boundary boundary;
  double feed, kill, du, dv, dt;
  double outside_u = 1.0, outside_v = 0.0;  // what cells outside hold under Fixed
};

inline void step(const Model& m, State& s) {
  State next = s;
  const std::int64_t R = s.rows, C = s.cols;
  auto lap = [&](const std::vector<double>& x, std::int64_t r, std::int64_t c, double outside) {
    const double centre = x[r * C + c];
    double sum = 0.0;
    for (int dr = -1; dr <= 1; ++dr) {
      for (int dc = -1; dc <= 1; ++dc) {
        if (dr == 0 && dc == 0) continue;
        std::int64_t rr = r + dr, cc = c + dc;
        double value;
        const bool inside = rr >= 0 && rr < R && cc >= 0 && cc < C;
        if (inside) {
          value = x[rr * C + cc];
        } else if (m.boundary == Boundary::Periodic) {
          rr = (rr + R) % R;
          cc = (cc + C) % C;
          value = x[rr * C + cc];
        } else if (m.boundary == Boundary::Fixed) {
          value = outside;
        } else {
          continue;  // zero flux: contributes nothing
        }
        sum += m.weights[(dr + 1) * 3 + (dc + 1)] * (value - centre);
      }
    }
    return sum;
  };
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t c = 0; c < C; ++c) {
      const double u = s.u[r * C + c], v = s.v[r * C + c];
      const double uvv = u * v * v;
      next.u[r * C + c] =
          u + m.dt * (m.du * lap(s.u, r, c, m.outside_u) - uvv + m.feed * (1.0 - u));
      next.v[r * C + c] =
          v + m.dt * (m.dv * lap(s.v, r, c, m.outside_v) + uvv - (m.feed + m.kill) * v);
    }
  }
  s = std::move(next);
}

}  // namespace grayscott::reference
