// The float64 reference in three dimensions (src/reference/reference3d.hpp), checked against what
// does not depend on it: the plane's reference for a volume one cell deep, the Laplacian of
// polynomials worked out by hand, the decay of a Fourier mode by the stencil's symbol, and the
// symmetries of a cube.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "reference/from_model.hpp"
#include "reference/reference3d.hpp"

namespace grayscott::reference {
namespace {

Volume varied_volume(std::int64_t depth, std::int64_t rows, std::int64_t cols) {
  const State plane = varied_state(depth * rows, cols, 7);
  return {depth, rows, cols, plane.u, plane.v};
}

Model3 model(const Weights27& weights, Boundary boundary) {
  return {weights, boundary, 0.03, 0.06, 0.2, 0.1, 1.0, 0.8, 0.1};
}

TEST(Reference3d, AVolumeOneCellDeepStepsAsThePlane) {
  const std::array<double, 9> oono_puri{0.25, 0.5, 0.25, 0.5, -3.0, 0.5, 0.25, 0.5, 0.25};
  for (const Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    Volume volume = varied_volume(1, 9, 13);
    State plane{9, 13, volume.u, volume.v};
    const Model3 m3 = model(in_plane(oono_puri), boundary);
    const Model m2{oono_puri, boundary, m3.feed,      m3.kill,     m3.du,
                   m3.dv,     m3.dt,    m3.outside_u, m3.outside_v};
    for (int s = 0; s < 5; ++s) {
      step(m3, volume);
      step(m2, plane);
    }
    EXPECT_EQ(volume.u, plane.u) << static_cast<int>(boundary);
    EXPECT_EQ(volume.v, plane.v) << static_cast<int>(boundary);
  }
}

// Pure diffusion of u (v = 0, no feed): one step adds dt * du * Laplacian. For u = x^2 + 2 y^2 +
// 3 z^2 the true Laplacian is 12; both stencils are h^2/6 of it, 2, exactly at every cell away
// from the frame (second differences of quadratics are exact).
TEST(Reference3d, BothStencilsGiveASixthOfTheLaplacianOfAQuadratic) {
  for (const Weights27& weights : {seven_point(), nineteen_point()}) {
    Volume s{6, 7, 8, {}, {}};
    s.u.resize(6 * 7 * 8);
    s.v.assign(6 * 7 * 8, 0.0);
    for (std::int64_t z = 0; z < 6; ++z)
      for (std::int64_t r = 0; r < 7; ++r)
        for (std::int64_t c = 0; c < 8; ++c)
          s.u[static_cast<std::size_t>(s.index(z, r, c))] =
              static_cast<double>(c * c + 2 * r * r + 3 * z * z);
    const Volume before = s;
    Model3 m = model(weights, Boundary::ZeroFlux);
    m.feed = m.kill = 0;
    m.du = 0.5;
    m.dt = 0.25;
    step(m, s);
    for (std::int64_t z = 1; z < 5; ++z)
      for (std::int64_t r = 1; r < 6; ++r)
        for (std::int64_t c = 1; c < 7; ++c) {
          const auto i = static_cast<std::size_t>(s.index(z, r, c));
          EXPECT_NEAR(s.u[i] - before.u[i], 0.25 * 0.5 * 2.0, 1e-12) << z << " " << r << " " << c;
        }
  }
}

// A Fourier mode on a periodic grid is an eigenvector of the stencil: one step of pure diffusion
// multiplies it by 1 + dt du lambda, lambda the stencil's symbol at the mode's wave numbers.
TEST(Reference3d, AFourierModeDecaysByTheStencilsSymbol) {
  const std::int64_t D = 6, R = 8, C = 10;
  const double kz = 2 * std::numbers::pi * 1 / D, kr = 2 * std::numbers::pi * 2 / R,
               kc = 2 * std::numbers::pi * 3 / C;
  const auto symbol = [&](const Weights27& w) {
    double lambda = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc)
          lambda += w[static_cast<std::size_t>(weight_index(dz, dr, dc))] *
                    (std::cos(kz * dz + kr * dr + kc * dc) - 1.0);
    return lambda;
  };
  for (const Weights27& weights : {seven_point(), nineteen_point()}) {
    Volume s{D, R, C, std::vector<double>(D * R * C), std::vector<double>(D * R * C, 0.0)};
    for (std::int64_t z = 0; z < D; ++z)
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t c = 0; c < C; ++c)
          s.u[static_cast<std::size_t>(s.index(z, r, c))] =
              std::cos(kz * static_cast<double>(z) + kr * static_cast<double>(r) +
                       kc * static_cast<double>(c));
    const Volume before = s;
    Model3 m = model(weights, Boundary::Periodic);
    m.feed = m.kill = 0;
    step(m, s);
    const double factor = 1.0 + m.dt * m.du * symbol(weights);
    ASSERT_LT(factor, 1.0);
    for (std::size_t i = 0; i < s.u.size(); ++i)
      EXPECT_NEAR(s.u[i], factor * before.u[i], 1e-12) << i;
  }
}

