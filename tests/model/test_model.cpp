#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "model/cell_update.hpp"
#include "model/model.hpp"

using namespace grayscott;

TEST(Stencil, BuiltInWeights) {
  EXPECT_EQ(Stencil::oono_puri().weights,
            (std::array<double, 9>{0.25, 0.5, 0.25, 0.5, 0, 0.5, 0.25, 0.5, 0.25}));
  EXPECT_EQ(Stencil::pretty().weights, (std::array<double, 9>{1, 1, 1, 1, 0, 1, 1, 1, 1}));
  EXPECT_EQ(Stencil::five_point().weights, (std::array<double, 9>{0, 1, 0, 1, 0, 1, 0, 1, 0}));
}

TEST(Stencil, ParsesNamesAndWeights) {
  EXPECT_EQ(Stencil::parse("oono-puri").kind, StencilKind::OonoPuri);
  EXPECT_EQ(Stencil::parse("pretty").kind, StencilKind::Pretty);
  EXPECT_EQ(Stencil::parse("five-point").kind, StencilKind::FivePoint);
  const Stencil s = Stencil::parse("1,2,3,4,5,6,7,8,9");
  EXPECT_EQ(s.kind, StencilKind::Custom);
  EXPECT_EQ(s.weights, (std::array<double, 9>{1, 2, 3, 4, 0, 6, 7, 8, 9}));  // centre ignored
  EXPECT_EQ(s.name(), "custom");
}

TEST(Stencil, RejectsBadWeights) {
  EXPECT_THROW(Stencil::parse("1,2,3"), InvalidInput);
  EXPECT_THROW(Stencil::parse("1,2,3,4,5,6,7,8,9,10"), InvalidInput);
  EXPECT_THROW(Stencil::parse("1,2,3,4,x,6,7,8,9"), InvalidInput);
  EXPECT_THROW(Stencil::parse("1,2,3,4,5,6,7,8,inf"), InvalidInput);
  EXPECT_THROW(Stencil::parse("1,2,3,4,5,6,7,8,nan"), InvalidInput);
  EXPECT_THROW(Stencil::parse("laplace"), InvalidInput);
}

TEST(Stencil, SpectralRadius) {
  EXPECT_NEAR(Stencil::oono_puri().spectral_radius(), 4.0, 1e-12);
  EXPECT_NEAR(Stencil::five_point().spectral_radius(), 8.0, 1e-12);
  EXPECT_NEAR(Stencil::pretty().spectral_radius(), 12.0, 1e-12);
}

// L(theta) sampled on an n x n lattice of wave vectors that holds 0 and pi: its extremes lie
// within the true ones, and within O(1/n^2) of them.
Stencil::SymbolRange sampled_symbol_range(const Stencil& s, int n) {
  Stencil::SymbolRange range;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double a = 2.0 * M_PI * i / n - M_PI, b = 2.0 * M_PI * j / n - M_PI;
      double symbol = 0.0;
      for (int dr = -1; dr <= 1; ++dr) {
        for (int dc = -1; dc <= 1; ++dc) {
          symbol += s.weights[(dr + 1) * 3 + dc + 1] * (std::cos(dr * a + dc * b) - 1.0);
        }
      }
      range.lowest = std::min(range.lowest, symbol);
      range.highest = std::max(range.highest, symbol);
    }
  }
  return range;
}

TEST(Stencil, SymbolRangeOfTheBuiltIns) {
  // Their extremes sit at multiples of pi: exact, as the stability limits in docs/model.md.
  for (const auto& [stencil, lowest] : {std::pair{Stencil::oono_puri(), -4.0},
                                        {Stencil::five_point(), -8.0},
                                        {Stencil::pretty(), -12.0}}) {
    const Stencil::SymbolRange range = stencil.symbol_range();
    EXPECT_DOUBLE_EQ(range.lowest, lowest) << stencil.name();
    EXPECT_EQ(range.highest, 0.0) << stencil.name();
    EXPECT_TRUE(stencil.diffusive()) << stencil.name();
  }
  EXPECT_TRUE(Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15}).diffusive());
  EXPECT_EQ(Stencil::custom({}).symbol_range().lowest, 0.0);  // no diffusion at all
}

