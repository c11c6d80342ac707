// A volume's run file (docs/file-format.md): written through the writer itself, with no engine,
// read back through HDF5, the reader, the companion, a continued run, a repair and the pictures;
// and a plane's file unchanged by volumes.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "io/files/hdf5.hpp"
#include "io/files/reader.hpp"
#include "io/files/repair.hpp"
#include "io/files/run_file.hpp"
#include "io/pictures/render.hpp"
#include "scratch_dir.hpp"

using namespace grayscott;
namespace fs = std::filesystem;

namespace {

class VolumeFileTest : public ::testing::Test {
 protected:
  grayscott::testing::ScratchDir dir_{"volume"};
};

io::RunMetadata volume_meta(std::int64_t depth, std::int64_t rows, std::int64_t cols,
                            std::int64_t images) {
  io::RunMetadata meta;
  meta.problem.grid = {rows, cols, depth};
  meta.problem.stencil = depth > 1 ? Stencil::seven_point() : Stencil::oono_puri();
  meta.problem.precision = Precision::Double;
  meta.images = images;
  meta.steps_per_image = 5;
  meta.fields = {false, true};
  meta.backend = "test";
  meta.version = "test";
  return meta;
}

// Every cell its own value: image i, cell (z, y, x) holds i + z / 10 + y / 100 + x / 1000 (v), and
// the negation (u).
std::vector<double> image_values(const Grid& g, std::int64_t image, double sign = 1) {
  std::vector<double> out;
  for (std::int64_t z = 0; z < g.depth; ++z)
    for (std::int64_t y = 0; y < g.rows; ++y)
      for (std::int64_t x = 0; x < g.cols; ++x)
        out.push_back(sign * (static_cast<double>(image) + static_cast<double>(z) / 10 +
                              static_cast<double>(y) / 100 + static_cast<double>(x) / 1000));
  return out;
}

void write_images(io::RunFileWriter& writer, const Grid& g, std::int64_t from, std::int64_t to,
                  std::int64_t steps_per_image) {
  for (std::int64_t i = from; i < to; ++i) {
    const auto u = image_values(g, i, -1), v = image_values(g, i);
    writer.append((i + 1) * steps_per_image, u.data(), v.data());
  }
}

std::vector<hsize_t> dims_of(hid_t file, const char* name, std::vector<hsize_t>* chunk = nullptr) {
  io::h5::Id d(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, name);
  io::h5::Id space(H5Dget_space(d), H5Sclose, "space");
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  if (chunk) {
    io::h5::Id props(H5Dget_create_plist(d), H5Pclose, "props");
    chunk->assign(dims.size(), 0);
    H5Pget_chunk(props, static_cast<int>(dims.size()), chunk->data());
  }
  return dims;
}

// The name of the dimension scale attached to axis `axis` of `name`.
std::string scale_name(hid_t file, const char* name, unsigned axis) {
  io::h5::Id d(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, name);
  std::string found;
  H5DSiterate_scales(
      d, axis, nullptr,
      [](hid_t, unsigned, hid_t scale, void* out) -> herr_t {
        char text[64] = {};
        H5DSget_scale_name(scale, text, sizeof text);
        *static_cast<std::string*>(out) = text;
        return 1;
      },
      &found);
  return found;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The doubles at `offset` of a file.
std::vector<double> bytes_at(const fs::path& path, std::uint64_t offset, std::size_t values) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::vector<double> out(values);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(values * 8));
  return out;
}

// Every "Seek" offset of an .xmf, in order.
std::vector<std::uint64_t> seeks(const std::string& xmf) {
  std::vector<std::uint64_t> out;
  for (auto at = xmf.find("Seek=\""); at != std::string::npos; at = xmf.find("Seek=\"", at + 1))
    out.push_back(std::stoull(xmf.substr(at + 6)));
  return out;
}

struct Png {
  png_uint_32 width = 0, height = 0;
};
Png png_size(const fs::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return {};
  Png out{image.width, image.height};
  png_image_free(&image);
  return out;
}

}  // namespace

