// The pipeline's C++ API: a run stopped through request_stop at an image (as a signal does) saves
// a checkpoint there and says so; continuing it gives a file bitwise identical, in every dataset,
// to the uninterrupted run's, for every boundary and precision, on another thread count, and from
// the CPU onto CUDA where a device exists. Also the checkpoint policy by image count.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <string>

#include "engine/cuda/cuda_backend.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"
#include "scratch_dir.hpp"

using namespace grayscott;
namespace fs = std::filesystem;

namespace {

struct Case {
  Boundary boundary;
  Precision precision;
};

class Resume : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { pipeline::clear_stop_request(); }
  void TearDown() override { pipeline::clear_stop_request(); }

  pipeline::RunRequest request(const std::string& name) const {
    pipeline::RunRequest r;
    r.problem.grid = {37, 52};
    r.problem.boundary = GetParam().boundary;
    r.problem.precision = GetParam().precision;
    r.problem.params.feed = 0.03;
    r.initial = {InitialKind::Noise, 11};
    r.images = 9;
    r.steps_per_image = 13;
    // v only: u is then kept in the checkpoint, v taken from the last image.
    r.fields = {false, true};
    r.output = dir_ / name;
    r.quiet = true;
    r.engine.backend = "cpu";
    return r;
  }

  grayscott::testing::ScratchDir dir_{"resume"};
};

// Every dataset of two files, as float64 (exact for float32, and for int64 values this small).
void expect_same_datasets(const fs::path& a, const fs::path& b) {
  io::RunFileReader x(a), y(b);
  for (const char* name : {"step", "checkpoint/images"}) {
    EXPECT_EQ(x.read_int64(name), y.read_int64(name)) << name;
  }
  ASSERT_EQ(x.shape("v"), y.shape("v"));
  EXPECT_FALSE(y.has_field("u"));
  for (std::int64_t i = 0; i < x.shape("v")[0]; ++i) {
    EXPECT_EQ(x.read_image("v", i), y.read_image("v", i)) << "image " << i;
  }
  EXPECT_FALSE(y.has_field("checkpoint/v"));
  // [2, rows, cols]: read_image's first axis is the slot.
  for (const char* name : {"checkpoint/u"}) {
    for (std::int64_t slot = 0; slot < 2; ++slot) {
      EXPECT_EQ(x.read_image(name, slot), y.read_image(name, slot)) << name << " slot " << slot;
    }
  }
  EXPECT_EQ(x.attribute_string("status"), "complete");
  EXPECT_EQ(y.attribute_string("status"), "complete");
}