TEST(Stencil, SymbolRangeIsTheTrueExtremeForAnyWeights) {
  // Mixed signs and no symmetry: the closed form never underestimates what a fine lattice sees,
  // and exceeds it by no more than the lattice's spacing allows.
  std::uint64_t state = 12345;
  const auto uniform = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1p-53 * 2.0 - 1.0;
  };
  for (int trial = 0; trial < 60; ++trial) {
    std::array<double, 9> w{};
    for (double& x : w) x = uniform();
    const Stencil s = Stencil::custom(w);
    const Stencil::SymbolRange exact = s.symbol_range(), sampled = sampled_symbol_range(s, 400);
    EXPECT_LE(exact.lowest, sampled.lowest + 1e-12) << trial;
    EXPECT_GE(exact.highest, sampled.highest - 1e-12) << trial;
    EXPECT_NEAR(exact.lowest, sampled.lowest, 2e-3) << trial;
    EXPECT_NEAR(exact.highest, sampled.highest, 2e-3) << trial;
  }
}

TEST(Problem, RefusesAntiDiffusiveStencils) {
  // Negative corners outweighing the edges: L = +4 at the wave vector (pi, 0). Its largest |L| is
  // 8 (at (pi, pi)), so a check of magnitudes alone took it for a diffusive stencil. And positive
  // edges with one diagonal pair below zero: L reaches +0.5 along the other diagonal.
  for (const auto& [s, highest] :
       {std::pair{Stencil::custom({-1, 1, -1, 1, 0, 1, -1, 1, -1}), 4.0},
        {Stencil::custom({0.75, 0.5, -0.5, 0.5, 0, 0.5, -0.5, 0.5, 0.75}), 0.5}}) {
    EXPECT_FALSE(s.diffusive());
    EXPECT_NEAR(s.symbol_range().highest, highest, 1e-12);
    Problem p;
    p.stencil = s;
    p.params.dt = 0.01;
    try {
      p.validate();
      FAIL() << "an anti-diffusive stencil was accepted";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("anti-diffusive"), std::string::npos) << e.what();
    }
  }
  // Negative corners the edges outweigh: diffusive, and the limit comes from max(-L) = 8.
  Problem p;
  p.stencil = Stencil::custom({-0.1, 1, -0.1, 1, 0, 1, -0.1, 1, -0.1});
  EXPECT_TRUE(p.stencil.diffusive());
  EXPECT_NEAR(p.stencil.spectral_radius(), 8.0, 1e-12);
  EXPECT_NEAR(p.dt_limit(), 2.0 / (0.014 + 0.1 * 8), 1e-12);
  EXPECT_NO_THROW(p.validate());
}

TEST(Problem, StabilityLimit) {
  // At u = 1, v = 0 the finest mode of u decays at F + Du * 4 and that of v at F + k + Dv * 4.
  Problem p;
  EXPECT_NEAR(p.dt_limit(), 2.0 / (0.014 + 0.1 * 4), 1e-12);  // 4.83: u's rate is the larger
  p.params.dt = 4.9;  // within the diffusion-only limit 5, beyond the one with the reaction
  try {
    p.validate();
    FAIL() << "dt beyond the limit was accepted";
  } catch (const InvalidInput& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("stability limit 4.83 "), std::string::npos) << message;
    EXPECT_NE(message.find("dt 1.41 is stable at every state"), std::string::npos) << message;
  }
  p.params.dt = 4.8;
  EXPECT_NO_THROW(p.validate());
  // The limit itself is stable (the fastest mode's factor is -1).
  p.params.dt = p.dt_limit();
  EXPECT_NO_THROW(p.validate());

  // A large kill makes v's rate the larger: F + k + Dv * 4 = 0.05 + 0.5 + 0.2.
  p.params.feed = 0.05;
  p.params.kill = 0.5;
  EXPECT_NEAR(p.dt_limit(), 2.0 / 0.75, 1e-12);
  // Every state u, v >= 0 with u + v <= 1: u's rate peaks at v = 1, 1 + F + Du * 4.
  EXPECT_NEAR(p.dt_stable_everywhere(), 2.0 / (1.0 + 0.05 + 0.4), 1e-12);
  EXPECT_LT(p.dt_stable_everywhere(), p.dt_limit());
  // The same from a radius computed once, as a sweep checks its members.
  EXPECT_EQ(Problem::dt_limit(4.0, p.params), p.dt_limit());
  p.params.dt = 2.7;
  EXPECT_THROW(p.check_stability(4.0, p.params), InvalidInput);
  p.params.dt = 2.6;
  EXPECT_NO_THROW(p.check_stability(4.0, p.params));
}