// A state symmetric under swapping two axes of a cube stays so, for every boundary: the stencils
// and the boundary rules treat the three axes alike.
TEST(Reference3d, ACubesSymmetryIsKept) {
  const std::int64_t n = 9;
  for (const Weights27& weights : {seven_point(), nineteen_point()}) {
    for (const Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      Volume s{n, n, n, std::vector<double>(n * n * n, 1.0), std::vector<double>(n * n * n, 0.0)};
      // A centred cube of 3^3 cells, and a bump off the diagonal mirrored under every swap.
      for (std::int64_t z = 3; z < 6; ++z)
        for (std::int64_t r = 3; r < 6; ++r)
          for (std::int64_t c = 3; c < 6; ++c) {
            s.u[static_cast<std::size_t>(s.index(z, r, c))] = 0.5;
            s.v[static_cast<std::size_t>(s.index(z, r, c))] = 0.25;
          }
      for (const auto& [z, r, c] : {std::array<std::int64_t, 3>{1, 2, 6},
                                    {1, 6, 2},
                                    {2, 1, 6},
                                    {2, 6, 1},
                                    {6, 1, 2},
                                    {6, 2, 1}})
        s.v[static_cast<std::size_t>(s.index(z, r, c))] = 0.4;
      const Model3 m = model(weights, boundary);
      for (int k = 0; k < 20; ++k) step(m, s);
      for (std::int64_t z = 0; z < n; ++z)
        for (std::int64_t r = 0; r < n; ++r)
          for (std::int64_t c = 0; c < n; ++c) {
            const double here = s.v[static_cast<std::size_t>(s.index(z, r, c))];
            // Equal but for the order in which each cell's neighbours are added.
            EXPECT_NEAR(here, s.v[static_cast<std::size_t>(s.index(r, z, c))], 1e-14);
            EXPECT_NEAR(here, s.v[static_cast<std::size_t>(s.index(c, r, z))], 1e-14);
            EXPECT_NEAR(here, s.v[static_cast<std::size_t>(s.index(z, c, r))], 1e-14);
          }
      // Something happened: the cube's centre changed.
      EXPECT_NE(s.v[static_cast<std::size_t>(s.index(4, 4, 4))], 0.25);
    }
  }
}

// Under Fixed, the cells beyond every face hold the outside values: a uniform volume at them does
// not diffuse, one away from them does at the faces only.
TEST(Reference3d, FixedFacesHoldTheOutsideValues) {
  Model3 m = model(seven_point(), Boundary::Fixed);
  m.feed = m.kill = 0;
  m.outside_v = 0;  // v stays 0: u only diffuses
  Volume s{4, 5, 6, std::vector<double>(120, m.outside_u), std::vector<double>(120, 0.0)};
  const Volume before = s;
  step(m, s);
  EXPECT_EQ(s.u, before.u);
  s.u.assign(120, 0.5);
  step(m, s);
  // A corner cell sees three outside faces, an inner cell none.
  const double corner = 0.5 + m.dt * m.du * (3.0 / 6) * (m.outside_u - 0.5);
  EXPECT_DOUBLE_EQ(s.u[static_cast<std::size_t>(s.index(0, 0, 0))], corner);
  EXPECT_DOUBLE_EQ(s.u[static_cast<std::size_t>(s.index(1, 2, 2))], 0.5);
}

}  // namespace
}  // namespace grayscott::reference
