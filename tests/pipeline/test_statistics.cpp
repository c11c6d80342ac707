// Statistics of every image (analysis/statistics.hpp) against a plain float64 computation, the
// same for any thread count; the run pipeline's statistics against the images it wrote; a run
// that settles stops there, bitwise the full run up to that image, and is not resumed.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/measure.hpp"
#include "io/files/reader.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"
#include "pipeline/sweep.hpp"
#include "scratch_dir.hpp"

using namespace grayscott;
namespace fs = std::filesystem;

namespace {

struct Plain {
  double min = INFINITY, max = -INFINITY, mean = 0, std = 0;
};

Plain plain(const std::vector<double>& x) {
  Plain p;
  for (double a : x) {
    p.min = std::min(p.min, a);
    p.max = std::max(p.max, a);
    p.mean += a;
  }
  p.mean /= static_cast<double>(x.size());
  for (double a : x) p.std += (a - p.mean) * (a - p.mean);
  p.std = std::sqrt(p.std / static_cast<double>(x.size()));
  return p;
}

// The bins numpy.histogram gives values of type Real: x's is the one of the last edge at or below
// it, found by a search of the edges (numpy.linspace's, low + i (high - low) / bins, in the array's
// type); below the range the first, above it the last.
template <class Real>
struct PlainBins {
  std::vector<double> inner_edges;  // edges 1 to bins - 1
  PlainBins(int bins, double low, double high) {
    const double step = (high - low) / bins;
    for (int i = 1; i < bins; ++i)
      inner_edges.push_back(static_cast<Real>(static_cast<double>(i) * step + low));
  }
  std::size_t of(double x) const {
    return static_cast<std::size_t>(
        std::upper_bound(inner_edges.begin(), inner_edges.end(), x) - inner_edges.begin());
  }
};

template <class Real>
std::vector<double> widened(const std::vector<Real>& x) {
  return {x.begin(), x.end()};
}

void expect_field(const Plain& want, double min, double max, double mean, double std) {
  EXPECT_EQ(min, want.min);
  EXPECT_EQ(max, want.max);
  EXPECT_NEAR(mean, want.mean, 1e-12 * (1 + std::abs(want.mean)));
  EXPECT_NEAR(std, want.std, 1e-9 * (1 + want.std));
}

TEST(Statistics, MatchAPlainComputationForAnyThreadCount) {
  // More cells than one thread takes, an odd count, values spread past the histogram's range.
  const std::size_t cells = 300'001;
  std::mt19937 random(5);
  std::uniform_real_distribution<float> spread(-0.2f, 1.3f);
  std::vector<float> u(cells), v(cells), before(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    u[i] = 1.0f - 0.3f * spread(random);
    v[i] = spread(random);
    before[i] = v[i] + 0.01f * (spread(random) - 0.5f);
  }
  const analysis::HistogramSpec spec{30, 0.0, 1.0};
  // Each call reads "before" and leaves this image's v in it (the next image's before).
  std::vector<float> before_one = before, before_two = before;
  omp_set_num_threads(1);
  const analysis::ImageSums one =
      analysis::member_sums<float>(spec, u.data(), v.data(), before_one.data(), cells);
  omp_set_num_threads(2);
  const analysis::ImageSums two =
      analysis::member_sums<float>(spec, u.data(), v.data(), before_two.data(), cells);
  EXPECT_EQ(before_two, v);
  // Bitwise the same sums: a resumed run may use another thread count.
  EXPECT_EQ(one.u.sum, two.u.sum);
  EXPECT_EQ(one.v.sum_squares, two.v.sum_squares);
  EXPECT_EQ(one.change_sum_squares, two.change_sum_squares);
  EXPECT_EQ(one.histogram, two.histogram);

  const analysis::ImageStatistics s = analysis::finish(two, 4);
  expect_field(plain(widened(u)), s.u_min, s.u_max, s.u_mean, s.u_std);
  expect_field(plain(widened(v)), s.v_min, s.v_max, s.v_mean, s.v_std);
  std::vector<std::uint64_t> counts(30, 0);
  const PlainBins<float> plain_bins(30, 0.0, 1.0);
  double largest = 0, squares = 0;
  for (std::size_t i = 0; i < cells; ++i) {
    const double x = v[i];
    ++counts[plain_bins.of(x)];
    const double d = static_cast<double>(v[i]) - static_cast<double>(before[i]);
    largest = std::max(largest, std::abs(d));
    squares += d * d;
  }
  EXPECT_EQ(s.histogram, counts);
  EXPECT_EQ(s.change_max, largest);
  EXPECT_NEAR(s.change_rms_per_step, std::sqrt(squares / static_cast<double>(cells)) / 4, 1e-15);
}

// The values on and around edges between two bins, for ranges whose edges are not exact in binary
// and bin counts from 1 to many: each in numpy.histogram's bin, in single precision (whose bins are
// first found in single precision, and whose edges are float32) and in double. Each edge's values are counted on their own, so
// that a value the fast path misplaces is not rescued by another's falling back.
template <class Real>
void expect_numpy_bins(int bins, double low, double high) {
  const PlainBins<Real> plain(bins, low, high);
  const analysis::HistogramSpec spec{bins, low, high};
  const auto expect_counted = [&](const std::vector<Real>& values) {
    std::vector<std::uint64_t> want(static_cast<std::size_t>(bins), 0);
    for (Real x : values) ++want[plain.of(static_cast<double>(x))];
    const analysis::ImageSums sums =
        analysis::member_sums<Real>(spec, nullptr, values.data(), nullptr, values.size());
    EXPECT_EQ(sums.histogram, want) << bins << " bins over [" << low << ", " << high << "], "
                                    << values.size() << " values from " << values.front();
  };
  const double step = (high - low) / bins;
  const int stride = std::max(1, bins / 300);  // at most 300 edges each
  std::vector<int> edges;
  for (int i = 0; i < bins; i += stride) edges.push_back(i);
  edges.push_back(bins);
  for (int i : edges) {
    const auto edge = static_cast<Real>(i == bins ? high : static_cast<double>(i) * step + low);
    std::vector<Real> values;
    Real below = edge, above = edge;
    for (int ulps = 0; ulps < 3; ++ulps) {
      values.push_back(below);
      values.push_back(above);
      below = std::nextafter(below, -INFINITY);
      above = std::nextafter(above, INFINITY);
    }
    expect_counted(values);
  }
  // Outside the range, and many ordinary values (blocks that take the fast path).
  std::vector<Real> values{static_cast<Real>(low - 1), static_cast<Real>(high + 1),
                           static_cast<Real>(INFINITY), static_cast<Real>(-INFINITY)};
  std::mt19937 random(11);
  std::uniform_real_distribution<double> spread(low, high);
  for (int i = 0; i < 20'000; ++i) values.push_back(static_cast<Real>(spread(random)));
  expect_counted(values);
}

TEST(Statistics, BinsAreNumpysAtEveryEdge) {
  for (const auto& [bins, low, high] : std::vector<std::tuple<int, double, double>>{
           {1, 0.0, 1.0}, {7, 0.1, 0.8}, {30, 0.0, 1.0}, {50, -0.3, 0.7}, {1000, 0.0, 0.37},
           {100'000, 0.0, 1.0}}) {
    expect_numpy_bins<float>(bins, low, high);
    expect_numpy_bins<double>(bins, low, high);
  }
}

TEST(Statistics, NotANumberCountsInTheFirstBin) {
  std::vector<float> v(5000, 0.75f);
  v[17] = NAN;
  v[4000] = NAN;
  const analysis::ImageSums sums =
      analysis::member_sums<float>({10, 0.0, 1.0}, nullptr, v.data(), nullptr, v.size());
  EXPECT_EQ(sums.histogram[0], 2u);
  EXPECT_EQ(sums.histogram[7], 4998u);
}

TEST(Statistics, MergedPartsMatchTheWhole) {
  // What the processes of a split grid merge: the parts' sums add up to the whole's.
  std::vector<double> u(1000), v(1000);
  for (std::size_t i = 0; i < u.size(); ++i) {
    u[i] = 1.0 - 0.001 * static_cast<double>(i % 97);
    v[i] = 0.0005 * static_cast<double>(i % 389);
  }
  const analysis::HistogramSpec spec{8, 0.0, 0.25};
  const analysis::ImageSums whole =
      analysis::member_sums<double>(spec, u.data(), v.data(), nullptr, 1000);
  analysis::ImageSums parts = analysis::member_sums<double>(spec, u.data(), v.data(), nullptr, 377);
  parts.merge(analysis::member_sums<double>(spec, u.data() + 377, v.data() + 377, nullptr, 623));
  const analysis::ImageStatistics a = analysis::finish(whole, 1), b = analysis::finish(parts, 1);
  EXPECT_EQ(a.histogram, b.histogram);
  EXPECT_EQ(a.v_max, b.v_max);
  EXPECT_NEAR(a.u_std, b.u_std, 1e-12);
  EXPECT_NEAR(a.v_mean, b.v_mean, 1e-15);
  EXPECT_TRUE(std::isnan(a.change_max));  // no image before: no change
}

TEST(Statistics, BadHistogramsAreRefused) {
  EXPECT_THROW((analysis::HistogramSpec{0, 0, 1}.validate()), InvalidInput);
  EXPECT_THROW((analysis::HistogramSpec{10, 1, 1}.validate()), InvalidInput);
  EXPECT_THROW((analysis::HistogramSpec{10, 0, INFINITY}.validate()), InvalidInput);
  EXPECT_NO_THROW((analysis::HistogramSpec{10, -1, 1}.validate()));
}

class RunStatistics : public ::testing::Test {
 protected:
  void SetUp() override { pipeline::clear_stop_request(); }

  pipeline::RunRequest request(const std::string& name) const {
    pipeline::RunRequest r;
    r.problem.grid = {48, 40};
    r.problem.params.feed = 0.03;
    r.problem.params.kill = 0.06;
    r.problem.params.du = 0.2;
    r.problem.params.dv = 0.1;
    r.problem.boundary = Boundary::Periodic;
    r.initial = {InitialKind::Noise, 3};
    r.images = 6;
    r.steps_per_image = 20;
    r.fields = {true, true};
    r.output = dir_ / name;
    r.quiet = true;
    r.engine.backend = "cpu";
    r.analysis.statistics = analysis::HistogramSpec{16, 0.0, 0.5};
    return r;
  }
  // Three members on a 32x32 periodic grid that settle at different times: dying out fast, dying
  // out slowly, and spots that keep dividing (30 images of 20 steps, v written).
  pipeline::SweepRequest three_members(const std::string& name) const {
    pipeline::SweepRequest r;
    r.problem.grid = {32, 32};
    r.problem.params.du = 0.2;
    r.problem.params.dv = 0.1;
    r.problem.boundary = Boundary::Periodic;
    r.members = {{0.01, 0.09, 0}, {0.02, 0.07, 0}, {0.03, 0.06, 0}};
    r.init.kind = InitialKind::Rectangle;
    r.images = 30;
    r.steps_per_image = 20;
    r.fields = {false, true};
    r.engine.backend = "cpu";
    r.output = dir_ / name;
    r.quiet = true;
    return r;
  }
  grayscott::testing::ScratchDir dir_{"statistics"};
};

TEST_F(RunStatistics, EveryImagesStatisticsMatchTheImagesWritten) {
  pipeline::RunRequest r = request("stats.h5");
  std::vector<analysis::ImageStatistics> seen;
  r.on_image = [&](const pipeline::LoopImage& image) {
    EXPECT_EQ(image.statistics.size(), 1u);
    seen.push_back(image.statistics[0]);
    return std::string();
  };
  ASSERT_TRUE(pipeline::execute_run(r).completed);
  ASSERT_EQ(seen.size(), 6u);
  io::RunFileReader file(r.output);
  // The start, for the first image's change.
  std::vector<float> u0(48 * 40), v0(48 * 40);
  fill_initial_state<float>(r.problem.grid, r.initial, u0, v0);
  std::vector<double> before = widened(v0);
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::vector<double> u = file.read_image("u", i, 0);
    const std::vector<double> v = file.read_image("v", i, 0);
    const analysis::ImageStatistics& s = seen[static_cast<std::size_t>(i)];
    expect_field(plain(u), s.u_min, s.u_max, s.u_mean, s.u_std);
    expect_field(plain(v), s.v_min, s.v_max, s.v_mean, s.v_std);
    double largest = 0, squares = 0;
    std::uint64_t counted = 0;
    for (std::size_t c = 0; c < v.size(); ++c) {
      largest = std::max(largest, std::abs(v[c] - before[c]));
      squares += (v[c] - before[c]) * (v[c] - before[c]);
    }
    for (std::uint64_t n : s.histogram) counted += n;
    EXPECT_EQ(counted, v.size());
    EXPECT_EQ(s.change_max, largest) << i;
    EXPECT_NEAR(s.change_rms_per_step, std::sqrt(squares / static_cast<double>(v.size())) / 20,
                1e-15)
        << i;
    before = v;
  }
}

TEST_F(RunStatistics, ARunThatSettlesStopsThereBitwiseTheFullRun) {
  // Fed slowly and killed fast, v dies out: the change per step falls below 1e-6 and stays.
  pipeline::RunRequest full = request("full.h5");
  full.problem.params.feed = 0.01;
  full.problem.params.kill = 0.09;
  full.images = 40;
  full.analysis = {};
  ASSERT_TRUE(pipeline::execute_run(full).completed);

  pipeline::RunRequest r = full;
  r.output = dir_ / "settles.h5";
  r.analysis.statistics = analysis::HistogramSpec{};
  r.analysis.steady = {1e-6, 3};
  std::vector<double> changes;
  r.on_image = [&](const pipeline::LoopImage& image) {
    changes.push_back(image.statistics[0].change_rms_per_step);
    return std::string();
  };
  const pipeline::RunSummary summary = pipeline::execute_run(r);
  EXPECT_TRUE(summary.settled);
  EXPECT_FALSE(summary.completed);
  ASSERT_GE(changes.size(), 3u);
  ASSERT_LT(summary.images_written, 40);
  EXPECT_EQ(summary.images_written, static_cast<std::int64_t>(changes.size()));
  // The last three below the tolerance, the one before (if any) not.
  for (std::size_t i = changes.size() - 3; i < changes.size(); ++i) EXPECT_LT(changes[i], 1e-6);
  if (changes.size() > 3) {
    EXPECT_GE(changes[changes.size() - 4], 1e-6);
  }
  EXPECT_EQ(summary.status.rfind(
                "settled after image " + std::to_string(summary.images_written) + " (step ", 0),
            0u)
      << summary.status;
  io::RunFileReader a(full.output), b(r.output);
  for (std::int64_t i = 0; i < summary.images_written; ++i)
    ASSERT_EQ(a.read_image("v", i, 0), b.read_image("v", i, 0)) << i;
  // Nothing to resume: it ended as asked.
  try {
    pipeline::resume_request(r.output);
    FAIL() << "a settled run was resumed";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to resume"), std::string::npos) << e.what();
  }
}

TEST_F(RunStatistics, MeaninglessTolerancesAreRefusedBeforeAnythingRuns) {
  pipeline::RunRequest r = request("refused.h5");
  for (double bad : {-1e-3, double(NAN), double(INFINITY), 1e-12}) {
    r.analysis.steady.tolerance = bad;
    EXPECT_THROW(pipeline::execute_run(r), InvalidInput) << bad;
  }
  // In double precision 1e-12 is resolved.
  r.problem.precision = Precision::Double;
  r.analysis.steady.tolerance = 1e-12;
  EXPECT_NO_THROW(r.analysis.validate(r.problem, r.steps_per_image));
  r.analysis.statistics.reset();
  EXPECT_THROW(r.analysis.validate(r.problem, r.steps_per_image), InvalidInput);
  EXPECT_FALSE(fs::exists(r.output));
}

}  // namespace

namespace {

// A sweep whose members settle at different times: each is frozen where it settled (its later
// images repeat that state) while the others are stepped on, bitwise as without settling.
TEST_F(RunStatistics, SweepMembersSettleOnTheirOwn) {
  const pipeline::SweepRequest full = three_members("full_sweep.h5");
  ASSERT_TRUE(pipeline::execute_sweep(full).completed);

  pipeline::SweepRequest settling = full;
  settling.output = dir_ / "settling_sweep.h5";
  settling.analysis.statistics = analysis::HistogramSpec{};
  settling.analysis.steady = {1e-6, 2};
  ASSERT_TRUE(pipeline::execute_sweep(settling).completed);

  io::RunFileReader a(full.output), b(settling.output);
  // Where each member settled, and every member's statistics of every image, in the file.
  const std::vector<std::int64_t> settled_at = b.read_int64("stats/settled_image");
  ASSERT_EQ(settled_at.size(), 3u);
  EXPECT_EQ(b.read_doubles("stats/v_mean").size(), 3u * 30u);
  const auto image = [](io::RunFileReader& file, std::int64_t member, std::int64_t i) {
    return file.read_image("v", i, member);
  };
  int frozen_members = 0;
  for (std::int64_t m = 0; m < 3; ++m) {
    // The first image at which the member's state stops changing in the settling file.
    std::int64_t frozen_from = 30;
    for (std::int64_t i = 29; i > 0 && image(b, m, i) == image(b, m, i - 1); --i) frozen_from = i;
    for (std::int64_t i = 0; i < std::min<std::int64_t>(frozen_from, 30); ++i)
      ASSERT_EQ(image(a, m, i), image(b, m, i)) << m << " " << i;
    // Frozen from the image after the one it settled at (that image was still stepped to).
    if (settled_at[static_cast<std::size_t>(m)] >= 0)
      EXPECT_EQ(frozen_from, settled_at[static_cast<std::size_t>(m)] + 1) << m;
    else
      EXPECT_EQ(frozen_from, 30) << m;
    if (frozen_from < 30) {
      ++frozen_members;
      // The full run still changed there (if only a little): the member was frozen.
      EXPECT_NE(image(a, m, 29), image(b, m, 29)) << m;
    }
  }
  EXPECT_GE(frozen_members, 1);
}

// Stopped one image before it settles (two calm images of three behind it), a run continued from
// its checkpoint settles at the same image as the run that was not stopped, with the same images.
TEST_F(RunStatistics, AContinuedRunSettlesWhereTheUninterruptedOneDoes) {
  pipeline::RunRequest whole = request("whole.h5");
  whole.problem.params.feed = 0.01;
  whole.problem.params.kill = 0.09;
  whole.images = 40;
  whole.analysis.steady = {1e-6, 3};
  const pipeline::RunSummary settled = pipeline::execute_run(whole);
  ASSERT_TRUE(settled.settled) << settled.status;
  const std::int64_t last = settled.images_written - 1;  // the image it settled at
  ASSERT_GE(last, 3);

  pipeline::RunRequest stopped = whole;
  stopped.output = dir_ / "stopped.h5";
  stopped.on_image = [&](const pipeline::LoopImage& image) {
    return image.index == last - 1 ? "stopped after image " + std::to_string(last) + " by the test"
                                   : std::string();
  };
  const pipeline::RunSummary first_part = pipeline::execute_run(stopped);
  ASSERT_FALSE(first_part.settled) << first_part.status;
  ASSERT_EQ(first_part.checkpoint_images, last);

  const pipeline::RunSummary rest = pipeline::execute_run(pipeline::resume_request(stopped.output));
  EXPECT_TRUE(rest.settled);
  EXPECT_EQ(rest.status, settled.status);
  EXPECT_EQ(rest.images_written, settled.images_written);
  io::RunFileReader a(whole.output), b(stopped.output);
  for (std::int64_t i = 0; i <= last; ++i)
    ASSERT_EQ(a.read_image("v", i, 0), b.read_image("v", i, 0)) << i;
  EXPECT_EQ(a.read_doubles("stats/change_rms_per_step"),
            b.read_doubles("stats/change_rms_per_step"));
}

// A sweep stopped by a signal after some members settled, then continued: the settled members stay
// frozen and the others settle where they would have, so that the file is the uninterrupted one's.
TEST_F(RunStatistics, AContinuedSweepKeepsWhereItsMembersSettled) {
  pipeline::SweepRequest whole = three_members("whole_sweep.h5");
  whole.analysis.statistics = analysis::HistogramSpec{};
  whole.analysis.steady = {1e-6, 3};
  whole.save.checkpoint_every_images = 1;
  ASSERT_TRUE(pipeline::execute_sweep(whole).completed);
  io::RunFileReader a(whole.output);
  const std::vector<std::int64_t> settled_at = a.read_int64("stats/settled_image");
  ASSERT_EQ(settled_at.size(), 3u);
  // The member that settles first, and where the sweep is stopped: a few images after it.
  const std::int64_t first_settled =
      *std::min_element(settled_at.begin(), settled_at.end(),
                        [](std::int64_t x, std::int64_t y) { return x >= 0 && (y < 0 || x < y); });
  ASSERT_GE(first_settled, 0);
  ASSERT_LT(first_settled + 3, 29);

  pipeline::SweepRequest stopped = whole;
  stopped.output = dir_ / "stopped_sweep.h5";
  stopped.on_progress = [&](std::int64_t member_images, std::int64_t total) {
    EXPECT_EQ(total, 3 * 30);
    if (member_images == 3 * (first_settled + 3)) pipeline::request_stop(SIGTERM);
  };
  const pipeline::SweepSummary first_part = pipeline::execute_sweep(stopped);
  pipeline::clear_stop_request();
  ASSERT_EQ(first_part.signal, SIGTERM) << first_part.status;

  pipeline::SweepRequest rest = pipeline::resume_sweep_request(stopped.output);
  rest.quiet = true;
  ASSERT_TRUE(pipeline::execute_sweep(rest).completed);
  io::RunFileReader b(stopped.output);
  EXPECT_EQ(b.read_int64("stats/settled_image"), settled_at);
  for (std::int64_t m = 0; m < 3; ++m) {
    for (std::int64_t i = 0; i < 30; ++i)
      ASSERT_EQ(a.read_image("v", i, m), b.read_image("v", i, m)) << m << " " << i;
  }
}

}  // namespace
