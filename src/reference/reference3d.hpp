// The float64 reference of the model in three dimensions, written from the contract (docs/model.md
// extended to a volume) as reference.hpp is for a plane: plain loops, a neighbour lookup that
// applies the boundary rule, the Euler update spelled out, sharing no code with any engine. The
// ground truth that 3D engines are to be checked against. A volume is stored plane after plane
// (z), each plane row-major, as a 3D run's image is.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "reference/reference.hpp"

namespace grayscott::reference {

struct Volume {
  std::int64_t depth, rows, cols;
  std::vector<double> u, v;
  std::int64_t index(std::int64_t z, std::int64_t r, std::int64_t c) const {
    return (z * rows + r) * cols + c;
  }
};

// The 27 weights of a 3x3x3 neighbourhood, [dz + 1][dr + 1][dc + 1] flattened (the centre's is
// not read: the Laplacian is the sum over the neighbours of w_k * (n_k - centre)).
using Weights27 = std::array<double, 27>;

constexpr int weight_index(int dz, int dr, int dc) {
  return ((dz + 1) * 3 + (dr + 1)) * 3 + dc + 1;
}

// The seven-point stencil of ADIOS2's Gray-Scott example and of GrayScott.jl: the six face
// neighbours weighted 1/6, the centre -1 (the neighbours' mean minus the centre: h^2/6 times the
// Laplacian).
inline Weights27 seven_point() {
  Weights27 w{};
  for (const auto& [dz, dr, dc] : {std::array{-1, 0, 0}, std::array{1, 0, 0}, std::array{0, -1, 0},
                                   std::array{0, 1, 0}, std::array{0, 0, -1}, std::array{0, 0, 1}})
    w[static_cast<std::size_t>(weight_index(dz, dr, dc))] = 1.0 / 6;
  return w;
}

// The isotropic nineteen-point stencil (faces twice the twelve edges: its error is isotropic to
// leading order), scaled to the seven-point stencil's h^2/6 times the Laplacian, so that the
// same diffusion rates mean the same with either: faces 1/18, edges 1/36.
inline Weights27 nineteen_point() {
  Weights27 w{};
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dr = -1; dr <= 1; ++dr) {
      for (int dc = -1; dc <= 1; ++dc) {
        const int offsets = (dz != 0) + (dr != 0) + (dc != 0);
        const double weight = offsets == 1 ? 1.0 / 18 : offsets == 2 ? 1.0 / 36 : 0.0;
        w[static_cast<std::size_t>(weight_index(dz, dr, dc))] = weight;
      }
    }
  }
  return w;
}

// A plane's 3x3 weights (reference.hpp's order) as a volume's: the planes above and below weigh
// nothing, so that a volume of depth 1 steps as the plane does.
inline Weights27 in_plane(const std::array<double, 9>& plane) {
  Weights27 w{};
  for (int k = 0; k < 9; ++k)
    w[static_cast<std::size_t>(9 + k)] = plane[static_cast<std::size_t>(k)];
  return w;
}

struct Model3 {
  Weights27 weights;
  Boundary boundary;
  double feed, kill, du, dv, dt;
  double outside_u = 1.0, outside_v = 0.0;  // what cells outside hold under Fixed
};

inline void step(const Model3& m, Volume& s) {
  Volume next = s;
  const std::int64_t D = s.depth, R = s.rows, C = s.cols;
  auto lap = [&](const std::vector<double>& x, std::int64_t z, std::int64_t r, std::int64_t c,
                 double outside) {
    const double centre = x[static_cast<std::size_t>(s.index(z, r, c))];
    double sum = 0.0;
    for (int dz = -1; dz <= 1; ++dz) {
      for (int dr = -1; dr <= 1; ++dr) {
        for (int dc = -1; dc <= 1; ++dc) {
          if (dz == 0 && dr == 0 && dc == 0) continue;
          std::int64_t zz = z + dz, rr = r + dr, cc = c + dc;
          double value;
          const bool inside = zz >= 0 && zz < D && rr >= 0 && rr < R && cc >= 0 && cc < C;
          if (inside) {
            value = x[static_cast<std::size_t>(s.index(zz, rr, cc))];
          } else if (m.boundary == Boundary::Periodic) {
            zz = (zz + D) % D;
            rr = (rr + R) % R;
            cc = (cc + C) % C;
            value = x[static_cast<std::size_t>(s.index(zz, rr, cc))];
          } else if (m.boundary == Boundary::Fixed) {
            value = outside;
          } else {
            continue;  // zero flux: contributes nothing
          }
          sum += m.weights[static_cast<std::size_t>(weight_index(dz, dr, dc))] * (value - centre);
        }
      }
    }
    return sum;
  };
  for (std::int64_t z = 0; z < D; ++z) {
    for (std::int64_t r = 0; r < R; ++r) {
      for (std::int64_t c = 0; c < C; ++c) {
        const auto i = static_cast<std::size_t>(s.index(z, r, c));
        const double u = s.u[i], v = s.v[i];
        const double uvv = u * v * v;
        next.u[i] = u + m.dt * (m.du * lap(s.u, z, r, c, m.outside_u) - uvv + m.feed * (1.0 - u));
        next.v[i] =
            v + m.dt * (m.dv * lap(s.v, z, r, c, m.outside_v) + uvv - (m.feed + m.kill) * v);
      }
    }
  }
  s = std::move(next);
}

}  // namespace grayscott::reference
