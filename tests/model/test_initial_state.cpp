#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"

using namespace grayscott;

TEST(InitialState, ParsesKinds) {
  EXPECT_EQ(parse_initial_kind("rectangle"), InitialKind::Rectangle);
  EXPECT_EQ(parse_initial_kind("noise"), InitialKind::Noise);
  EXPECT_THROW(parse_initial_kind("random"), InvalidInput);
  EXPECT_EQ(to_string(InitialKind::Noise), "noise");
  for (const char* name : {"box", "box-bordered", "drop"}) {
    EXPECT_EQ(to_string(parse_initial_kind(name)), name);
  }
}

// The Python course's box, as its grayscott_init (compute/common.py, NumPy 1.24) marks it: these
// ranges were read from the arrays that function returns (on (R + 2) x (C + 2) for the bordered
// box, its border cut off). 64x96 loses column 38, where y = 0.4 ymax up to rounding.
TEST(InitialState, BoxCellsAreThePythonCoursesMask) {
  struct Case {
    Grid grid;
    bool bordered;
    SeedRectangle cells;
  };
  const Case cases[] = {
      {{64, 96}, false, {26, 38, 39, 57}},
      {{62, 94}, true, {25, 37, 38, 56}},
      {{96, 64}, false, {39, 57, 26, 38}},
      {{11, 16}, false, {5, 6, 7, 9}},
      {{1920, 1080}, false, {768, 1152, 432, 648}},
      {{1918, 1078}, true, {767, 1151, 431, 647}},
      {{500, 500}, false, {200, 300, 200, 300}},
      {{3, 50}, false, {1, 2, 20, 30}},
      {{1, 50}, true, {0, 1, 20, 30}},
      {{50, 1}, true, {20, 30, 0, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.grid.rows) + "x" + std::to_string(c.grid.cols));
    const SeedRectangle got = box_cells(c.grid, c.bordered);
    EXPECT_EQ(got.row_begin, c.cells.row_begin);
    EXPECT_EQ(got.row_end, c.cells.row_end);
    EXPECT_EQ(got.col_begin, c.cells.col_begin);
    EXPECT_EQ(got.col_end, c.cells.col_end);
  }
  // No cell of the box: x = 0.4 and 0.6 exactly on 6 rows, no point between 0 and 1 on 2.
  for (const Grid grid : {Grid{6, 96}, Grid{2, 50}}) {
    const SeedRectangle none = box_cells(grid, false);
    EXPECT_TRUE(none.row_begin == none.row_end || none.col_begin == none.col_end);
    EXPECT_THROW(check_initial_state(grid, {InitialKind::Box}), InvalidInput);
  }
  EXPECT_NO_THROW(check_initial_state({3, 50}, {InitialKind::Box}));
}

TEST(InitialState, BoxAndDropHoldTheirValuesInTheirCells) {
  const Grid grid{11, 16};
  std::vector<double> u(grid.cells()), v(grid.cells());
  fill_initial_state<double>(grid, {InitialKind::Box}, u, v);
  for (std::int64_t r = 0; r < grid.rows; ++r) {
    for (std::int64_t c = 0; c < grid.cols; ++c) {
      const bool inside = r == 5 && (c == 7 || c == 8);
      EXPECT_EQ(u[r * grid.cols + c], inside ? 0.70 : 1.0);
      EXPECT_EQ(v[r * grid.cols + c], inside ? 0.25 : 0.0);
    }
  }
  // The Kokkos course's drop: rows and columns R/2 - 1 and R/2 (C/2 - 1, C/2), values replaced.
  fill_initial_state<double>(grid, {InitialKind::Drop, 0, ShapeValues{0.5, 0.75}}, u, v);
  for (std::int64_t r = 0; r < grid.rows; ++r) {
    for (std::int64_t c = 0; c < grid.cols; ++c) {
      const bool inside = (r == 4 || r == 5) && (c == 7 || c == 8);
      EXPECT_EQ(u[r * grid.cols + c], inside ? 0.5 : 1.0);
      EXPECT_EQ(v[r * grid.cols + c], inside ? 0.75 : 0.0);
    }
  }
  const SeedRectangle one = drop_cells({1, 1});
  EXPECT_EQ(one.row_end - one.row_begin, 1);
  EXPECT_EQ(one.col_end - one.col_begin, 1);
  EXPECT_THROW(parse_shape_values("0.5"), InvalidInput);
  EXPECT_THROW(parse_shape_values("0.5,inf"), InvalidInput);
  EXPECT_EQ(parse_shape_values(" 0.5, 0.25").v, 0.25);
}

// The hash is the SplitMix64 finaliser applied to the seed, xor-ed with the counter and mixed
// again; these values were computed independently (Python integers), so a change of the stream
// on any compiler or machine fails here.
TEST(InitialState, HashMatchesAnIndependentComputation) {
  EXPECT_EQ(uniform_hash(0, 0), 0.6524484863740322);
  EXPECT_EQ(uniform_hash(1, 0), 0.36818951565166946);
  EXPECT_EQ(uniform_hash(1, 1), 0.9140224628703029);
  EXPECT_EQ(uniform_hash(42, 12345), 0.7967330425455134);
  EXPECT_EQ(uniform_hash(9223372036854775807ULL, 7), 0.500434712837236);
}

TEST(InitialState, RectangleIsTheFoundationSeed) {
  const Grid grid{37, 53};
  std::vector<float> u(grid.cells()), v(grid.cells()), su(grid.cells()), sv(grid.cells());
  fill_initial_state<float>(grid, {InitialKind::Rectangle, 99}, u, v);
  fill_seed<float>(grid, su, sv);
  EXPECT_EQ(u, su);
  EXPECT_EQ(v, sv);
}

