// The model's third dimension: a grid's depth, a volume's stencils (their names, their scale, the
// range of their Fourier symbols), which stencil a grid takes, and the starts on a volume.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "model/neighbourhood.hpp"
#include "reference/from_model.hpp"

using namespace grayscott;

namespace {

std::string refusal(const Problem& p) {
  try {
    p.validate();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

Problem volume(std::int64_t depth, std::int64_t rows, std::int64_t cols,
               Stencil stencil = Stencil::seven_point()) {
  Problem p;
  p.grid = {rows, cols, depth};
  p.stencil = stencil;
  return p;
}

}  // namespace

TEST(VolumeModel, StencilNames) {
  EXPECT_EQ(Stencil::parse("seven-point").kind, StencilKind::SevenPoint);
  EXPECT_EQ(Stencil::parse("nineteen-point").kind, StencilKind::NineteenPoint);
  EXPECT_EQ(Stencil::seven_point().name(), "seven-point");
  EXPECT_EQ(Stencil::nineteen_point().name(), "nineteen-point");
  EXPECT_TRUE(Stencil::seven_point().three_dimensional());
  EXPECT_FALSE(Stencil::five_point().three_dimensional());
}

TEST(VolumeModel, GridCountsEveryPlane) {
  const Grid g{4, 5, 3};
  EXPECT_EQ(g.cells(), 60);
  EXPECT_EQ(g.plane_cells(), 20);
  EXPECT_TRUE(g.volume());
  EXPECT_EQ(g.text(), "3x4x5");
  EXPECT_EQ((Grid{4, 5}).text(), "4x5");
  EXPECT_FALSE((Grid{4, 5}).volume());
}

// The symbol's extremes against a dense sampling of the wave vectors from the reference's
// weights (an independent sum over the 26 neighbours): the corners are exact, the sampling may
// only fall short of them.
TEST(VolumeModel, SymbolRangeIsTheReferenceWeightsExtreme) {
  for (const Stencil& s : {Stencil::seven_point(), Stencil::nineteen_point()}) {
    const reference::Weights27 w = to_reference3(volume(4, 4, 4, s)).weights;
    double lowest = 0;
    const int n = 24;
    for (int a = 0; a <= n; ++a)
      for (int b = 0; b <= n; ++b)
        for (int c = 0; c <= n; ++c) {
          const double t[3] = {M_PI * a / n, M_PI * b / n, M_PI * c / n};
          double sum = 0;
          for (int dz = -1; dz <= 1; ++dz)
            for (int dr = -1; dr <= 1; ++dr)
              for (int dc = -1; dc <= 1; ++dc)
                sum += w[static_cast<std::size_t>(reference::weight_index(dz, dr, dc))] *
                       (std::cos(dz * t[0] + dr * t[1] + dc * t[2]) - 1.0);
          lowest = std::min(lowest, sum);
        }
    const Stencil::SymbolRange range = s.symbol_range();
    EXPECT_NEAR(range.lowest, lowest, 1e-12) << s.name();
    EXPECT_EQ(range.highest, 0.0);
    EXPECT_TRUE(s.diffusive());
  }
  EXPECT_NEAR(Stencil::seven_point().spectral_radius(), 2.0, 1e-15);
  EXPECT_NEAR(Stencil::nineteen_point().spectral_radius(), 8.0 / 9, 1e-15);
}

TEST(VolumeModel, AGridTakesItsOwnKindOfStencil) {
  EXPECT_EQ(refusal(volume(8, 8, 8)), "");
  EXPECT_EQ(refusal(volume(2, 1, 1, Stencil::nineteen_point())), "");
  EXPECT_EQ(refusal(volume(8, 8, 8, Stencil::oono_puri())),
            "stencil oono-puri is a plane's (3x3): a grid of depth 8 needs a volume's stencil, "
            "seven-point or nineteen-point");
  EXPECT_EQ(refusal(volume(1, 8, 8)),
            "stencil seven-point is a volume's (3x3x3): it needs a grid of depth 2 or more, and "
            "this grid is a plane (depth 1)");
  EXPECT_EQ(refusal(volume(0, 8, 8)), "depth must be a positive integer (1: a plane)");
  EXPECT_EQ(refusal(volume(-3, 8, 8)), "depth must be a positive integer (1: a plane)");
}

TEST(VolumeModel, StabilityLimitUsesTheVolumesRadius) {
  Problem p = volume(8, 8, 8);
  p.params = {0.01, 0.05, 0.2, 0.1, 2.0};  // ADIOS2's example's
  EXPECT_NEAR(p.dt_limit(), 2.0 / (0.01 + 0.2 * 2.0), 1e-12);
  EXPECT_EQ(refusal(p), "");
  p.params.dt = 5.0;
  EXPECT_NE(refusal(p).find("exceeds the explicit-Euler stability limit 4.87"), std::string::npos)
      << refusal(p);
}

TEST(VolumeModel, NeighbourOffsetsAreTheFacesThenTheEdgesOnce) {
  std::vector<int> seen(27, 0);
  for (int k = 0; k < 18; ++k) {
    const VolumeOffset o = volume_offset(k);
    const int away = std::abs(o.dz) + std::abs(o.dr) + std::abs(o.dc);
    EXPECT_EQ(away, k < 6 ? 1 : 2) << k;
    ++seen[static_cast<std::size_t>(reference::weight_index(o.dz, o.dr, o.dc))];
  }
  for (int i = 0; i < 27; ++i) {
    const int dz = i / 9 - 1, dr = i / 3 % 3 - 1, dc = i % 3 - 1;
    const int away = std::abs(dz) + std::abs(dr) + std::abs(dc);
    EXPECT_EQ(seen[static_cast<std::size_t>(i)], away == 1 || away == 2 ? 1 : 0) << i;
  }
}

// The weights every kernel folds into a volume's update are the reference's: the faces', the
// edges' (none for seven-point), and their sum.
TEST(VolumeModel, FoldedWeightsAreTheReferences) {
  for (const Stencil& st : {Stencil::seven_point(), Stencil::nineteen_point()}) {
    const reference::Weights27 w = to_reference3(volume(3, 3, 3, st)).weights;
    const FoldedWeights folded = folded_weights(st.kind);
    double sum = 0;
    for (int k = 0; k < 18; ++k) {
      const VolumeOffset o = volume_offset(k);
      const double weight = w[static_cast<std::size_t>(reference::weight_index(o.dz, o.dr, o.dc))];
      EXPECT_EQ(weight, k < 6 ? folded.nearest : folded.diagonal) << st.name() << " k " << k;
      sum += weight;
    }
    EXPECT_NEAR(folded.sum, sum, 1e-15) << st.name();
  }
}

TEST(VolumeStart, ShapesSpanTheMiddlePlanes) {
  const Grid g{64, 64, 64};
  EXPECT_EQ(shape_planes(g, InitialKind::Rectangle),
            (std::pair<std::int64_t, std::int64_t>{28, 32}));
  EXPECT_EQ(shape_planes(g, InitialKind::Cube), (std::pair<std::int64_t, std::int64_t>{26, 38}));
  EXPECT_EQ(shape_planes(g, InitialKind::Drop), (std::pair<std::int64_t, std::int64_t>{31, 33}));
  // The box's planes follow its rows' rule (linspace over the axis, 0.4 < z < 0.6).
  const SeedRectangle box = shape_cells(g, InitialKind::Box);
  EXPECT_EQ(shape_planes(g, InitialKind::Box),
            (std::pair<std::int64_t, std::int64_t>{box.row_begin, box.row_end}));
  // A rectangle keeps a plane on the thinnest volume; a plane is its own only plane.
  EXPECT_EQ(shape_planes(Grid{8, 8, 3}, InitialKind::Rectangle),
            (std::pair<std::int64_t, std::int64_t>{1, 2}));
  EXPECT_EQ(shape_planes(Grid{8, 8, 1}, InitialKind::Cube),
            (std::pair<std::int64_t, std::int64_t>{0, 1}));
  // A box that no plane of the volume holds is refused, naming the grid.
  try {
    check_initial_state(Grid{64, 64, 2}, {InitialKind::Box});
    ADD_FAILURE() << "a box on two planes was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("a grid of 2x64x64 is too small"), std::string::npos)
        << e.what();
  }
}

// ADIOS2's example's cube: u = 0.25, v = 0.33 in [L/2 - 6, L/2 + 6)^3, u = 1, v = 0 elsewhere.
TEST(VolumeStart, CubeIsADIOS2sExampleStart) {
  const Grid g{20, 24, 16};
  std::vector<double> u(static_cast<std::size_t>(g.cells())), v(u.size());
  fill_initial_state<double>(g, {InitialKind::Cube}, u, v);
  for (std::int64_t z = 0; z < g.depth; ++z)
    for (std::int64_t r = 0; r < g.rows; ++r)
      for (std::int64_t c = 0; c < g.cols; ++c) {
        const bool inside = z >= 2 && z < 14 && r >= 4 && r < 16 && c >= 6 && c < 18;
        const auto i = static_cast<std::size_t>((z * g.rows + r) * g.cols + c);
        ASSERT_EQ(u[i], inside ? 0.25 : 1.0) << z << "," << r << "," << c;
        ASSERT_EQ(v[i], inside ? 0.33 : 0.0) << z << "," << r << "," << c;
      }
}

// A volume's noise draws from each cell's index in the volume: the first plane is the plane's
// start, the others new values.
TEST(VolumeStart, NoiseOfTheFirstPlaneIsThePlanesAndTheOthersDiffer) {
  const Grid plane{12, 10}, vol{12, 10, 3};
  const InitialState noise{InitialKind::Noise, 5};
  std::vector<float> pu(120), pv(120), vu(360), vv(360);
  // Plane 0 is outside the volume's shape ([1, 2)): compare it outside the plane's rectangle.
  fill_initial_state<float>(plane, noise, pu, pv);
  fill_initial_state<float>(vol, noise, vu, vv);
  const SeedRectangle rect = seed_rectangle(plane);
  int unclamped = 0, same = 0;
  for (std::size_t i = 0; i < 120; ++i) {
    if (!rect.contains(static_cast<std::int64_t>(i) / 10, static_cast<std::int64_t>(i) % 10)) {
      EXPECT_EQ(vu[i], pu[i]) << i;
    }
    if (vu[i] < 1.0f && vu[240 + i] < 1.0f) {  // noise above 1 is clamped to it
      ++unclamped;
      same += vu[240 + i] == vu[i];
    }
  }
  EXPECT_GT(unclamped, 10);
  EXPECT_EQ(same, 0);
}