TEST(Problem, BoundTextRoundsDown) {
  EXPECT_EQ(bound_text(1.4159), "1.41");
  EXPECT_EQ(bound_text(4.830917874), "4.83");
  EXPECT_EQ(bound_text(2.0), "2");
  EXPECT_EQ(bound_text(0.0123456), "0.0123");
  EXPECT_EQ(bound_text(2457.9), "2450");
}

TEST(Problem, RejectsBadRates) {
  for (double bad : {-0.1, double(NAN), double(INFINITY)}) {
    for (int which = 0; which < 5; ++which) {
      Problem p;
      double* rates[] = {&p.params.feed, &p.params.kill, &p.params.du, &p.params.dv, &p.params.dt};
      *rates[which] = bad;
      EXPECT_THROW(p.validate(), InvalidInput) << which << " " << bad;
    }
  }
  Problem p;
  p.grid.rows = 0;
  EXPECT_THROW(p.validate(), InvalidInput);
  p = Problem{};
  p.grid.cols = -3;
  EXPECT_THROW(p.validate(), InvalidInput);
}

TEST(Seed, CourseRectangle) {
  const SeedRectangle s = seed_rectangle({1080, 1920});
  EXPECT_EQ(s.row_begin, 468);
  EXPECT_EQ(s.row_end, 536);
  EXPECT_EQ(s.col_begin, 840);
  EXPECT_EQ(s.col_end, 960);
}

TEST(Seed, ClampedOnTinyGrids) {
  const SeedRectangle one = seed_rectangle({1, 1});
  EXPECT_EQ(one.row_begin, 0);
  EXPECT_EQ(one.row_end, 0);  // empty
  const SeedRectangle s = seed_rectangle({16, 16});
  EXPECT_EQ(s.row_begin, 3);
  EXPECT_EQ(s.row_end, 4);
  EXPECT_EQ(s.col_begin, 7);
  EXPECT_EQ(s.col_end, 8);
}

TEST(Names, BoundaryAndPrecision) {
  EXPECT_EQ(parse_boundary("zero-flux"), Boundary::ZeroFlux);
  EXPECT_EQ(parse_boundary("periodic"), Boundary::Periodic);
  EXPECT_EQ(parse_boundary("fixed"), Boundary::Fixed);
  EXPECT_THROW(parse_boundary("open"), InvalidInput);
  EXPECT_EQ(parse_precision("single"), Precision::Single);
  EXPECT_EQ(parse_precision("double"), Precision::Double);
  EXPECT_THROW(parse_precision("half"), InvalidInput);
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    EXPECT_EQ(parse_boundary(to_string(b)), b);
  }
}

