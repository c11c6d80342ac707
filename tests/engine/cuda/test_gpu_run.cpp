// The run command's path end to end on the GPU: the images in the HDF5 file are exactly the images
// the engine produces when nothing is written, and the file says which backend ran.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

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
