#include <gtest/gtest.h>
#include <hdf5.h>
#include <png.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

#include "io/pictures/inferno.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/render.hpp"
#include "pipeline/run.hpp"
#include "scratch_dir.hpp"

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
  const grayscott::testing::ScratchDir dir("render");
  pipeline::RunRequest r;
  r.problem.grid = {30, 50};
  r.images = 3;
  r.steps_per_image = 20;
  r.output = dir / "run.h5";
  r.quiet = true;
  r.engine.backend = "cpu";
  pipeline::execute_run(r);

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
  // Negative images count from the end, as in Python; never "all of them".
  options.image = -1;
  options.out_dir = dir / "last";
  const auto last = io::render_run(r.output, options);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].filename(), "v_0002.png");
  options.image = -3;
  options.out_dir = dir / "first";
  const auto first_again = io::render_run(r.output, options);
  ASSERT_EQ(first_again.size(), 1u);
  EXPECT_EQ(first_again[0].filename(), "v_0000.png");
  options.image = -4;
  options.out_dir = dir / "none";
  EXPECT_THROW(io::render_run(r.output, options), InvalidInput);
  EXPECT_FALSE(fs::exists(dir / "none"));
  options.image.reset();
  options.field = "u";
  EXPECT_THROW(io::render_run(r.output, options), InvalidInput) << "u was not written";
}

// The picture itself, pixel by pixel, one step after the seed (u = 0, v = 1 on the seed rectangle,
// u = 1, v = 0 elsewhere; docs/model.md), in the colour range [0, 0.5], with the default rates
// (du = 0.1, dv = 0.05, F = 0.014, k = 0.054, dt = 1):
// - the background two cells or more away from the seed still holds u = 1, v = 0 exactly: u is
//   inferno's brightest colour (255, beyond the range), v its darkest (0);
// - a seed cell has v = 1 - 0.05 L - 0.068 with L(v) of at most 8 neighbours (weights summing to 3)
//   in [-3, 0]: v >= 0.78, brightest (255); u = 0.1 L(u) + 0.014 with L(u) in [0, 3]: u in
//   (0, 0.314], a colour index in [1, 161];
// - a cell next to the seed: v = 0.05 L(v), L(v) in (0, 1] (at most three seed neighbours, weights
//   1/4 + 1/2 + 1/4): v in (0, 0.05], an index in [1, 26]; u = 1 + 0.1 L(u) - u v^2 ... >= 0.89,
//   brightest (255).
TEST(Render, ThePictureShowsTheSeedOnTheBackground) {
  const grayscott::testing::ScratchDir dir("render_colours");
  constexpr std::int64_t rows = 30, cols = 50;
  pipeline::RunRequest r;
  r.problem.grid = {rows, cols};
  r.images = 1;
  r.steps_per_image = 1;
  r.fields = {true, true};
  r.output = dir / "run.h5";
  r.quiet = true;
  r.engine.backend = "cpu";
  pipeline::execute_run(r);

  // The seed rectangle of docs/model.md: rows [7R/16 - 4, 8R/16 - 4), columns [7C/16, 8C/16).
  const std::int64_t r0 = 7 * rows / 16 - 4, r1 = 8 * rows / 16 - 4;
  const std::int64_t c0 = 7 * cols / 16, c1 = 8 * cols / 16;
  ASSERT_EQ(r0, 9);
  ASSERT_EQ(c1, 25);
  auto distance = [&](std::int64_t row, std::int64_t col) {  // Chebyshev, 0 inside the seed
    const std::int64_t dr = row < r0 ? r0 - row : (row >= r1 ? row - r1 + 1 : 0);
    const std::int64_t dc = col < c0 ? c0 - col : (col >= c1 ? col - c1 + 1 : 0);
    return std::max(dr, dc);
  };
  auto colour_index = [](const std::uint8_t* rgb) {
    for (int i = 0; i < 256; ++i) {
      const auto& c = inferno_colormap[static_cast<std::size_t>(i)];
      if (c[0] == rgb[0] && c[1] == rgb[1] && c[2] == rgb[2]) return i;
    }
    return -1;
  };
  for (const char* field : {"v", "u"}) {
    io::RenderOptions options;
    options.field = field;
    options.out_dir = dir / field;
    const auto written = io::render_run(r.output, options);
    ASSERT_EQ(written.size(), 1u);
    const auto png = read_png(written[0]);
    ASSERT_EQ(png.rgb.size(), static_cast<std::size_t>(rows * cols * 3)) << field;
    const bool is_v = field[0] == 'v';
    // Inclusive index ranges: seed, next to the seed, background.
    const std::array<std::pair<int, int>, 3> expected =
        is_v ? std::array<std::pair<int, int>, 3>{{{255, 255}, {1, 26}, {0, 0}}}
             : std::array<std::pair<int, int>, 3>{{{1, 161}, {255, 255}, {255, 255}}};
    int seed_pixels = 0, rim_pixels = 0;
    for (std::int64_t row = 0; row < rows; ++row) {
      for (std::int64_t col = 0; col < cols; ++col) {
        const int index = colour_index(&png.rgb[static_cast<std::size_t>(3 * (row * cols + col))]);
        const auto d = static_cast<std::size_t>(std::min<std::int64_t>(distance(row, col), 2));
        EXPECT_GE(index, expected[d].first)
            << field << " pixel " << row << "," << col << ", " << d << " from the seed";
        EXPECT_LE(index, expected[d].second)
            << field << " pixel " << row << "," << col << ", " << d << " from the seed";
        seed_pixels += d == 0 ? 1 : 0;
        rim_pixels += d == 1 ? 1 : 0;
      }
    }
    EXPECT_EQ(seed_pixels, 2 * 4) << field;
    EXPECT_EQ(rim_pixels, 4 * 6 - 2 * 4) << field;
  }
}