TEST_F(VolumeFileTest, FieldsAreTimeZYXWithScalesAndTheDepthAttribute) {
  const auto meta = volume_meta(4, 5, 6, 3);
  const fs::path path = dir_ / "volume.h5";
  {
    io::RunFileWriter writer(path, meta, false);
    write_images(writer, meta.problem.grid, 0, 3, meta.steps_per_image);
    const auto u = image_values(meta.problem.grid, 2, -1), v = image_values(meta.problem.grid, 2);
    writer.save_checkpoint(3, u.data(), v.data());
    writer.finish("complete");
  }
  io::h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open");
  std::vector<hsize_t> chunk;
  EXPECT_EQ(dims_of(file, "v", &chunk), (std::vector<hsize_t>{3, 4, 5, 6}));
  EXPECT_EQ(chunk, (std::vector<hsize_t>{1, 1, 5, 6}));  // one plane per chunk
  EXPECT_EQ(dims_of(file, "checkpoint/u"), (std::vector<hsize_t>{2, 4, 5, 6}));
  EXPECT_EQ(dims_of(file, "z"), (std::vector<hsize_t>{4}));
  EXPECT_EQ(scale_name(file, "v", 0), "time");
  EXPECT_EQ(scale_name(file, "v", 1), "z");
  EXPECT_EQ(scale_name(file, "v", 2), "y");
  EXPECT_EQ(scale_name(file, "v", 3), "x");

  const io::RunFileReader reader(path);
  EXPECT_EQ(reader.depth(), 4);
  EXPECT_FALSE(reader.sweep());
  EXPECT_EQ(reader.read_int64("z"), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(reader.read_image("v", 1), image_values(meta.problem.grid, 1));
  // A slice across each axis: cell (z, y, x) is 1 + z/10 + y/100 + x/1000 in image 1.
  const auto across_z = reader.read_slice("v", 1, 0, 2);
  ASSERT_EQ(across_z.size(), 30u);
  EXPECT_DOUBLE_EQ(across_z[1 * 6 + 3], 1 + 0.2 + 0.01 + 0.003);
  const auto across_y = reader.read_slice("v", 1, 1, 4);  // depth x cols
  ASSERT_EQ(across_y.size(), 24u);
  EXPECT_DOUBLE_EQ(across_y[3 * 6 + 5], 1 + 0.3 + 0.04 + 0.005);
  const auto across_x = reader.read_slice("v", 1, 2, 0);  // depth x rows
  ASSERT_EQ(across_x.size(), 20u);
  EXPECT_DOUBLE_EQ(across_x[2 * 5 + 4], 1 + 0.2 + 0.04);
  EXPECT_THROW(reader.read_slice("v", 1, 0, 4), InvalidInput);

  const io::RunFileState state = io::read_run_state(path);
  EXPECT_EQ(state.meta.problem.grid.depth, 4);
  EXPECT_EQ(state.meta.problem.grid.text(), "4x5x6");
  EXPECT_EQ(state.meta.problem.stencil.name(), "seven-point");
  EXPECT_EQ(state.images_in_file, 3);
  EXPECT_EQ(state.checkpoint_images, 3);
  // The checkpoint holds every cell of the volume.
  std::vector<double> u, v;
  io::read_checkpoint<double>(path, 0, 0, 0, 0, u, v);
  EXPECT_EQ(u, image_values(meta.problem.grid, 2, -1));
  EXPECT_EQ(v, image_values(meta.problem.grid, 2));
  const io::FileReport report = io::inspect_file(path);
  EXPECT_EQ(report.problem.grid.text(), "4x5x6");
}

TEST_F(VolumeFileTest, APlaneKeepsItsLayout) {
  const auto meta = volume_meta(1, 5, 6, 2);
  const fs::path path = dir_ / "plane.h5";
  {
    io::RunFileWriter writer(path, meta, false);
    write_images(writer, meta.problem.grid, 0, 2, meta.steps_per_image);
    writer.finish("complete");
  }
  io::h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open");
  std::vector<hsize_t> chunk;
  EXPECT_EQ(dims_of(file, "v", &chunk), (std::vector<hsize_t>{2, 5, 6}));
  EXPECT_EQ(chunk, (std::vector<hsize_t>{1, 5, 6}));
  EXPECT_LE(H5Lexists(file, "z", H5P_DEFAULT), 0);
  EXPECT_LE(H5Aexists(file, "depth"), 0);
  EXPECT_EQ(scale_name(file, "v", 1), "y");
  const io::RunFileReader reader(path);
  EXPECT_EQ(reader.depth(), 1);
  EXPECT_EQ(reader.read_image("v", 1), image_values(meta.problem.grid, 1));
  EXPECT_THROW(reader.read_slice("v", 1, 0, 0), InvalidInput);
  const std::string xmf = read_text(dir_ / "plane.xmf");
  EXPECT_NE(xmf.find("Dimensions=\"1 5 6\""), std::string::npos);
}

TEST_F(VolumeFileTest, TheCompanionIsA3DCoRectMeshOfEachVolumeInOnePiece) {
  const auto meta = volume_meta(4, 5, 6, 3);
  const fs::path path = dir_ / "volume.h5";
  {
    io::RunFileWriter writer(path, meta, false);
    write_images(writer, meta.problem.grid, 0, 3, meta.steps_per_image);
    writer.finish("complete");
  }
  const std::string xmf = read_text(dir_ / "volume.xmf");
  EXPECT_NE(xmf.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"4 5 6\""), std::string::npos);
  EXPECT_NE(xmf.find("<DataItem Dimensions=\"3\" Format=\"XML\">0 4 0</DataItem>"),
            std::string::npos);
  EXPECT_NE(xmf.find("<DataItem Dimensions=\"4 5 6\" NumberType=\"Float\" Precision=\"8\""),
            std::string::npos);
  const auto offsets = seeks(xmf);
  ASSERT_EQ(offsets.size(), 3u);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_EQ(bytes_at(path, offsets[i], 120),
              image_values(meta.problem.grid, static_cast<std::int64_t>(i)))
        << "image " << i;
  }
  // The companion made afresh from the file (grayscott repair) says the same.
  fs::remove(dir_ / "volume.xmf");
  io::write_xdmf(path, io::read_run_state(path).meta, 3);
  EXPECT_EQ(read_text(dir_ / "volume.xmf"), xmf);
}

