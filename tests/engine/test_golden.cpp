// Golden values: cells of tiny grids after one and after three steps, worked out by hand from the
// model's formulas (docs/model.md), with the arithmetic written out below; no code of this project
// computes them, not even the float64 reference. Every check elsewhere derives from this project's
// own reading of the model; these pin that reading to numbers.
//
// The model, per cell, with L the stencil's weighted sum of (neighbour - centre):
//   u' = u + dt (du L(u) - u v^2 + F (1 - u))
//   v' = v + dt (dv L(v) + u v^2 - (F + k) v)
// Oono-Puri weights: 1/4 on the diagonals, 1/2 on the four sides (their sum: 3). Outside the grid:
// zero flux, nothing; periodic, the opposite edge; fixed, u = 1 and v = 0.
// Rates everywhere here: F = 0.04, k = 0.06, du = 0.2, dv = 0.1, dt = 1 (so F + k = 0.1). Every
// input and every value below is a short binary fraction times a power of ten: exact in double up
// to the last bit or two, within a few float ulps in single precision.
#include <gtest/gtest.h>

#include <vector>

#include "engine/cpu/cpu_engine.hpp"
#include "model/model.hpp"

using namespace grayscott;

namespace {

Problem golden_problem(std::int64_t rows, std::int64_t cols, Boundary boundary,
                       Precision precision) {
  Problem problem;
  problem.grid = {rows, cols};
  problem.stencil = Stencil::oono_puri();
  problem.boundary = boundary;
  problem.precision = precision;
  problem.params.feed = 0.04;
  problem.params.kill = 0.06;
  problem.params.du = 0.2;
  problem.params.dv = 0.1;
  problem.params.dt = 1.0;
  problem.validate();
  return problem;
}

template <class Real>
struct Fields {
  std::vector<Real> u, v;
};

template <class Real>
Fields<Real> advance(const Problem& problem, const std::vector<double>& u0,
                     const std::vector<double>& v0, std::int64_t steps, int fuse) {
  EngineOptions options;
  options.backend = "cpu";
  options.threads = 1;
  options.fuse_steps = fuse;
  const Parameters params[1] = {problem.params};
  cpu::CpuEngine<Real> engine(problem, params, options);
  engine.load(0, std::vector<Real>(u0.begin(), u0.end()), std::vector<Real>(v0.begin(), v0.end()));
  engine.advance(steps);
  engine.capture({true, true});
  Fields<Real> out{std::vector<Real>(u0.size()), std::vector<Real>(v0.size())};
  engine.read_captured(0, out.u.data(), out.v.data());
  return out;
}

// Tolerance: a few ulps of values below 1.
template <class Real>
constexpr double tolerance = sizeof(Real) == 4 ? 4e-7 : 1e-15;

struct Cell {
  int row, col;
  double u, v;
};

template <class Real>
void expect_cells(const Fields<Real>& got, std::int64_t cols, const std::vector<Cell>& cells,
                  const char* what) {
  for (const Cell& c : cells) {
    const auto i = static_cast<std::size_t>(c.row * cols + c.col);
    EXPECT_NEAR(got.u[i], c.u, tolerance<Real>) << what << " u(" << c.row << "," << c.col << ")";
    EXPECT_NEAR(got.v[i], c.v, tolerance<Real>) << what << " v(" << c.row << "," << c.col << ")";
  }
}

// A 3x4 grid, background u = 0.5, v = 0.25, one cell S = (1,0) on the left edge at u = 0, v = 1:
//
//      col 0   1   2   3
//   row 0  b   b   b   b        b: u = 1/2, v = 1/4
//       1  S   b   b   b        S: u = 0,   v = 1
//       2  b   b   b   b
//
// Reaction terms (the part of u' - u and v' - v that is not diffusion):
//   at b: u v^2 = 0.5 * 0.0625 = 0.03125, F (1 - u) = 0.04 * 0.5 = 0.02, (F + k) v = 0.1 * 0.25
//         = 0.025, so u' = 0.5 - 0.03125 + 0.02 + 0.2 L(u) = 0.48875 + 0.2 L(u),
//                     v' = 0.25 + 0.03125 - 0.025 + 0.1 L(v) = 0.25625 + 0.1 L(v)
//   at S: u v^2 = 0, F (1 - u) = 0.04, (F + k) v = 0.1,
//         so u' = 0.04 + 0.2 L(u), v' = 1 - 0.1 + 0.1 L(v) = 0.9 + 0.1 L(v)
// A b neighbour of S adds w (0.5 - 0) = 0.5 w to L(u) at S, w (0.25 - 1) = -0.75 w to L(v);
// S as a neighbour of b adds w (0 - 0.5) = -0.5 w to L(u) at b, w (1 - 0.25) = 0.75 w to L(v).
// A fixed outside neighbour adds w (1 - u) to L(u) and w (0 - v) to L(v).
//
// Cells checked: S itself; E = (1,3), across the right edge from S (periodic neighbours through
// the side, weight 1/2); C = (0,0), the corner above S (S is its side neighbour below, weight 1/2).
//
// S: inside, sides (0,0), (1,1), (2,0) = 1.5 and diagonals (0,1), (2,1) = 0.5: 2.0 of b;
//    outside: sides (1,-1) = 0.5, diagonals (0,-1), (2,-1) = 0.5: 1.0.
//   zero flux: L(u) = 2.0 * 0.5 = 1.0, L(v) = 2.0 * -0.75 = -1.5
//              u' = 0.04 + 0.2 = 0.24, v' = 0.9 - 0.15 = 0.75
//   fixed:     L(u) = 1.0 + 1.0 * (1 - 0) = 2.0, L(v) = -1.5 + 1.0 * (0 - 1) = -2.5
//              u' = 0.04 + 0.4 = 0.44, v' = 0.9 - 0.25 = 0.65
//   periodic:  the outside 1.0 wraps to column 3, all b: L(u) = 3.0 * 0.5 = 1.5,
//              L(v) = 3.0 * -0.75 = -2.25; u' = 0.04 + 0.3 = 0.34, v' = 0.9 - 0.225 = 0.675
// E: inside, all five neighbours are b: nothing; outside: (1,4) side 0.5, (0,4), (2,4) 0.25 each.
//   zero flux: L = 0: u' = 0.48875, v' = 0.25625
//   fixed:     L(u) = 1.0 * (1 - 0.5) = 0.5, L(v) = 1.0 * (0 - 0.25) = -0.25
//              u' = 0.48875 + 0.1 = 0.58875, v' = 0.25625 - 0.025 = 0.23125
//   periodic:  (1,4) is S (side, 0.5), (0,4) and (2,4) are b: L(u) = -0.25, L(v) = 0.375
//              u' = 0.48875 - 0.05 = 0.43875, v' = 0.25625 + 0.0375 = 0.29375
// C: inside, S below (side, 0.5) and two b; outside: sides (-1,0), (0,-1) = 1.0, diagonals
//    (-1,-1), (-1,1), (1,-1) = 0.75: 1.75.
//   zero flux: L(u) = -0.25, L(v) = 0.375: u' = 0.43875, v' = 0.29375
//   fixed:     L(u) = -0.25 + 1.75 * 0.5 = 0.625, L(v) = 0.375 + 1.75 * -0.25 = -0.0625
//              u' = 0.48875 + 0.125 = 0.61375, v' = 0.25625 - 0.00625 = 0.25
//   periodic:  the outside wraps to (2,3), (2,0), (2,1), (0,3), (1,3), all b: as zero flux.
TEST(GoldenValues, OneStepOnA3x4GridForEveryBoundary) {
  std::vector<double> u(12, 0.5), v(12, 0.25);
  u[4] = 0.0;  // S = (1,0)
  v[4] = 1.0;
  struct Expected {
    Boundary boundary;
    std::vector<Cell> cells;
  };
  const std::vector<Expected> expected = {
      {Boundary::ZeroFlux,
       {{1, 0, 0.24, 0.75}, {1, 3, 0.48875, 0.25625}, {0, 0, 0.43875, 0.29375}}},
      {Boundary::Fixed, {{1, 0, 0.44, 0.65}, {1, 3, 0.58875, 0.23125}, {0, 0, 0.61375, 0.25}}},
      {Boundary::Periodic,
       {{1, 0, 0.34, 0.675}, {1, 3, 0.43875, 0.29375}, {0, 0, 0.43875, 0.29375}}}};
  for (const auto& e : expected) {
    const std::string what(to_string(e.boundary));
    expect_cells(advance<float>(golden_problem(3, 4, e.boundary, Precision::Single), u, v, 1, 1), 4,
                 e.cells, (what + " single").c_str());
    expect_cells(advance<double>(golden_problem(3, 4, e.boundary, Precision::Double), u, v, 1, 1),
                 4, e.cells, (what + " double").c_str());
  }
}

// One cell, u = 0.5, v = 0.25, three steps. Zero flux and periodic (a 1x1 grid wraps onto
// itself): L = 0, the reaction alone. Fixed: all 8 neighbours outside, L(u) = 3 (1 - u),
// L(v) = 3 (0 - v) = -3 v.
//
// Zero flux / periodic:
//   step 1: u v^2 = 0.5 * 0.0625 = 0.03125
//           u1 = 0.5 - 0.03125 + 0.04 * 0.5 = 0.48875
//           v1 = 0.25 + 0.03125 - 0.1 * 0.25 = 0.25625
//   step 2: v1^2 = 0.25625^2 = 0.0656640625, u v^2 = 0.48875 * 0.0656640625 = 0.032093310546875
//           u2 = 0.48875 - 0.032093310546875 + 0.04 * 0.51125 (= 0.02045) = 0.477106689453125
//           v2 = 0.25625 + 0.032093310546875 - 0.025625 = 0.262718310546875
//   step 3: v2^2 = 0.0690209106966..., u v^2 = u2 * v2^2 = 0.0329303382054966...
//           u3 = u2 - u v^2 + 0.04 (1 - u2) = 0.465092083669503361...
//           v3 = v2 + u v^2 - 0.1 v2 = 0.269376817697684138...
// Fixed:
//   step 1: L(u) = 3 * 0.5 = 1.5, L(v) = -0.75
//           u1 = 0.5 + 0.2 * 1.5 - 0.03125 + 0.02 = 0.78875
//           v1 = 0.25 - 0.1 * 0.75 + 0.03125 - 0.025 = 0.18125
//   step 2: L(u) = 3 * 0.21125 = 0.63375, L(v) = -0.54375, v1^2 = 0.0328515625,
//           u v^2 = 0.78875 * 0.0328515625 = 0.025911669921875
//           u2 = 0.78875 + 0.12675 - 0.025911669921875 + 0.04 * 0.21125 (= 0.00845)
//              = 0.898038330078125
//           v2 = 0.18125 - 0.054375 + 0.025911669921875 - 0.018125 = 0.134661669921875
//   step 3: L(u) = 3 * (1 - u2) = 0.305885009765625, L(v) = -3 v2 = -0.403985009765625,
//           v2^2 = 0.0181337653461..., u v^2 = u2 * v2^2 = 0.0162848163494833...
//           u3 = u2 + 0.2 L(u) - u v^2 + 0.04 (1 - u2) = 0.947008982478641665...
//           v3 = v2 + 0.1 L(v) + u v^2 - 0.1 v2 = 0.097081818302608334...
// (Steps 3 written to 18 digits from exact rational arithmetic of the lines above.)
TEST(GoldenValues, ThreeStepsOfOneCellForEveryBoundary) {
  const std::vector<double> u{0.5}, v{0.25};
  struct Expected {
    Boundary boundary;
    double u1, v1, u3, v3;
  };
  for (const auto& e :
       {Expected{Boundary::ZeroFlux, 0.48875, 0.25625, 0.465092083669503361, 0.269376817697684138},
        Expected{Boundary::Periodic, 0.48875, 0.25625, 0.465092083669503361, 0.269376817697684138},
        Expected{Boundary::Fixed, 0.78875, 0.18125, 0.947008982478641665, 0.097081818302608334}}) {
    const std::string what(to_string(e.boundary));
    for (int fuse : {1, 3}) {
      const Problem single = golden_problem(1, 1, e.boundary, Precision::Single);
      const Problem dbl = golden_problem(1, 1, e.boundary, Precision::Double);
      expect_cells(advance<float>(single, u, v, 1, fuse), 1, {{0, 0, e.u1, e.v1}},
                   (what + " single, 1 step").c_str());
      expect_cells(advance<float>(single, u, v, 3, fuse), 1, {{0, 0, e.u3, e.v3}},
                   (what + " single, 3 steps").c_str());
      expect_cells(advance<double>(dbl, u, v, 1, fuse), 1, {{0, 0, e.u1, e.v1}},
                   (what + " double, 1 step").c_str());
      expect_cells(advance<double>(dbl, u, v, 3, fuse), 1, {{0, 0, e.u3, e.v3}},
                   (what + " double, 3 steps").c_str());
    }
  }
}

}  // namespace