TEST(Render, NegativeImagesCountFromTheEnd) {
  EXPECT_EQ(io::resolve_image(0, 3), 0);
  EXPECT_EQ(io::resolve_image(2, 3), 2);
  EXPECT_EQ(io::resolve_image(-1, 3), 2);
  EXPECT_EQ(io::resolve_image(-3, 3), 0);
  for (std::int64_t bad : {3, 4, -4, -100}) {
    try {
      io::resolve_image(bad, 3);
      FAIL() << bad << " was accepted";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(std::string(e.what()), "image " + std::to_string(bad) +
                                           " is out of range: the file holds 3 images (0 to 2, "
                                           "or -3 to -1 from the end)");
    }
  }
  EXPECT_THROW(io::resolve_image(-1, 0), InvalidInput);
}

// The memory limit of this process's control group is its own group's or an ancestor's, the
// smallest, in either cgroup version; a group the hierarchy lacks (a container's view) is passed
// over for the ones above it, and "max" or a missing file sets none.
TEST(Memory, TheControlGroupsSmallestLimitBoundsIt) {
  const grayscott::testing::ScratchDir root("cgroups");
  const auto write = [&](const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  };
  const auto limit_of = [&](const std::string& cgroup_lines) {
    write(root / "self-cgroup", cgroup_lines);
    return io::cgroup_memory_limit(root / "self-cgroup", root);
  };
  write(root / "job/step/memory.max", "max");
  write(root / "job/memory.max", "4000");
  EXPECT_EQ(limit_of("0::/job/step"), 4000u) << "the parent's";
  write(root / "job/step/memory.max", "3000");
  EXPECT_EQ(limit_of("0::/job/step"), 3000u) << "its own, the smaller";
  EXPECT_EQ(limit_of("0::/elsewhere/unseen"), UINT64_MAX) << "none set";
  write(root / "memory.max", "777");
  EXPECT_EQ(limit_of("0::/elsewhere/unseen"), 777u) << "the root's, above a group not there";
  // Version 1: the memory controller's own hierarchy, alone or mounted with others.
  write(root / "memory/memory.limit_in_bytes", "9223372036854771712");
  write(root / "memory/box/memory.limit_in_bytes", "5000");
  EXPECT_EQ(limit_of("4:memory:/box\n3:cpu:/box"), 5000u);
  EXPECT_EQ(limit_of("4:memory:/box\n0::/elsewhere"), 777u) << "both versions: the smaller";
  write(root / "cpu,memory/box/memory.limit_in_bytes", "6000");
  EXPECT_EQ(limit_of("2:cpu,memory:/box"), 6000u);
  EXPECT_EQ(limit_of("2:cpu:/box"), UINT64_MAX) << "no memory controller";
  EXPECT_EQ(io::cgroup_memory_limit(root / "missing", root), UINT64_MAX);
}