TEST(InitialState, NoiseIsSmallAroundTheRectangleAndUnbiased) {
  const Grid grid{64, 80};
  std::vector<double> u(grid.cells()), v(grid.cells()), ru(grid.cells()), rv(grid.cells());
  fill_initial_state<double>(grid, {InitialKind::Noise, 7}, u, v);
  fill_initial_state<double>(grid, {InitialKind::Rectangle, 0}, ru, rv);
  double sum = 0;
  std::size_t changed = 0, interior = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    ASSERT_GE(u[i], 0.0);
    ASSERT_LE(u[i], 1.0);
    ASSERT_GE(v[i], 0.0);
    ASSERT_LE(v[i], 1.0);
    EXPECT_LE(std::abs(u[i] - ru[i]), noise_amplitude);
    EXPECT_LE(std::abs(v[i] - rv[i]), noise_amplitude);
    changed += (u[i] != ru[i]);
    if (rv[i] == 0.0 && ru[i] == 1.0) {
      // v = 0 is clamped from below: about half the cells stay at 0, the others rise.
      sum += v[i];
      ++interior;
    }
  }
  EXPECT_GT(changed, u.size() / 3);  // about half of u's cells move (the rest are clamped)
  // The mean of max(0, U(-a, a)) is a/4.
  EXPECT_NEAR(sum / static_cast<double>(interior), noise_amplitude / 4, noise_amplitude / 40);
}

TEST(InitialState, NoiseIsReproducibleAndDependsOnTheSeed) {
  const Grid grid{20, 30};
  std::vector<float> a_u(grid.cells()), a_v(grid.cells()), b_u(grid.cells()), b_v(grid.cells());
  fill_initial_state<float>(grid, {InitialKind::Noise, 3}, a_u, a_v);
  fill_initial_state<float>(grid, {InitialKind::Noise, 3}, b_u, b_v);
  EXPECT_EQ(a_u, b_u);
  EXPECT_EQ(a_v, b_v);
  fill_initial_state<float>(grid, {InitialKind::Noise, 4}, b_u, b_v);
  EXPECT_NE(a_u, b_u);
  EXPECT_NE(a_v, b_v);
}

TEST(InitialState, SinglePrecisionIsTheDoubleStateRoundedOnce) {
  const Grid grid{16, 24};
  std::vector<float> fu(grid.cells()), fv(grid.cells());
  std::vector<double> du(grid.cells()), dv(grid.cells());
  fill_initial_state<float>(grid, {InitialKind::Noise, 11}, fu, fv);
  fill_initial_state<double>(grid, {InitialKind::Noise, 11}, du, dv);
  for (std::size_t i = 0; i < fu.size(); ++i) {
    ASSERT_EQ(fu[i], static_cast<float>(du[i]));
    ASSERT_EQ(fv[i], static_cast<float>(dv[i]));
  }
}

// A grid large enough to be filled by bands of rows in parallel gets the same values as one
// block filled in order, for both kinds.
TEST(InitialState, ALargeGridFilledInParallelIsTheSameAsInOneBlock) {
  const Grid grid{1031, 1027};  // past the 2^20 cells where the rows are split among threads
  ASSERT_GE(grid.cells(), std::int64_t(1) << 20);
  for (InitialKind kind : {InitialKind::Rectangle, InitialKind::Noise}) {
    std::vector<float> u(grid.cells()), v(grid.cells()), block_u(grid.cells(), -1.f),
        block_v(grid.cells(), -1.f);
    fill_initial_state<float>(grid, {kind, 9}, u, v);
    fill_initial_block<float>(grid, {kind, 9}, 0, 0, grid.rows, grid.cols, block_u, block_v);
    EXPECT_EQ(u, block_u) << to_string(kind);
    EXPECT_EQ(v, block_v) << to_string(kind);
  }
}

TEST(InitialState, RejectsBuffersOfTheWrongSize) {
  std::vector<float> u(10), v(10);
  EXPECT_THROW(fill_initial_state<float>({4, 4}, {}, u, v), InvalidInput);
}

// A noise state stepped on the CPU engine gives the same bits for 1 and 2 threads (the state is
// made on the host; the engine's rounding does not depend on the thread count).
TEST(InitialState, NoiseRunIsTheSameForAnyThreadCount) {
  Problem problem;
  problem.grid = {33, 41};
  problem.params = {0.03, 0.06, 0.1, 0.05, 1.0};
  const Parameters params[2] = {problem.params, {0.02, 0.05, 0.1, 0.05, 1.0}};
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    EngineOptions options;
    options.backend = "cpu";
    options.threads = threads;
    auto engine = make_engine<float>(problem, params, options);
    std::vector<float> u(problem.grid.cells()), v(problem.grid.cells());
    for (std::size_t m = 0; m < 2; ++m) {
      fill_initial_state<float>(problem.grid, {InitialKind::Noise, 5 + m}, u, v);
      engine->load(m, u, v);
    }
    engine->advance(200);
    engine->capture({true, true});
    std::vector<float> out;
    for (std::size_t m = 0; m < 2; ++m) {
      engine->read_captured(m, u.data(), v.data());
      out.insert(out.end(), u.begin(), u.end());
      out.insert(out.end(), v.begin(), v.end());
    }
    results.push_back(std::move(out));
  }
  EXPECT_EQ(results[0], results[1]);
}
