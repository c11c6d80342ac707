#include <gtest/gtest.h>
#include <png.h>

#include <filesystem>
#include <fstream>

#include "app/run_driver.hpp"
#include "io/inferno.hpp"
#include "io/png.hpp"
#include "io/render.hpp"

using namespace grayscott;
namespace fs = std::filesystem;

namespace {
struct PngRead {
  png_uint_32 width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};
PngRead read_png(const fs::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  PngRead out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return out;
  image.format = PNG_FORMAT_RGB;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr);
  out.width = image.width, out.height = image.height;
  return out;
}
}  // namespace

TEST(Colorize, MapsTheRangeOntoInferno) {
  const std::vector<double> values = {0.0, 0.25, 0.5, -1.0, 9.0};
  const auto image = io::colorize(values, 1, 5, 0.0, 0.5);
  auto pixel = [&](int i) {
    return std::array<std::uint8_t, 3>{image.pixels[3 * i], image.pixels[3 * i + 1],
                                       image.pixels[3 * i + 2]};
  };
  EXPECT_EQ(pixel(0), inferno_colormap[0]);
  EXPECT_EQ(pixel(1), inferno_colormap[128]);
  EXPECT_EQ(pixel(2), inferno_colormap[255]);
  EXPECT_EQ(pixel(3), inferno_colormap[0]) << "clamped below";
  EXPECT_EQ(pixel(4), inferno_colormap[255]) << "clamped above";
}

TEST(Render, OnePngPerImageWithTheGridSize) {
  const fs::path dir =
      fs::temp_directory_path() / ("grayscott_render_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  app::RunRequest r;
  r.problem.grid = {30, 50};
  r.images = 3;
  r.steps_per_image = 20;
  r.output = dir / "run.h5";
  r.quiet = true;
  r.engine.backend = BackendKind::Cpu;
  app::execute_run(r);

  io::RenderOptions options;
  options.out_dir = dir / "pics";
  const auto written = io::render_run(r.output, options);
  ASSERT_EQ(written.size(), 3u);
  EXPECT_EQ(written[2].filename(), "v_0002.png");
  const auto png = read_png(written[2]);
  EXPECT_EQ(png.width, 50u);
  EXPECT_EQ(png.height, 30u);
  // The seed (v = 1, beyond the range) is bright, the background (v = 0) dark.
  const auto first = read_png(dir / "pics" / "v_0000.png");
  ASSERT_EQ(first.rgb.size(), 30u * 50u * 3u);
  const std::size_t corner = 0;
  EXPECT_EQ(first.rgb[corner], inferno_colormap[0][0]);

  options.image = 1;
  options.field = "v";
  options.out_dir = dir / "one";
  EXPECT_EQ(io::render_run(r.output, options).size(), 1u);
  options.image = 3;
  EXPECT_THROW(io::render_run(r.output, options), InvalidInput);
  options.image.reset();
  options.field = "u";
  EXPECT_THROW(io::render_run(r.output, options), InvalidInput) << "u was not written";
  fs::remove_all(dir);
}

TEST(Render, FolderIsCheckedWithoutBeingCreated) {
  const fs::path dir =
      fs::temp_directory_path() / ("grayscott_render_folder_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto message = [](const fs::path& folder) -> std::string {
    try {
      io::check_render_folder(folder);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(dir), "accepted");
  EXPECT_EQ(message(dir / "new" / "deeper"), "accepted");
  EXPECT_FALSE(fs::exists(dir / "new")) << "the check created a folder";
  const fs::path file = dir / "file";
  { std::ofstream(file) << "x"; }
  EXPECT_EQ(message(file), "render " + file.string() + " is a file, not a folder");
  EXPECT_EQ(message(file / "pics"), "render folder " + (file / "pics").string() +
                                        " cannot be created: " + file.string() + " is a file");
  EXPECT_EQ(message(""), "render: the folder name is empty");
  fs::remove_all(dir);
}

TEST(Render, ParsesRanges) {
  EXPECT_EQ(io::parse_range("0:0.5"), (std::pair<double, double>{0.0, 0.5}));
  EXPECT_EQ(io::parse_range("-1:2"), (std::pair<double, double>{-1.0, 2.0}));
  EXPECT_THROW(io::parse_range("0.5"), InvalidInput);
  EXPECT_THROW(io::parse_range("1:0"), InvalidInput);
  EXPECT_THROW(io::parse_range("a:b"), InvalidInput);
  EXPECT_THROW(io::parse_range("0:1x"), InvalidInput);
}