// An image larger than the memory left is refused in one line before anything is read. The file
// is an HDF5 dataset of 2^40 cells that holds no data (its chunks were never written).
TEST(Render, ImagesLargerThanTheMemoryAreRefused) {
  EXPECT_EQ(io::render_bytes(1000, 2000), 19u * 1000u * 2000u);
  EXPECT_NO_THROW(io::check_render_memory(100, "an image", 100));
  EXPECT_THROW(io::check_render_memory(101, "an image", 100), InvalidInput);
  EXPECT_GT(io::available_memory(), 0u);

  const grayscott::testing::ScratchDir dir("render_huge");
  const fs::path file = dir / "huge.h5";
  {
    const hid_t h5 = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[3] = {1, hsize_t{1} << 20, hsize_t{1} << 20}, chunk[3] = {1, 1, dims[2]};
    const hid_t space = H5Screate_simple(3, dims, nullptr);
    const hid_t props = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(props, 3, chunk);
    const hid_t v = H5Dcreate2(h5, "v", H5T_IEEE_F32LE, space, H5P_DEFAULT, props, H5P_DEFAULT);
    ASSERT_GE(v, 0);
    H5Dclose(v), H5Pclose(props), H5Sclose(space), H5Fclose(h5);
  }
  io::RenderOptions options;
  options.out_dir = dir / "pics";
  options.image = 0;
  try {
    io::render_run(file, options);
    FAIL() << "a 2^40-cell image was rendered";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("an image of 1048576x1048576 needs 19.0 TiB of memory"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "pics"));
}

TEST(Render, FolderIsCheckedWithoutBeingCreated) {
  const grayscott::testing::ScratchDir dir("render_folder");
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
}

TEST(Render, ParsesRanges) {
  EXPECT_EQ(io::parse_range("0:0.5"), (std::pair<double, double>{0.0, 0.5}));
  EXPECT_EQ(io::parse_range("-1:2"), (std::pair<double, double>{-1.0, 2.0}));
  EXPECT_THROW(io::parse_range("0.5"), InvalidInput);
  EXPECT_THROW(io::parse_range("1:0"), InvalidInput);
  EXPECT_THROW(io::parse_range("a:b"), InvalidInput);
  EXPECT_THROW(io::parse_range("0:1x"), InvalidInput);
}

// Times in plain notation, never "1e+04"; as many digits as they need, up to six after the point.
TEST(RenderTitle, TimesInPlainNotation) {
  EXPECT_EQ(grayscott::io::picture_title("v", 10000, 1.0), "v at step 10000, t = 10000");
  EXPECT_EQ(grayscott::io::picture_title("v", 3, 0.1), "v at step 3, t = 0.3");
  EXPECT_EQ(grayscott::io::picture_title("u", 320000, 0.5), "u at step 320000, t = 160000");
  EXPECT_EQ(grayscott::io::picture_title("v", 7, 0.25), "v at step 7, t = 1.75");
  EXPECT_EQ(grayscott::io::plain_number(0.5), "0.5");
  EXPECT_EQ(grayscott::io::plain_number(1e4), "10000");
}
