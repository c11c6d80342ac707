#include <gtest/gtest.h>

#include <cmath>

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

TEST(Problem, StabilityLimit) {
  Problem p;
  EXPECT_NEAR(p.dt_limit(), 5.0, 1e-12);  // 2 / (0.1 * 4)
  p.params.dt = 5.5;
  try {
    p.validate();
    FAIL() << "dt beyond the limit was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("stability limit 5"), std::string::npos) << e.what();
  }
  p.params.dt = 4.9;
  EXPECT_NO_THROW(p.validate());
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