TEST_F(VolumeFileTest, AContinuedVolumeEqualsAnUninterruptedOne) {
  const auto meta = volume_meta(3, 4, 8, 4);
  const fs::path whole = dir_ / "whole.h5", continued = dir_ / "continued.h5";
  {
    io::RunFileWriter writer(whole, meta, false);
    write_images(writer, meta.problem.grid, 0, 4, meta.steps_per_image);
    writer.finish("complete");
  }
  {
    io::RunFileWriter writer(continued, meta, false);
    write_images(writer, meta.problem.grid, 0, 2, meta.steps_per_image);
    const auto u = image_values(meta.problem.grid, 1, -1), v = image_values(meta.problem.grid, 1);
    writer.save_checkpoint(2, u.data(), v.data());
    writer.finish("interrupted by SIGTERM after image 2");
  }
  const io::RunFileState state = io::read_run_state(continued);
  ASSERT_EQ(state.checkpoint_images, 2);
  std::vector<double> u, v;
  io::read_checkpoint<double>(continued, 0, 0, 0, 0, u, v);
  EXPECT_EQ(u.size(), static_cast<std::size_t>(meta.problem.grid.cells()));
  {
    io::RunFileWriter writer(continued, state.meta, io::RunFileWriter::Continue{2, state.identity});
    write_images(writer, meta.problem.grid, 2, 4, meta.steps_per_image);
    writer.finish("complete");
  }
  const io::RunFileReader a(whole), b(continued);
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(a.read_image("v", i), b.read_image("v", i));
  EXPECT_EQ(a.read_int64("step"), b.read_int64("step"));
  const auto offsets = seeks(read_text(dir_ / "continued.xmf"));
  ASSERT_EQ(offsets.size(), 4u);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_EQ(bytes_at(continued, offsets[i], 96),
              image_values(meta.problem.grid, static_cast<std::int64_t>(i)));
  }
}