// Runs `r`, asking it to stop through the API once `stop_at` images are done, as a SIGTERM would.
pipeline::RunSummary run_until(pipeline::RunRequest r, std::int64_t stop_at) {
  r.on_progress = [stop_at](std::int64_t done, std::int64_t) {
    if (done == stop_at) pipeline::request_stop(SIGTERM);
  };
  const auto summary = pipeline::execute_run(r);
  pipeline::clear_stop_request();
  return summary;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(to_string(info.param.boundary)) + "_" +
                     std::string(to_string(info.param.precision));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

TEST_P(Resume, StoppedRunContinuesBitwise) {
  const auto reference = request("reference.h5");
  ASSERT_TRUE(pipeline::execute_run(reference).completed);
  for (std::int64_t stop_at : {1, 4, 7}) {
    auto r = request("stopped" + std::to_string(stop_at) + ".h5");
    r.engine.threads = 1;
    const auto stopped = run_until(r, stop_at);
    // The local engine already computes the next image while one is handed over: the stop comes
    // at the image after the one whose hand-over saw it.
    const std::int64_t at = stop_at + 1;
    EXPECT_FALSE(stopped.completed);
    EXPECT_EQ(stopped.signal, SIGTERM);
    EXPECT_EQ(stopped.images_written, at);
    EXPECT_EQ(stopped.checkpoint_images, at);
    EXPECT_EQ(stopped.status, "interrupted by SIGTERM after image " + std::to_string(at));
    {
      io::RunFileReader file(r.output);
      EXPECT_EQ(file.attribute_string("status"), stopped.status);
    }
    auto continued = pipeline::resume_request(r.output);
    continued.quiet = true;
    continued.engine.backend = "cpu";
    continued.engine.threads = 2;
    const auto summary = pipeline::execute_run(continued);
    EXPECT_TRUE(summary.completed);
    EXPECT_EQ(summary.first_image, at);
    expect_same_datasets(reference.output, r.output);
  }
}

TEST_P(Resume, AHookThatStopsAtAnImageLeavesItWrittenWithItsCheckpointAndContinuesBitwise) {
  const auto reference = request("reference.h5");
  ASSERT_TRUE(pipeline::execute_run(reference).completed);
  auto r = request("held.h5");
  std::vector<std::int64_t> seen;
  r.on_image = [&seen](const pipeline::LoopImage& image) -> std::string {
    seen.push_back(image.step);
    EXPECT_NE(image.v, nullptr);
    return image.index == 2 ? "stopped after image 3: a plot failed" : "";
  };
  const auto stopped = pipeline::execute_run(r);
  EXPECT_FALSE(stopped.completed);
  EXPECT_EQ(stopped.status, "stopped after image 3: a plot failed");
  EXPECT_EQ(stopped.images_written, 3);
  EXPECT_EQ(stopped.checkpoint_images, 3);
  EXPECT_EQ(seen.size(), 3u);
  {
    io::RunFileReader file(r.output);
    EXPECT_EQ(file.attribute_string("status"), stopped.status);
    EXPECT_EQ(file.read_int64("step").size(), 3u);
  }
  auto continued = pipeline::resume_request(r.output);
  continued.quiet = true;
  continued.engine.backend = "cpu";
  const auto summary = pipeline::execute_run(continued);
  EXPECT_TRUE(summary.completed);
  EXPECT_EQ(summary.first_image, 3);
  expect_same_datasets(reference.output, r.output);
}

TEST_P(Resume, CheckpointsEveryNImagesAndFromTheInitialStateWithoutOne) {
  auto r = request("every3.h5");
  r.save.checkpoint_every_images = 3;
  const auto stopped = run_until(r, 4);  // stops at image 5, the one before it saved at image 3
  {
    io::RunFileReader file(r.output);
    auto slots = file.read_int64("checkpoint/images");
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(slots, (std::vector<std::int64_t>{3, 5}));
  }
  EXPECT_EQ(stopped.checkpoint_images, 5);

  // A run that never saved one (no time passed its interval) still ends with the final state.
  auto reference = request("reference.h5");
  ASSERT_TRUE(pipeline::execute_run(reference).completed);
  io::RunFileReader file(reference.output);
  EXPECT_EQ(file.read_int64("checkpoint/images"), (std::vector<std::int64_t>{9, 9}));
  EXPECT_EQ(file.read_image("checkpoint/u", 0), file.read_image("checkpoint/u", 1));
}

TEST_P(Resume, ContinuesOnCudaWhereThereIsADevice) {
  std::string why;
  if (!cuda::available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
  const auto reference = request("reference.h5");
  ASSERT_TRUE(pipeline::execute_run(reference).completed);
  auto r = request("cpu_then_cuda.h5");
  run_until(r, 3);
  auto continued = pipeline::resume_request(r.output);
  continued.quiet = true;
  continued.engine.backend = "cuda";
  ASSERT_TRUE(pipeline::execute_run(continued).completed);
  expect_same_datasets(reference.output, r.output);
}

TEST(ResumeRefusals, CompleteFilesAndMissingFiles) {
  const grayscott::testing::ScratchDir dir("refusals");
  pipeline::RunRequest r;
  r.problem.grid = {16, 16};
  r.images = 2;
  r.steps_per_image = 3;
  r.output = dir / "done.h5";
  r.quiet = true;
  r.overwrite = true;
  r.engine.backend = "cpu";
  ASSERT_TRUE(pipeline::execute_run(r).completed);
  try {
    pipeline::resume_request(r.output);
    ADD_FAILURE() << "a complete file was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to resume"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pipeline::resume_request(dir / "missing.h5"), InvalidInput);
  // A stopped run whose images another program deleted: said so, not blamed on the fields asked.
  {
    const hid_t file = H5Fopen(r.output.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    EXPECT_GE(H5Ldelete(file, "v", H5P_DEFAULT), 0);
    io::h5::rewrite_string_attribute(file, "status", "interrupted");
    H5Fclose(file);
  }
  try {
    pipeline::resume_request(r.output);
    ADD_FAILURE() << "a file without images was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()), r.output.string() +
                                         " holds no images: it has neither /u nor /v (changed "
                                         "since it was written)");
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBoundaryAndPrecision, Resume,
                         ::testing::Values(Case{Boundary::ZeroFlux, Precision::Single},
                                           Case{Boundary::Periodic, Precision::Single},
                                           Case{Boundary::Fixed, Precision::Single},
                                           Case{Boundary::ZeroFlux, Precision::Double},
                                           Case{Boundary::Periodic, Precision::Double},
                                           Case{Boundary::Fixed, Precision::Double}),
                         case_name);