namespace {

// A number that counts the operations done on it: step_cell() and step_volume_cell() run on it
// count the arithmetic of one cell update as it is written. A negation is not counted: the only
// one, -dt, is the same for every cell and the compiled loops compute it once.
struct Counted {
  static inline CellArithmetic counted{};
  double x = 0;
  Counted() = default;
  explicit Counted(double value) : x(value) {}
  friend Counted operator+(Counted a, Counted b) { return ++counted.additions, Counted(a.x + b.x); }
  friend Counted operator-(Counted a, Counted b) { return ++counted.additions, Counted(a.x - b.x); }
  friend Counted operator*(Counted a, Counted b) {
    return ++counted.multiplications, Counted(a.x * b.x);
  }
  friend Counted operator-(Counted a) { return Counted(-a.x); }
  friend Counted multiply_add(Counted a, Counted b, Counted c) {
    return ++counted.multiply_adds, Counted(a.x * b.x + c.x);
  }
  Counted& operator+=(Counted b) { return *this = *this + b; }
};

// The arithmetic of one update of a cell of a plane with stencil `stencil`, or of a volume.
CellArithmetic counted_arithmetic(const Stencil& stencil) {
  Counted n[9], w[9], m[18];
  for (std::size_t k = 0; k < 9; ++k) {
    n[k] = Counted(0.1 * static_cast<double>(k));
    w[k] = Counted(stencil.weights[k]);
  }
  for (std::size_t k = 0; k < 18; ++k) m[k] = Counted(0.05 * static_cast<double>(k));
  const auto c = Coefficients<Counted>::from(Parameters{}, Outside{}, stencil.kind);
  Counted::counted = {};
  Counted u_next, v_next;
  if (stencil.kind == StencilKind::SevenPoint) {
    step_volume_cell<StencilKind::SevenPoint>(n[4], n[4], m, m, c, u_next, v_next);
  } else if (stencil.kind == StencilKind::NineteenPoint) {
    step_volume_cell<StencilKind::NineteenPoint>(n[4], n[4], m, m, c, u_next, v_next);
  } else {
    dispatch_stencil(stencil.kind,
                     [&]<StencilKind K>() { step_cell<K>(n, n, w, c, u_next, v_next); });
  }
  CellArithmetic counted = Counted::counted;
  // A custom stencil's react() adds feed + kill, the same for every cell of a row: the compiled
  // loops compute it once per row.
  if (stencil.kind == StencilKind::Custom) --counted.additions;
  return counted;
}

}  // namespace

// The weights every kernel folds into a plane's update are the stencil's table: its edges', its
// corners' and their sum.
TEST(CellUpdate, FoldedWeightsAreTheStencilTables) {
  for (const Stencil& stencil : {Stencil::oono_puri(), Stencil::pretty(), Stencil::five_point()}) {
    const FoldedWeights folded = folded_weights(stencil.kind);
    double sum = 0;
    for (int k = 0; k < 9; ++k) {
      if (k == 4) continue;
      const bool corner = k % 2 == 0;
      EXPECT_EQ(stencil.weights[static_cast<std::size_t>(k)],
                corner ? folded.diagonal : folded.nearest)
          << stencil.name() << " k " << k;
      sum += stencil.weights[static_cast<std::size_t>(k)];
    }
    EXPECT_EQ(folded.sum, sum) << stencil.name();
  }
}

// bench's arithmetic roofline divides by this count: it must be the arithmetic the kernels do.
TEST(CellUpdate, ArithmeticPerCellUpdateCountsTheWrittenArithmetic) {
  EXPECT_EQ(flops_per_cell_update(StencilKind::OonoPuri), 29);
  EXPECT_EQ(cell_arithmetic(StencilKind::OonoPuri).instructions(), 22);
  EXPECT_EQ(flops_per_cell_update(StencilKind::Pretty), 29);
  EXPECT_EQ(flops_per_cell_update(StencilKind::FivePoint), 19);
  EXPECT_EQ(flops_per_cell_update(StencilKind::Custom), 63);
  EXPECT_EQ(flops_per_cell_update(StencilKind::SevenPoint), 23);
  EXPECT_EQ(flops_per_cell_update(StencilKind::NineteenPoint), 49);
  for (const Stencil& stencil :
       {Stencil::oono_puri(), Stencil::pretty(), Stencil::five_point(),
        Stencil::parse("1,2,3,4,5,6,7,8,9"), Stencil::seven_point(), Stencil::nineteen_point()}) {
    const CellArithmetic counted = counted_arithmetic(stencil);
    const CellArithmetic stated = cell_arithmetic(stencil.kind);
    EXPECT_EQ(counted.additions, stated.additions) << stencil.name();
    EXPECT_EQ(counted.multiplications, stated.multiplications) << stencil.name();
    EXPECT_EQ(counted.multiply_adds, stated.multiply_adds) << stencil.name();
  }
}