TEST_F(VolumeFileTest, AKilledWritersVolumeIsRepaired) {
  const auto meta = volume_meta(4, 4, 4, 5);
  const fs::path path = dir_ / "killed.h5";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The writer ends without closing the file, as kill -9 leaves it.
    try {
      io::RunFileWriter writer(path, meta, false);
      write_images(writer, meta.problem.grid, 0, 2, meta.steps_per_image);
      writer.flush();
      ::_exit(0);  // before the writer closes the file
    } catch (...) {
      ::_exit(3);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(io::inspect_file(path).needs_repair());
  const io::RepairOutcome outcome = io::repair_file(path);
  const io::FileReport after = io::inspect_file(path);
  EXPECT_FALSE(after.needs_repair());
  EXPECT_EQ(after.problem.grid.depth, 4);
  EXPECT_EQ(outcome.images, 2);
  const io::RunFileReader reader(path);
  EXPECT_EQ(reader.read_image("v", 1), image_values(meta.problem.grid, 1));
  EXPECT_EQ(seeks(read_text(dir_ / "killed.xmf")).size(), 2u);
}

TEST_F(VolumeFileTest, PicturesOfAVolumeAreASliceOrTheLargestAlongZ) {
  const auto meta = volume_meta(4, 5, 6, 2);
  const fs::path path = dir_ / "volume.h5";
  {
    io::RunFileWriter writer(path, meta, false);
    write_images(writer, meta.problem.grid, 0, 2, meta.steps_per_image);
    writer.finish("complete");
  }
  io::RenderOptions options;
  options.scale = 1;
  options.lo = 0, options.hi = 2;
  const auto render = [&](const std::string& folder, std::optional<io::VolumeView> view) {
    options.out_dir = dir_ / folder;
    options.volume = view;
    const auto written = io::render_run(path, options);
    EXPECT_EQ(written.size(), 2u);
    return written.empty() ? Png{} : png_size(written.back());
  };
  const Png middle = render("middle", std::nullopt);
  EXPECT_EQ(middle.width, 6u);
  EXPECT_EQ(middle.height, 5u);
  const Png across_y = render("y", io::parse_slice("y=1"));
  EXPECT_EQ(across_y.width, 6u);
  EXPECT_EQ(across_y.height, 4u);
  const Png across_x = render("x", io::parse_slice("x=mid"));
  EXPECT_EQ(across_x.width, 5u);
  EXPECT_EQ(across_x.height, 4u);
  const Png largest = render("max", io::parse_projection("max"));
  EXPECT_EQ(largest.width, 6u);
  EXPECT_EQ(largest.height, 5u);
  options.out_dir = dir_ / "out";
  options.volume = io::parse_slice("z=4");
  EXPECT_THROW(io::render_run(path, options), InvalidInput);
  EXPECT_THROW(io::parse_slice("w=1"), InvalidInput);
  EXPECT_THROW(io::parse_slice("z=-1"), InvalidInput);
  EXPECT_THROW(io::parse_projection("mean"), InvalidInput);

  // A plane's pictures take no view of a volume.
  const auto plane = volume_meta(1, 5, 6, 1);
  {
    io::RunFileWriter writer(dir_ / "plane.h5", plane, false);
    write_images(writer, plane.problem.grid, 0, 1, plane.steps_per_image);
    writer.finish("complete");
  }
  options.volume = io::parse_projection("max");
  EXPECT_THROW(io::render_run(dir_ / "plane.h5", options), InvalidInput);
}
