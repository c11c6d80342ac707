// `grayscott bench`'s logic: the verification that keeps a wrong kernel from reporting a figure,
// the presets and overrides, and every bad request.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "app/bench.hpp"
#include "app/commands.hpp"
#include "engine/cpu/cpu_engine.hpp"
#include "engine/engine.hpp"
#include "engine/registry.hpp"

using namespace grayscott;
using namespace grayscott::app::bench;

namespace {

// The reference after `steps` steps from its seed, and the CPU engine's result for the same.
struct Pair {
  reference::State expected;
  std::vector<float> u, v;
};

Pair engine_and_reference(std::int64_t rows, std::int64_t cols, int steps) {
  Problem problem;
  problem.grid = {rows, cols};
  Pair p{reference::initial_state(rows, cols), {}, {}};
  const reference::Model model{problem.stencil.weights, reference::Boundary::ZeroFlux,
                               problem.params.feed,     problem.params.kill,
                               problem.params.du,       problem.params.dv,
                               problem.params.dt};
  for (int s = 0; s < steps; ++s) reference::step(model, p.expected);
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<float>(problem, params, {"cpu", 0, 0, 0});
  std::vector<float> u(static_cast<std::size_t>(rows * cols)), v(u.size());
  fill_seed<float>(problem.grid, u, v);
  engine->load(0, u, v);
  engine->advance(steps);
  engine->capture({true, true});
  engine->read_captured(0, u.data(), v.data());
  p.u = u;
  p.v = v;
  return p;
}

}  // namespace

TEST(BenchVerification, CorrectResultPasses) {
  const Pair p = engine_and_reference(24, 40, 30);
  const auto result = compare_with_reference<float>(p.u, p.v, p.expected, 2e-6);
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_GT(result.v_error, 0.0) << "float32 against float64 cannot be exact here";
  EXPECT_LE(result.v_error, 2e-6);
}

TEST(BenchVerification, OneCorruptedCellFails) {
  Pair p = engine_and_reference(24, 40, 30);
  p.v[24 * 40 / 2 + 7] += 0.01f;  // one cell of v off by 1%
  const auto result = compare_with_reference<float>(p.u, p.v, p.expected, 2e-6);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("reference"), std::string::npos) << result.detail;
}

TEST(BenchVerification, SwappedFieldsFail) {
  const Pair p = engine_and_reference(24, 40, 30);
  EXPECT_FALSE((compare_with_reference<float>(p.v, p.u, p.expected, 2e-6).passed));
}

TEST(BenchVerification, NonFiniteValuesFail) {
  Pair p = engine_and_reference(8, 8, 3);
  p.u[5] = std::numeric_limits<float>::quiet_NaN();
  const auto result = compare_with_reference<float>(p.u, p.v, p.expected, 1.0);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.detail, "non-finite values");
}

TEST(BenchVerification, TooFewStepsFail) {
  // A kernel that skipped a step is caught: compare 29 steps against the reference's 30.
  Pair p = engine_and_reference(24, 40, 30);
  const Pair fewer = engine_and_reference(24, 40, 29);
  EXPECT_FALSE((compare_with_reference<float>(fewer.u, fewer.v, p.expected, 2e-6).passed));
}

TEST(BenchVerification, EveryStencilBoundaryAndPrecisionOfTheCpuEnginePasses) {
  for (const char* stencil :
       {"oono-puri", "pretty", "five-point", "0.1,0.7,0.2,0.4,0,0.6,0.3,0.5,0.15"}) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      for (Precision precision : {Precision::Single, Precision::Double}) {
        Problem problem;
        problem.stencil = Stencil::parse(stencil);
        problem.boundary = boundary;
        problem.precision = precision;
        problem.params.dt = 0.5;             // stable for every stencil above
        Workload workload{50, 70, 2, 7, 3};  // a batch, and steps in chunks of 7
        const auto v = verify_engine(problem, workload, {"cpu", 0, 0, 0});
        EXPECT_TRUE(v.passed) << stencil << " " << to_string(boundary) << " "
                              << to_string(precision) << ": " << v.detail;
        EXPECT_EQ(v.members, 3);
        EXPECT_EQ(v.backend, "cpu");
        EXPECT_EQ(v.tolerance, verification_tolerance(precision));
      }
    }
  }
}

