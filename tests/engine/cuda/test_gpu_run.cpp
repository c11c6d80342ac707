// The run command's path end to end on the GPU: the images in the HDF5 file are exactly the images
// the engine produces when nothing is written, and the file says which backend ran.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"
#include "pipeline/run.hpp"

using namespace grayscott;
using namespace grayscott::testing;

namespace {

std::filesystem::path temporary_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("grayscott_gpu_" + std::to_string(::getpid()) + "_" + name);
}

// A quiet run on the CUDA backend into a temporary file `name`.
pipeline::RunRequest cuda_run(std::int64_t rows, std::int64_t cols, std::int64_t images,
                              std::int64_t steps_per_image, const std::string& name) {
  pipeline::RunRequest request;
  request.problem =
      stable_problem(rows, cols, Stencil::oono_puri(), Boundary::ZeroFlux, Precision::Single);
  request.images = images;
  request.steps_per_image = steps_per_image;
  request.engine.backend = "cuda";
  request.output = temporary_path(name);
  request.overwrite = true;
  request.quiet = true;
  return request;
}

}  // namespace

TEST(GpuRunDriver, ImagesWrittenEqualImagesComputedWithoutOutput) {
  GRAYSCOTT_REQUIRE_GPU();
  pipeline::RunRequest request = cuda_run(72, 120, 7, 16, "run.h5");
  request.fields = {true, true};
  const auto summary = pipeline::execute_run(request);
  EXPECT_TRUE(summary.completed) << summary.status;
  EXPECT_EQ(summary.backend, "cuda");
  EXPECT_EQ(summary.images_written, request.images);

  // The same run with no output at all: the engine alone, from the same seed.
  const Grid& grid = request.problem.grid;
  const auto cells = static_cast<std::size_t>(grid.cells());
  const Parameters params[1] = {request.problem.params};
  auto engine = make_engine<float>(request.problem, params, request.engine);
  std::vector<float> u(cells), v(cells);
  fill_seed<float>(grid, u, v);
  engine->load(0, u, v);

  io::RunFileReader file(request.output);
  EXPECT_EQ(file.attribute_string("backend"), "cuda");
  for (std::int64_t i = 0; i < request.images; ++i) {
    engine->advance(request.steps_per_image);
    engine->capture({true, true});
    engine->read_captured(0, u.data(), v.data());
    EXPECT_EQ(file.read_image("u", i), to_double(u)) << "image " << i;
    EXPECT_EQ(file.read_image("v", i), to_double(v)) << "image " << i;
  }
  std::filesystem::remove(request.output);
  std::filesystem::remove(io::xdmf_path_for(request.output));
}

TEST(GpuRunDriver, BadDeviceOrdinalStopsBeforeAnyOutput) {
  GRAYSCOTT_REQUIRE_GPU();
  pipeline::RunRequest request = cuda_run(16, 16, 2, 4, "bad_device.h5");
  request.engine.device = static_cast<int>(cuda::devices().size()) + 3;
  EXPECT_THROW(pipeline::execute_run(request), InvalidInput);
  EXPECT_FALSE(std::filesystem::exists(request.output));
}

// The statistics of every image, measured on the device (the reduction kernel, the previous v kept
// there), against the CPU engine's run of the same request measured on the host: the images are
// bitwise alike, so extremes, counts and the largest change are exactly alike, the sums to
// rounding.
TEST(GpuRunDriver, StatisticsMeasuredOnTheDeviceMatchTheHosts) {
  GRAYSCOTT_REQUIRE_GPU();
  std::vector<analysis::ImageStatistics> seen[2];
  for (int backend = 0; backend < 2; ++backend) {
    pipeline::RunRequest request = cuda_run(72, 120, 6, 16, "stats.h5");
    request.engine.backend = backend == 0 ? "cuda" : "cpu";
    request.initial = {InitialKind::Noise, 3};
    request.analysis.statistics = analysis::HistogramSpec{16, 0.0, 0.5};
    request.on_image = [&](const pipeline::LoopImage& image) {
      EXPECT_EQ(image.statistics.size(), 1u);
      if (!image.statistics.empty()) seen[backend].push_back(image.statistics[0]);
      return std::string();
    };
    const auto summary = pipeline::execute_run(request);
    EXPECT_TRUE(summary.completed) << summary.status;
    std::filesystem::remove(request.output);
    std::filesystem::remove(io::xdmf_path_for(request.output));
  }
  ASSERT_EQ(seen[0].size(), 6u);
  ASSERT_EQ(seen[1].size(), 6u);
  const auto near = [](double a, double b) { return std::abs(a - b) <= 1e-12 * (1 + std::abs(b)); };
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE("image " + std::to_string(i));
    const analysis::ImageStatistics &gpu = seen[0][i], &cpu = seen[1][i];
    EXPECT_EQ(gpu.histogram, cpu.histogram);
    EXPECT_EQ(gpu.u_min, cpu.u_min);
    EXPECT_EQ(gpu.u_max, cpu.u_max);
    EXPECT_EQ(gpu.v_min, cpu.v_min);
    EXPECT_EQ(gpu.v_max, cpu.v_max);
    EXPECT_EQ(gpu.change_max, cpu.change_max);  // the first image's too: from the start
    EXPECT_PRED2(near, gpu.u_mean, cpu.u_mean);
    EXPECT_PRED2(near, gpu.v_std, cpu.v_std);
    EXPECT_PRED2(near, gpu.change_rms_per_step, cpu.change_rms_per_step);
  }
}