// The folded update is the written update, rounded differently: in double precision the two agree
// to rounding for every stencil, at rates where each term matters.
TEST(CellUpdate, FoldedUpdateIsTheModelsStep) {
  const Parameters p{0.037, 0.06, 0.21, 0.105, 0.9};
  double n[9], m[18];
  for (int k = 0; k < 9; ++k) n[k] = 0.3 + 0.05 * k - 0.004 * k * k;
  for (int k = 0; k < 18; ++k) m[k] = 0.25 + 0.02 * k - 0.001 * k * k;
  const double cu = n[4], cv = 0.8 * n[4];
  double nv[9];
  for (int k = 0; k < 9; ++k) nv[k] = 0.8 * n[k];
  nv[4] = cv;
  const auto written = [&](double lap_u, double lap_v, double& u_next, double& v_next) {
    const double uvv = cu * cv * cv;
    u_next = cu + p.dt * (p.du * lap_u - uvv + p.feed * (1 - cu));
    v_next = cv + p.dt * (p.dv * lap_v + uvv - (p.feed + p.kill) * cv);
  };
  for (const Stencil& stencil : {Stencil::oono_puri(), Stencil::pretty(), Stencil::five_point()}) {
    double lap_u = 0, lap_v = 0;
    for (int k = 0; k < 9; ++k) {
      lap_u += stencil.weights[k] * (n[k] - cu);
      lap_v += stencil.weights[k] * (nv[k] - cv);
    }
    double expected_u, expected_v, u_next, v_next;
    written(lap_u, lap_v, expected_u, expected_v);
    const auto c = Coefficients<double>::from(p, Outside{}, stencil.kind);
    dispatch_stencil(stencil.kind, [&]<StencilKind K>() {
      step_cell<K>(n, nv, stencil.weights.data(), c, u_next, v_next);
    });
    EXPECT_NEAR(u_next, expected_u, 1e-15) << stencil.name();
    EXPECT_NEAR(v_next, expected_v, 1e-15) << stencil.name();
  }
  double mv[18];
  for (int k = 0; k < 18; ++k) mv[k] = 0.8 * m[k];
  for (const bool nineteen : {false, true}) {
    double faces_u = 0, faces_v = 0, edges_u = 0, edges_v = 0;
    for (int k = 0; k < 6; ++k) faces_u += m[k] - cu, faces_v += mv[k] - cv;
    for (int k = 6; k < 18; ++k) edges_u += m[k] - cu, edges_v += mv[k] - cv;
    const double lap_u = nineteen ? faces_u / 18 + edges_u / 36 : faces_u / 6;
    const double lap_v = nineteen ? faces_v / 18 + edges_v / 36 : faces_v / 6;
    double expected_u, expected_v, u_next, v_next;
    written(lap_u, lap_v, expected_u, expected_v);
    if (nineteen) {
      const auto c = Coefficients<double>::from(p, Outside{}, StencilKind::NineteenPoint);
      step_volume_cell<StencilKind::NineteenPoint>(cu, cv, m, mv, c, u_next, v_next);
    } else {
      const auto c = Coefficients<double>::from(p, Outside{}, StencilKind::SevenPoint);
      step_volume_cell<StencilKind::SevenPoint>(cu, cv, m, mv, c, u_next, v_next);
    }
    EXPECT_NEAR(u_next, expected_u, 1e-15) << (nineteen ? "nineteen-point" : "seven-point");
    EXPECT_NEAR(v_next, expected_v, 1e-15) << (nineteen ? "nineteen-point" : "seven-point");
  }
}