// A volume's workload is checked against the float64 volume reference, for both volume stencils,
// every boundary and both precisions, on a batch, at the automatic depth and one step per pass.
TEST(BenchVerification, EveryVolumeStencilBoundaryAndPrecisionOfTheCpuEnginePasses) {
  for (const Stencil& stencil : {Stencil::seven_point(), Stencil::nineteen_point()}) {
    for (Boundary boundary : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      for (Precision precision : {Precision::Single, Precision::Double}) {
        for (int fuse : {0, 1}) {
          Problem problem;
          problem.stencil = stencil;
          problem.boundary = boundary;
          problem.precision = precision;
          problem.outside = {0.8, 0.1};
          Workload workload{20, 40, 2, 7, 2, 5};  // 5x20x40, a batch, steps in chunks of 7
          const auto v = verify_engine(problem, workload, {"cpu", 2, fuse, 0});
          EXPECT_TRUE(v.passed) << stencil.name() << " " << to_string(boundary) << " "
                                << to_string(precision) << " fuse " << fuse << ": " << v.detail;
          EXPECT_EQ(v.depth, 5);
          EXPECT_EQ(v.rows, 20);
          EXPECT_EQ(v.cols, 40);
          EXPECT_EQ(v.members, 2);
          EXPECT_GT(v.v_error, 0.0) << "the volume reference ran";
        }
      }
    }
  }
  // The preset's volume is checked on 16 of its planes and 64 of its rows, all its columns.
  Problem problem;
  problem.stencil = Stencil::seven_point();
  const auto v = verify_engine(problem, find_preset("3d").workloads[0], {"cpu", 2, 0, 0});
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_EQ(Grid({v.rows, v.cols, v.depth}).text(), "16x64x256");
}

TEST(BenchPresets, KnownPresetsAndTheirWorkloads) {
  const Preset& seed = find_preset("seed");
  ASSERT_EQ(seed.workloads.size(), 1u);
  EXPECT_EQ(seed.workloads[0].rows, 1080);
  EXPECT_EQ(seed.workloads[0].cols, 1920);
  EXPECT_EQ(seed.workloads[0].images, 1000);
  EXPECT_EQ(seed.workloads[0].steps_per_image, 32);
  const Preset& pair = find_preset("batch-vs-large");
  ASSERT_EQ(pair.workloads.size(), 2u);
  EXPECT_EQ(pair.workloads[0].batch, 1024);
  EXPECT_EQ(pair.workloads[0].rows * pair.workloads[0].cols * pair.workloads[0].batch,
            pair.workloads[1].rows * pair.workloads[1].cols)
      << "both sides update the same number of cells per step";
  EXPECT_NO_THROW(find_preset("quick"));
}

TEST(BenchPresets, TheVolumePreset) {
  const Preset& volume = find_preset("3d");
  ASSERT_EQ(volume.workloads.size(), 1u);
  const Workload& w = volume.workloads[0];
  EXPECT_EQ(w.grid().text(), "256x256x256");
  EXPECT_EQ(w.steps(), 100);
  EXPECT_EQ(w.batch, 1);
  EXPECT_DOUBLE_EQ(w.cell_updates(), 256.0 * 256 * 256 * 100);
  EXPECT_EQ(w.describe(), "256x256x256, 4 images x 25 steps");
  // --depth and the plane's sizes override it; a plane's preset takes --depth too.
  WorkloadOverrides o;
  o.depth = 8;
  o.rows = 16;
  EXPECT_EQ(resolve_workloads(volume, o)[0].grid().text(), "8x16x256");
  EXPECT_EQ(resolve_workloads(find_preset("quick"), o)[0].grid().text(), "8x16x1920");
}

TEST(BenchPresets, UnknownPresetIsRejected) {
  try {
    find_preset("fastest");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("seed, quick, batch-vs-large"), std::string::npos)
        << e.what();
  }
}

TEST(BenchPresets, OverridesReplaceThePresetsValues) {
  WorkloadOverrides o;
  o.rows = 64;
  o.images = 3;
  o.batch = 5;
  const auto w = resolve_workloads(find_preset("seed"), o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rows, 64);
  EXPECT_EQ(w[0].cols, 1920);
  EXPECT_EQ(w[0].images, 3);
  EXPECT_EQ(w[0].steps_per_image, 32);
  EXPECT_EQ(w[0].batch, 5);
  EXPECT_DOUBLE_EQ(w[0].cell_updates(), 64.0 * 1920 * 3 * 32 * 5);
}

TEST(BenchPresets, AComparisonPresetKeepsItsShapes) {
  WorkloadOverrides o;
  o.images = 1;
  const auto w = resolve_workloads(find_preset("batch-vs-large"), o);
  EXPECT_EQ(w[0].images, 1);
  EXPECT_EQ(w[1].images, 1);
  o.rows = 10;
  EXPECT_THROW(resolve_workloads(find_preset("batch-vs-large"), o), InvalidInput);
}

namespace {
BenchRequest small_request() {
  BenchRequest r;
  r.workloads = {{16, 24, 2, 4, 1}};
  r.engine.backend = "cpu";
  r.repeat = 1;
  return r;
}
}  // namespace

TEST(BenchRequestValidation, BadRequestsAreRejected) {
  EXPECT_NO_THROW(small_request().validate());
  auto expect_rejected = [](BenchRequest r, const char* what) {
    try {
      r.validate();
      ADD_FAILURE() << "accepted: " << what;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto r = small_request();
  r.repeat = 0;
  expect_rejected(r, "repeat");
  r = small_request();
  r.io = OutputMode::Hdf5;
  expect_rejected(r, "--output");
  r.output = "out.h5";
  r.workloads[0].batch = 4;
  expect_rejected(r, "--batch");
  for (auto field : {&Workload::rows, &Workload::cols, &Workload::images,
                     &Workload::steps_per_image, &Workload::batch}) {
    r = small_request();
    r.workloads[0].*field = 0;
    EXPECT_THROW(r.validate(), InvalidInput);
  }
  r = small_request();
  r.workloads[0].depth = 0;
  expect_rejected(r, "depth");
  r = small_request();
  r.workloads[0].depth = 3;
  r.problem.stencil = Stencil::seven_point();
  EXPECT_NO_THROW(r.validate());
  r.io = OutputMode::Hdf5;  // a volume's images are written as the run command writes them
  r.output = "out.h5";
  EXPECT_NO_THROW(r.validate());
  r = small_request();
  r.workloads[0].depth = 3;  // a plane's stencil on a volume
  expect_rejected(r, "stencil");
  r = small_request();
  r.warmup_images = -1;
  expect_rejected(r, "warmup");
  r = small_request();
  r.problem.params.dt = 10;
  expect_rejected(r, "stability");
  EXPECT_THROW(parse_output_mode("csv"), InvalidInput);
}

TEST(BenchRun, ReportsPositiveConsistentFigures) {
  auto request = small_request();
  request.repeat = 3;
  request.workloads[0].batch = 2;
  const BenchReport report = run_benchmark(request);
  EXPECT_EQ(report.backend, "cpu");
  ASSERT_EQ(report.measurements.size(), 1u);
  const Measurement& m = report.measurements[0];
  EXPECT_EQ(m.seconds.size(), 3u);
  EXPECT_EQ(m.median_seconds, median(m.seconds));
  EXPECT_GT(report.copy_bytes_per_s, 0);
  EXPECT_GT(report.copy_bytes_per_s_after, 0);
  EXPECT_NEAR(m.cell_updates_per_s, 16.0 * 24 * 2 * 4 * 2 / m.median_seconds,
              1e-6 * m.cell_updates_per_s);
  EXPECT_DOUBLE_EQ(m.bytes_per_s, 16 * m.cell_updates_per_s);
  EXPECT_DOUBLE_EQ(m.fraction_of_copy, m.bytes_per_s / report.copy_bytes_per_s);
  EXPECT_GT(report.peak_flops_per_s, 0);
  EXPECT_EQ(report.flops_per_cell_update, 29);  // oono-puri
  EXPECT_DOUBLE_EQ(m.flops_per_s, 29 * m.cell_updates_per_s);
  EXPECT_DOUBLE_EQ(m.fraction_of_peak, m.flops_per_s / report.peak_flops_per_s);
  ASSERT_EQ(report.verifications.size(), 1u);
  EXPECT_TRUE(report.verifications[0].passed);
  const std::string json = format_json(report);
  for (const char* key :
       {"\"backend\": \"cpu\"", "\"rows\": 16", "\"cols\": 24", "\"steps\": 8",
        "\"precision\": \"single\"", "\"stencil\": \"oono-puri\"", "\"seconds\"",
        "\"cell_updates_per_s\"", "\"bytes_per_s\"", "\"copy_bytes_per_s\"",
        "\"copy_bytes_per_s_after\"", "\"fraction_of_copy\"", "\"batch\": 2",
        "\"peak_flops_per_s\"", "\"peak_method\"", "\"flops_per_cell_update\": 29",
        "\"flops_per_s\"", "\"fraction_of_peak\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
  const std::string table = format_table(report);
  for (const char* text : {"16x24", "arithmetic peak:", "of peak",
                           "29 flops per cell update of oono-puri in 22 arithmetic instructions"}) {
    EXPECT_NE(table.find(text), std::string::npos) << text << " in " << table;
  }
}

TEST(BenchRun, AVolumeReportsItsCellsAndItsStencilsFlops) {
  BenchRequest request;
  request.workloads = {{8, 24, 2, 3, 1, 4}};
  request.problem.stencil = Stencil::seven_point();
  request.engine.backend = "cpu";
  request.repeat = 2;
  const BenchReport report = run_benchmark(request);
  ASSERT_EQ(report.measurements.size(), 1u);
  const Measurement& m = report.measurements[0];
  EXPECT_NEAR(m.cell_updates_per_s, 4.0 * 8 * 24 * 6 / m.median_seconds,
              1e-6 * m.cell_updates_per_s);
  EXPECT_EQ(report.flops_per_cell_update, 23);  // seven-point
  EXPECT_EQ(report.verifications[0].depth, 4);
  const std::string json = format_json(report);
  for (const char* key : {"\"depth\": 4", "\"rows\": 8", "\"stencil\": \"seven-point\"",
                          "\"flops_per_cell_update\": 23"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
  const std::string table = format_table(report);
  for (const char* text : {"4x8x24, 2 images x 3 steps", "of 4x8x24 at fuse"}) {
    EXPECT_NE(table.find(text), std::string::npos) << text << " in " << table;
  }
}

TEST(BenchRun, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
}

namespace {
// A workload whose automatic CPU depth with 2 threads is the deepest, 16: 300 rows per thread's
// band (16 rows of band per fused step), and rows of 64 cells, whose 16 levels fit any L2 cache.
constexpr Workload deep_workload{600, 64, 1, 32, 1};

// Plants a fault in the CPU engine's result, at fuse depth 16 only, for the life of the object.
class FaultAtDepth16 {
 public:
  FaultAtDepth16() {
    cpu::CpuEngine<float>::test_only_fault_on_capture = [](int depth, std::span<float> u) {
      if (depth == 16) u[u.size() / 2] += 0.25f;
    };
  }
  ~FaultAtDepth16() { cpu::CpuEngine<float>::test_only_fault_on_capture = nullptr; }
  FaultAtDepth16(const FaultAtDepth16&) = delete;
  FaultAtDepth16& operator=(const FaultAtDepth16&) = delete;
};
}  // namespace

// The verification runs at the depth the measurement fuses (the automatic one of the workload's
// grid, batch and threads, not of its own small grid), on a grid where every thread's band holds
// two passes, with the workload's columns.
TEST(BenchVerify, RunsAtTheDepthAndShapeItMeasures) {
  ASSERT_EQ(find_backend("cpu").default_fuse_steps({deep_workload.rows, deep_workload.cols},
                                                   Precision::Single, 2, 1),
            16);
  Problem problem;
  const auto v = verify_engine(problem, deep_workload, {"cpu", 2, 0, 0});
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_EQ(v.fuse_steps, 16);
  EXPECT_GE(v.rows, 2 * 16 * 2);
  EXPECT_EQ(v.cols, 64);
  EXPECT_GE(v.steps, 40);
  // A batch: the depth of the whole batch (3 x 128 rows over 2 threads: 192 / 16 = 12).
  const Workload batch{128, 64, 1, 32, 3};
  const auto vb = verify_engine(problem, batch, {"cpu", 2, 0, 0});
  EXPECT_TRUE(vb.passed) << vb.detail;
  EXPECT_EQ(vb.fuse_steps,
            find_backend("cpu").default_fuse_steps({128, 64}, Precision::Single, 2, 3));
  EXPECT_EQ(vb.fuse_steps, 12);
  EXPECT_EQ(vb.members, 3);
  // The course's columns keep their remainder modulo 64 beyond 2048.
  EXPECT_EQ(verify_engine(problem, {40, 4100, 1, 32, 1}, {"cpu", 2, 1, 0}).cols, 1984 + 4100 % 64);
  // An explicit depth is the one checked.
  EXPECT_EQ(verify_engine(problem, deep_workload, {"cpu", 2, 5, 0}).fuse_steps, 5);
}

// A fault that only the depth-16 path has: `grayscott bench` refuses to report a figure at the
// automatic depth (16 on this workload), from the API and from the command line, and measures
// at depth 15, which is sound.
TEST(BenchRun, RefusesAFigureWhenOnlyDepth16IsWrong) {
  const FaultAtDepth16 fault;
  BenchRequest request;
  request.workloads = {deep_workload};
  request.engine = {"cpu", 2, 0, 0};
  request.repeat = 1;
  request.warmup_images = 1;
  try {
    (void)run_benchmark(request);
    ADD_FAILURE() << "a figure was reported from a wrong result";
  } catch (const VerificationFailed& e) {
    EXPECT_NE(std::string(e.what()).find("no figures reported"), std::string::npos) << e.what();
  }

  CLI::App root;
  app::add_bench_command(root);
  const std::vector<std::string> args = {"grayscott", "bench", "--rows",    "600", "--cols",   "64",
                                         "--images",  "1",     "--threads", "2",   "--repeat", "1",
                                         "--backend", "cpu"};
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(root.parse(static_cast<int>(argv.size()), argv.data()), VerificationFailed);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed.find("Gcell"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("verified"), std::string::npos) << printed;

  request.engine.fuse_steps = 15;
  const BenchReport report = run_benchmark(request);
  ASSERT_EQ(report.verifications.size(), 1u);
  EXPECT_EQ(report.verifications[0].fuse_steps, 15);
  EXPECT_GT(report.measurements[0].cell_updates_per_s, 0);
}
