// The run file contract (docs/file-format.md), read back after real runs of the run driver.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "engine/cpu/cpu_engine.hpp"
#include "io/files/direct_writes.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/memory.hpp"
#include "io/files/output_path.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"
#include "pipeline/run.hpp"
#include "pipeline/state_memory.hpp"
#include "scratch_dir.hpp"

using namespace grayscott;
namespace fs = std::filesystem;

namespace {

class RunFileTest : public ::testing::Test {
 protected:
  pipeline::RunRequest small_request(const std::string& name) const {
    pipeline::RunRequest r;
    r.problem.grid = {24, 40};
    r.images = 5;
    r.steps_per_image = 7;
    r.output = dir_ / name;
    r.quiet = true;
    r.engine.backend = "cpu";
    return r;
  }

  grayscott::testing::ScratchDir dir_{"run_file"};
};

// The images the engine itself produces, independently of the driver and the file.
template <class Real>
std::vector<std::vector<Real>> engine_images(const pipeline::RunRequest& r, bool want_u) {
  const Parameters params[1] = {r.problem.params};
  cpu::CpuEngine<Real> engine(r.problem, params, r.engine);
  const auto cells = static_cast<std::size_t>(r.problem.grid.cells());
  std::vector<Real> u(cells), v(cells);
  fill_seed<Real>(r.problem.grid, u, v);
  engine.load(0, u, v);
  std::vector<std::vector<Real>> images;
  for (std::int64_t i = 0; i < r.images; ++i) {
    engine.advance(r.steps_per_image);
    engine.capture({true, true});
    engine.read_captured(0, u.data(), v.data());
    images.push_back(want_u ? u : v);
  }
  return images;
}

}  // namespace

TEST_F(RunFileTest, LayoutAttributesAndValues) {
  auto r = small_request("run.h5");
  r.problem.params.feed = 0.03;
  r.problem.boundary = Boundary::Periodic;
  r.fields = {true, true};
  const auto summary = pipeline::execute_run(r);
  EXPECT_TRUE(summary.completed);
  EXPECT_EQ(summary.images_written, 5);
  EXPECT_EQ(summary.backend, "cpu");

  io::RunFileReader file(r.output);
  EXPECT_EQ(file.shape("v"), (std::vector<std::int64_t>{5, 24, 40}));
  EXPECT_EQ(file.shape("u"), (std::vector<std::int64_t>{5, 24, 40}));
  EXPECT_EQ(file.shape("matrix"), (std::vector<std::int64_t>{5, 24, 40}));
  EXPECT_EQ(file.read_int64("step"), (std::vector<std::int64_t>{7, 14, 21, 28, 35}));
  EXPECT_EQ(file.attribute_int64("rows"), 24);
  EXPECT_EQ(file.attribute_int64("cols"), 40);
  EXPECT_EQ(file.attribute_int64("images"), 5);
  EXPECT_EQ(file.attribute_int64("steps_per_image"), 7);
  EXPECT_DOUBLE_EQ(file.attribute_double("feed"), 0.03);
  EXPECT_DOUBLE_EQ(file.attribute_double("kill"), 0.054);
  EXPECT_DOUBLE_EQ(file.attribute_double("du"), 0.1);
  EXPECT_DOUBLE_EQ(file.attribute_double("dv"), 0.05);
  EXPECT_DOUBLE_EQ(file.attribute_double("dt"), 1.0);
  EXPECT_EQ(file.attribute_doubles("stencil"),
            (std::vector<double>{0.25, 0.5, 0.25, 0.5, 0, 0.5, 0.25, 0.5, 0.25}));
  EXPECT_EQ(file.attribute_string("boundary"), "periodic");
  EXPECT_EQ(file.attribute_string("precision"), "single");
  EXPECT_EQ(file.attribute_string("backend"), "cpu");
  EXPECT_EQ(file.attribute_string("status"), "complete");
  EXPECT_FALSE(file.attribute_string("version").empty());

  const auto expected_v = engine_images<float>(r, false);
  const auto expected_u = engine_images<float>(r, true);
  for (std::int64_t i = 0; i < 5; ++i) {
    const auto v = file.read_image("v", i), m = file.read_image("matrix", i),
               u = file.read_image("u", i);
    ASSERT_EQ(v, m) << "/matrix must be /v";
    for (std::size_t c = 0; c < v.size(); ++c) {
      ASSERT_EQ(static_cast<float>(v[c]), expected_v[i][c]) << "image " << i << " cell " << c;
      ASSERT_EQ(static_cast<float>(u[c]), expected_u[i][c]) << "image " << i << " cell " << c;
    }
  }
}

TEST_F(RunFileTest, MatrixIsAHardLinkAndTypesFollowPrecision) {
  auto r = small_request("double.h5");
  r.problem.precision = Precision::Double;
  pipeline::execute_run(r);
  const hid_t file = H5Fopen(r.output.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5O_info_t v_info, m_info;  // HDF5 1.10 API (Debian 12)
  ASSERT_GE(H5Oget_info_by_name2(file, "v", &v_info, H5O_INFO_BASIC, H5P_DEFAULT), 0);
  ASSERT_GE(H5Oget_info_by_name2(file, "matrix", &m_info, H5O_INFO_BASIC, H5P_DEFAULT), 0);
  EXPECT_EQ(v_info.addr, m_info.addr) << "/matrix and /v must be the same object";
  EXPECT_EQ(v_info.rc, 2u) << "two hard links to /v";
  const hid_t dataset = H5Dopen2(file, "v", H5P_DEFAULT);
  const hid_t type = H5Dget_type(dataset);
  EXPECT_GT(H5Tequal(type, H5T_IEEE_F64LE), 0);
  const hid_t plist = H5Dget_create_plist(dataset);
  hsize_t chunk[3] = {};
  EXPECT_EQ(H5Pget_chunk(plist, 3, chunk), 3);
  EXPECT_EQ(chunk[0], 1u);
  EXPECT_EQ(chunk[1], 24u);
  EXPECT_EQ(chunk[2], 40u);
  EXPECT_FALSE(H5Lexists(file, "u", H5P_DEFAULT) > 0) << "u is written only on request";
  H5Pclose(plist);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
}

namespace {
// Where the first chunk of each of the first `images` images of a dataset lies.
struct ChunkPlace {
  haddr_t address;
  hsize_t bytes;
};
std::vector<ChunkPlace> image_chunks(const fs::path& path, const char* dataset, hsize_t images) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t data = H5Dopen2(file, dataset, H5P_DEFAULT);
  std::vector<ChunkPlace> places;
  for (hsize_t i = 0; i < images; ++i) {
    const hsize_t at[3] = {i, 0, 0};
    unsigned filters = 0;
    ChunkPlace place{HADDR_UNDEF, 0};
    H5Dget_chunk_info_by_coord(data, at, &filters, &place.address, &place.bytes);
    places.push_back(place);
  }
  H5Dclose(data);
  H5Fclose(file);
  return places;
}

}  // namespace

TEST_F(RunFileTest, XdmfDescribesEveryImage) {
  auto r = small_request("series.h5");
  r.fields = {true, true};
  pipeline::execute_run(r);
  std::ifstream in(dir_ / "series.xmf");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string xmf = text.str();
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = xmf.find(needle); pos != std::string::npos; pos = xmf.find(needle, pos + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("GridType=\"Uniform\""), 5u);
  // Each field of each image by where its bytes lie in the file (ParaView's Xdmf3 readers read no
  // HDF5 hyperslab): little-endian float32 from the image's chunk on.
  EXPECT_EQ(count("<Attribute Name=\"v\""), 5u);
  EXPECT_EQ(count("<Attribute Name=\"u\""), 5u);
  EXPECT_EQ(count("NumberType=\"Float\" Precision=\"4\" Format=\"Binary\" Endian=\"Little\""),
            10u);
  EXPECT_EQ(count(">series.h5</DataItem>"), 10u);
  EXPECT_NE(xmf.find("CollectionType=\"Temporal\""), std::string::npos);
  // One image is a 1 x rows x cols mesh: the XY plane, row 0 at the top (y from rows - 1 down).
  EXPECT_EQ(count("TopologyType=\"3DCoRectMesh\" Dimensions=\"1 24 40\""), 5u);
  EXPECT_EQ(count(">0 23 0</DataItem>"), 5u);
  EXPECT_EQ(count(">1 -1 1</DataItem>"), 5u);
  EXPECT_NE(xmf.find("<Time Value=\"35\"/>"), std::string::npos);
  std::size_t seeks = 0;
  for (const char* field : {"u", "v"}) {
    for (const auto& chunk : image_chunks(dir_ / "series.h5", field, 5)) {
      const std::string seek = "Seek=\"" + std::to_string(chunk.address) + "\"";
      EXPECT_EQ(count(seek), 1u) << field << ": no image at " << seek;
      seeks += count(seek);
    }
  }
  EXPECT_EQ(seeks, 10u);
}

TEST_F(RunFileTest, NonFiniteValuesStopTheRunAndKeepEarlierImages) {
  auto r = small_request("blowup.h5");
  // u v^2 = 1e36 fits float32 on the first step; the second overflows it.
  r.initial.values = ShapeValues{1e12, 1e12};
  r.steps_per_image = 1;
  const auto summary = pipeline::execute_run(r);
  EXPECT_FALSE(summary.completed);
  EXPECT_EQ(summary.images_written, 1);
  EXPECT_NE(summary.status.find("non-finite at image 1"), std::string::npos) << summary.status;
  io::RunFileReader file(r.output);
  EXPECT_EQ(file.shape("v")[0], 1);
  EXPECT_EQ(file.read_int64("step"), (std::vector<std::int64_t>{1}));
  EXPECT_NE(file.attribute_string("status").find("non-finite"), std::string::npos);
  for (double x : file.read_image("v", 0)) ASSERT_TRUE(std::isfinite(x));
}

TEST_F(RunFileTest, ExistingOutputIsNeverOverwrittenWithoutForce) {
  auto r = small_request("keep.h5");
  { std::ofstream(r.output) << "precious"; }
  EXPECT_THROW(pipeline::execute_run(r), InvalidInput);
  std::ifstream in(r.output);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  r.overwrite = true;
  EXPECT_TRUE(pipeline::execute_run(r).completed);
}

TEST_F(RunFileTest, OutputProblemsAreFoundBeforeComputing) {
  auto r = small_request("missing/run.h5");
  EXPECT_THROW(pipeline::execute_run(r), InvalidInput);
  r.output = dir_;  // a directory
  EXPECT_THROW(pipeline::execute_run(r), InvalidInput);
  r = small_request("huge.h5");
  r.problem.grid = {4096, 4096};  // a state that fits in memory (256 MiB)
  r.images = 1 << 20;
  try {
    pipeline::execute_run(r);  // would need 64 TiB of disk: refused before any allocation
    FAIL() << "accepted an output larger than the disk";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("output needs"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "huge.h5"));
  // A state larger than the memory: refused by the driver (whatever front end made the request),
  // before the output is claimed.
  r.problem.grid = {1 << 20, 1 << 20};
  r.images = 1;
  try {
    pipeline::execute_run(r);
    FAIL() << "accepted a state of 16 TiB";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("the state of 1048576x1048576 cells (single precision) "
                                         "needs 16.0 TiB of host memory"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "huge.h5"));
}

// A run holds two images on their way to the file beside its state: a grid whose state fits but
// whose state and images do not is refused before anything is allocated (it was OOM-killed after
// its first image), and a Simulation's run, whose state is allocated already, checks its images.
// The checks alone are called: the sizes are this machine's memory, never allocated.
TEST(StateMemory, TheImagesOnTheirWayToTheFileAreCounted) {
  const std::uint64_t available = io::available_memory();
  if (available == UINT64_MAX || available < (std::uint64_t{1} << 26)) {
    GTEST_SKIP() << "this machine's available memory cannot be told";
  }
  const auto square_of = [](double cells) {
    const auto side = static_cast<std::int64_t>(std::sqrt(cells));
    Problem p;
    p.grid = {side, side};
    return p;
  };
  EngineOptions cpu;
  cpu.backend = "cpu";
  const auto refusal = [&](const std::function<void()>& check) -> std::string {
    try {
      check();
    } catch (const OutOfMemory& e) {
      return e.what();
    }
    return "accepted";
  };
  // Two images of the fields carried, one of them a checkpoint's (u and v): v alone is 3 fields,
  // u and v 4; the statistics' previous v one more; on_image's copy of the field not carried one.
  const int images_of_v = pipeline::held_images({false, true}, false);
  EXPECT_EQ(images_of_v, 3);
  EXPECT_EQ(pipeline::held_images({true, true}, false), 4);
  EXPECT_EQ(pipeline::held_images({true, true}, true), 5);
  EXPECT_EQ(pipeline::held_images({false, true}, false, true), 4) << "on_image's copy of u";
  EXPECT_EQ(pipeline::held_images({true, true}, false, true), 4)
      << "no copy: the images carry both";
  // Float32, v written: the state 16 bytes a cell, with its images 28: at 20 bytes a cell of the
  // memory, the state takes 0.8 of it and the whole 1.4.
  const Problem between = square_of(static_cast<double>(available) / 20);
  EXPECT_EQ(refusal([&] { pipeline::check_state_fits(between, 1, cpu); }), "accepted")
      << "the state alone fits";
  EXPECT_NE(refusal([&] {
              pipeline::check_state_fits(between, 1, cpu, 0, images_of_v);
            }).find("cells (single precision) and the images on their way to the file need"),
            std::string::npos);
  // The blocks of 4 ranks on one node, each of a quarter of that grid: the same sums, said of the
  // blocks and the ranks.
  const Problem quarter = square_of(static_cast<double>(available) / 80);
  EXPECT_EQ(refusal([&] { pipeline::check_state_fits(quarter, 1, cpu, 4); }), "accepted");
  EXPECT_NE(refusal([&] { pipeline::check_state_fits(quarter, 1, cpu, 4, images_of_v); })
                .find("the states of the blocks of 4 ranks on this node, each of up to " +
                      quarter.grid.text() +
                      " cells (single precision), and the images on their way to the file need"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              pipeline::check_state_fits(square_of(static_cast<double>(available) / 8), 1, cpu, 4);
            }).find(" cells (single precision), need "),
            std::string::npos);
  // A state allocated already (a Simulation's), or on a device: its images alone, of v 12 bytes a
  // cell, against the host's memory; over ranks, the node's blocks.
  EXPECT_EQ(refusal([&] {
              pipeline::check_images_fit(square_of(static_cast<double>(available) / 24), 1,
                                         images_of_v);
            }),
            "accepted");
  EXPECT_NE(refusal([&] {
              pipeline::check_images_fit(square_of(static_cast<double>(available) / 8), 1,
                                         images_of_v);
            }).find("the images of "),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              pipeline::check_images_fit(square_of(static_cast<double>(available) / 16), 1,
                                         images_of_v, 2);
            }).find("the images of the blocks of 2 ranks on this node, each of up to "),
            std::string::npos);
}

// An empty name or a folder is named as such, with or without --force, before the other checks.
TEST_F(RunFileTest, OutputThatIsNoFileSaysSo) {
  const auto message = [](const fs::path& path, bool overwrite) -> std::string {
    try {
      io::check_output_path(path, overwrite, 0);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "accepted";
  };
  for (bool overwrite : {false, true}) {
    EXPECT_EQ(message("", overwrite), "output: the file name is empty");
    EXPECT_EQ(message(dir_, overwrite), "output " + dir_.string() + " is a directory, not a file");
  }
}

namespace {
// This process's peak resident memory (VmHWM) since the last reset, in bytes.
std::int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // kB
  }
  return -1;
}
// Resets the peak to the current resident memory (Linux 4.0 and later).
bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}
}  // namespace

TEST_F(RunFileTest, ImagesAreBoundedInMemoryWhateverTheirNumber) {
  // 1500 images of u and v on 128x128 are 190 MiB of pixels: the driver's queue of a few image
  // buffers must keep the peak resident memory where 15 images put it, to within 16 MiB (the
  // HDF5 library's caches, the allocator's slack), whatever their number.
  auto run = [&](std::int64_t images, const std::string& name) {
    auto r = small_request(name);
    r.problem.grid = {128, 128};
    r.images = images;
    r.steps_per_image = 1;
    r.fields = {true, true};
    EXPECT_TRUE(reset_peak_rss()) << "cannot reset the peak RSS through /proc/self/clear_refs";
    const std::int64_t before = peak_rss_bytes();
    const auto summary = pipeline::execute_run(r);
    EXPECT_EQ(summary.images_written, images);
    const std::int64_t peak = peak_rss_bytes();
    EXPECT_GT(before, 0);
    io::RunFileReader file(r.output);
    EXPECT_EQ(file.shape("v")[0], images);
    EXPECT_EQ(file.read_int64("step").back(), images);
    return peak;
  };
  run(15, "warm.h5");  // the libraries' first allocations, out of the way
  const std::int64_t few = run(15, "few.h5");
  const std::int64_t many = run(1500, "many.h5");
  const double pixels = 1500.0 * 128 * 128 * 2 * sizeof(float);
  EXPECT_GT(pixels, 190e6);
  EXPECT_LE(many, few + 16 * 1024 * 1024)
      << "peak RSS " << many / 1048576 << " MiB for 1500 images, " << few / 1048576
      << " MiB for 15";
}

// What a killed MPI job can leave, made on purpose: a dataset whose extent runs past its placed
// chunks (here: a chunk placed at its first write, two of four written). A resume over MPI first
// places the rest (parallel HDF5 writes only into placed chunks); the file must read the same.
TEST_F(RunFileTest, UnplacedChunksArePlacedWithTheFillValueAndTheRestKept) {
  const fs::path path = dir_ / "torn.h5";
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[3] = {4, 2, 3}, chunk[3] = {1, 2, 3};
    const hid_t space = H5Screate_simple(3, dims, nullptr);
    const hid_t props = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(props, 3, chunk);
    H5Pset_alloc_time(props, H5D_ALLOC_TIME_INCR);
    const float fill = -1.5f;
    H5Pset_fill_value(props, H5T_NATIVE_FLOAT, &fill);
    const hid_t v = H5Dcreate2(file, "v", H5T_IEEE_F32LE, space, H5P_DEFAULT, props, H5P_DEFAULT);
    const float image[6] = {1, 2, 3, 4, 5, 6};
    for (hsize_t i : {0, 2}) {
      const hid_t part = H5Scopy(space);
      const hsize_t start[3] = {i, 0, 0}, count[3] = {1, 2, 3};
      H5Sselect_hyperslab(part, H5S_SELECT_SET, start, nullptr, count, nullptr);
      const hid_t memory = H5Screate_simple(3, count, nullptr);
      ASSERT_GE(H5Dwrite(v, H5T_NATIVE_FLOAT, memory, part, H5P_DEFAULT, image), 0);
      H5Sclose(memory);
      H5Sclose(part);
    }
    H5Dclose(v);
    H5Pclose(props);
    H5Sclose(space);
    H5Fclose(file);
  }
  EXPECT_EQ(io::RunFileReader(path).unplaced_chunks("v"), 2);
  const char* const datasets[] = {"v", "no_such_dataset"};
  io::h5::place_unwritten_chunks(path.string(), datasets);
  io::RunFileReader file(path);
  EXPECT_EQ(file.unplaced_chunks("v"), 0);
  for (std::int64_t i = 0; i < 4; ++i) {
    const std::vector<double> got = file.read_image("v", i);
    const std::vector<double> expected =
        i % 2 == 0 ? std::vector<double>{1, 2, 3, 4, 5, 6} : std::vector<double>(6, -1.5);
    EXPECT_EQ(got, expected) << "image " << i;
  }
}

// Room for every image is reserved when the file is created: writing an image then changes only
// the datasets' sizes, never the file's end (the flaw a rank killed inside a flush exposed, see
// docs/file-format.md), and the datasets' largest size is the run's image count.
TEST_F(RunFileTest, RoomForEveryImageIsReservedAtCreation) {
  io::RunMetadata meta;
  meta.problem.grid = {24, 40};
  meta.images = 6;
  meta.steps_per_image = 3;
  meta.fields = {true, true};
  meta.backend = "cpu";
  meta.version = "test";
  const fs::path path = dir_ / "reserved.h5";
  const auto image_bytes = static_cast<std::uintmax_t>(24 * 40 * sizeof(float));
  std::vector<float> u(24 * 40, 0.25f), v(24 * 40, 0.5f);
  std::uintmax_t size_before_images = 0;
  {
    io::RunFileWriter writer(path, meta, false);
    writer.flush();
    size_before_images = fs::file_size(path);
    EXPECT_GE(size_before_images, 2 * 6 * image_bytes) << "u and v, six images each";
    for (int i = 1; i <= 6; ++i) {
      writer.append(i * 3, u.data(), v.data());
      writer.flush();
      EXPECT_EQ(fs::file_size(path), size_before_images) << "after image " << i;
    }
    writer.finish("complete");
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* name : {"v", "u", "step", "time"}) {
    const hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(dataset);
    hsize_t dims[3] = {0, 0, 0}, most[3] = {0, 0, 0};
    H5Sget_simple_extent_dims(space, dims, most);
    EXPECT_EQ(dims[0], 6u) << name;
    EXPECT_EQ(most[0], 6u) << name << ": largest size";
    H5Sclose(space);
    H5Dclose(dataset);
  }
  H5Fclose(file);
  EXPECT_EQ(io::RunFileReader(path).read_int64("step"),
            (std::vector<std::int64_t>{3, 6, 9, 12, 15, 18}));
}

// --- Images straight to the disk (io/files/direct_writes.hpp)
// --------------------------------------------

namespace {

// Whether direct writes into `dir` reach the disk past the page cache: the file system takes them
// (not so on every one) and is not a tmpfs (which takes them but keeps every page in memory).
bool writes_past_the_cache(const fs::path& dir) {
  struct statfs info {};
  constexpr long tmpfs_magic = 0x01021994;
  if (::statfs(dir.c_str(), &info) != 0 || info.f_type == tmpfs_magic) return false;
  const fs::path probe = dir / "probe";
  std::ofstream(probe).put('x');
  const bool usable = io::DirectWrites(probe).usable();
  fs::remove(probe);
  return usable;
}

// Pages of [offset, offset + bytes) of the file that the page cache holds.
std::size_t cached_pages(const fs::path& path, std::uint64_t offset, std::size_t bytes) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const int fd = ::open(path.c_str(), O_RDONLY);
  const std::uint64_t begin = offset / page * page;
  const std::size_t length = static_cast<std::size_t>(offset + bytes - begin);
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(begin));
  std::vector<unsigned char> resident((length + page - 1) / page);
  ::mincore(map, length, resident.data());
  ::munmap(map, length);
  ::close(fd);
  std::size_t held = 0;
  for (unsigned char r : resident) held += r & 1;
  return held;
}

}  // namespace

namespace {

// The bytes of [offset, offset + bytes) of a file.
std::string file_bytes(const fs::path& path, std::uint64_t offset, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out(bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(bytes));
  return out;
}

// The engine's images of v, as the reader returns them (float64).
template <class Real>
std::vector<std::vector<double>> engine_images_of_v(const pipeline::RunRequest& r) {
  std::vector<std::vector<double>> out;
  for (const auto& image : engine_images<Real>(r, false))
    out.emplace_back(image.begin(), image.end());
  return out;
}

}  // namespace

// An image HDF5 writes (small, or where direct writes are off) is in the file once its write
// returns, before any flush: the file is written under SWMR, where HDF5 1.10 would hold what
// H5Dwrite writes in memory until the next flush, and a full disk would then lose every image
// since the last one. Read past HDF5 (the file's own bytes at the chunks' places), for a plane and
// a volume, u and v.
TEST_F(RunFileTest, EachImageIsInTheFileWhenItsWriteReturns) {
  ::setenv("GRAYSCOTT_DIRECT_IO", "0", 1);
  for (const std::int64_t depth : {1, 3}) {
    io::RunMetadata meta;
    meta.problem.grid = {24, 40, depth};
    if (depth > 1) meta.problem.stencil = Stencil::seven_point();
    meta.images = 4;
    meta.steps_per_image = 3;
    meta.fields = {true, true};
    meta.backend = "cpu";
    meta.version = "test";
    const fs::path path = dir_ / ("unflushed-" + std::to_string(depth) + ".h5");
    const std::size_t cells = 24 * 40 * static_cast<std::size_t>(depth);
    auto image = [&](int i, float base) {
      std::vector<float> values(cells);
      for (std::size_t c = 0; c < cells; ++c) values[c] = base + static_cast<float>(i * 1000 + c);
      return values;
    };
    std::string written;  // the file's bytes after the last write, before any flush
    {
      io::RunFileWriter writer(path, meta, false);
      for (int i = 0; i < 3; ++i)
        writer.append(i * 3, image(i, 0.25f).data(), image(i, 0.5f).data());
      written = file_bytes(path, 0, static_cast<std::size_t>(fs::file_size(path)));
      writer.finish("complete");
    }
    for (const auto& [name, base] : {std::pair{"u", 0.25f}, std::pair{"v", 0.5f}}) {
      const std::size_t plane = 24 * 40;
      for (int i = 0; i < 3; ++i) {
        const std::vector<float> expected = image(i, base);
        const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        const hid_t data = H5Dopen2(file, name, H5P_DEFAULT);
        for (std::int64_t z = 0; z < depth; ++z) {
          const hsize_t at[4] = {static_cast<hsize_t>(i), static_cast<hsize_t>(z), 0, 0};
          const hsize_t at_plane[3] = {static_cast<hsize_t>(i), 0, 0};
          unsigned filters = 0;
          haddr_t address = HADDR_UNDEF;
          hsize_t bytes = 0;
          H5Dget_chunk_info_by_coord(data, depth > 1 ? at : at_plane, &filters, &address, &bytes);
          ASSERT_EQ(bytes, plane * sizeof(float)) << name << " image " << i << " plane " << z;
          ASSERT_LE(address + bytes, written.size()) << name << " image " << i << " plane " << z;
          EXPECT_EQ(std::memcmp(written.data() + address, expected.data() + z * plane, bytes), 0)
              << name << " image " << i << " plane " << z << " (depth " << depth
              << ") was not in the file when its write returned";
        }
        H5Dclose(data);
        H5Fclose(file);
      }
    }
  }
  ::unsetenv("GRAYSCOTT_DIRECT_IO");
}

// A single process's images (whole chunks, aligned as the disk asks) go from their buffers
// straight to the disk, never into the page cache, and read back as the engine computed them. The
// same run with GRAYSCOTT_DIRECT_IO=0 leaves its images in the page cache (the check can tell),
// and HDF5 then put the same bytes at the same places.
TEST_F(RunFileTest, LargeImagesGoStraightToTheDiskAndReadBackEqual) {
  if (!writes_past_the_cache(dir_)) {
    GTEST_SKIP() << dir_.string()
                 << ": its file system keeps direct writes in the page cache or refuses them";
  }
  for (const Precision precision : {Precision::Single, Precision::Double}) {
    std::vector<ChunkPlace> places[2];
    fs::path paths[2];
    for (const bool direct : {true, false}) {
      auto r = small_request(std::string(direct ? "direct" : "cached") +
                             (precision == Precision::Single ? "32.h5" : "64.h5"));
      r.problem.grid = {128, 256};  // 128 KiB a float32 image: a multiple of any disk's block
      r.problem.precision = precision;
      r.images = 4;
      if (!direct) ::setenv("GRAYSCOTT_DIRECT_IO", "0", 1);
      const auto summary = pipeline::execute_run(r);
      ::unsetenv("GRAYSCOTT_DIRECT_IO");
      ASSERT_TRUE(summary.completed);
      const auto chunks = image_chunks(r.output, "v", 4);
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        ASSERT_NE(chunks[i].address, HADDR_UNDEF);
        EXPECT_EQ(chunks[i].address % 4096, 0u) << "image " << i << " starts on a 4 KiB boundary";
        const std::size_t held = cached_pages(r.output, chunks[i].address, chunks[i].bytes);
        if (direct)
          EXPECT_EQ(held, 0u) << "image " << i << " went through the page cache";
        else
          EXPECT_GT(held, 0u) << "image " << i << ": the page cache check sees no buffered write";
      }
      io::RunFileReader file(r.output);
      const auto expected = precision == Precision::Single ? engine_images_of_v<float>(r)
                                                           : engine_images_of_v<double>(r);
      for (std::int64_t i = 0; i < 4; ++i) {
        EXPECT_EQ(file.read_image("v", i), expected[static_cast<std::size_t>(i)])
            << "image " << i << (direct ? " written directly" : " written through the cache");
      }
      places[direct ? 0 : 1] = chunks;
      paths[direct ? 0 : 1] = r.output;
    }
    for (std::size_t i = 0; i < places[0].size(); ++i) {
      EXPECT_EQ(places[0][i].address, places[1][i].address) << "image " << i;
      EXPECT_TRUE(file_bytes(paths[0], places[0][i].address, places[0][i].bytes) ==
                  file_bytes(paths[1], places[1][i].address, places[1][i].bytes))
          << "image " << i << ": not the bytes HDF5 writes there";
    }
  }
}

// A volume's image, its planes one chunk each and each too small to be written directly on its
// own (16x16 float32: 1 KiB), lies in one piece of the file and goes to the disk in one direct
// write: none of it in the page cache, read back as the same run written through the cache.
// (Written plane by plane, 100,000 planes of an image took 30,000 writes and four times as long as
// through the cache.)
TEST_F(RunFileTest, AVolumesPlanesGoToTheDiskInOneWrite) {
  if (!writes_past_the_cache(dir_)) {
    GTEST_SKIP() << dir_.string()
                 << ": its file system keeps direct writes in the page cache or refuses them";
  }
  auto r = small_request("volume-direct.h5");
  r.problem.grid = {16, 16, 256};  // rows, cols, depth: 256 KiB an image
  r.problem.stencil = Stencil::seven_point();
  r.images = 3;
  auto cached = r;
  cached.output = dir_ / "volume-cached.h5";
  ::setenv("GRAYSCOTT_DIRECT_IO", "0", 1);
  ASSERT_TRUE(pipeline::execute_run(cached).completed);
  ::unsetenv("GRAYSCOTT_DIRECT_IO");
  const auto summary = pipeline::execute_run(r);
  ASSERT_TRUE(summary.completed) << summary.status;
  const hid_t file = H5Fopen(r.output.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t data = H5Dopen2(file, "v", H5P_DEFAULT);
  const std::size_t plane_bytes = 16 * 16 * sizeof(float), image_bytes = 256 * plane_bytes;
  for (hsize_t i = 0; i < 3; ++i) {
    haddr_t first = HADDR_UNDEF;
    for (hsize_t plane = 0; plane < 256; ++plane) {
      const hsize_t at[4] = {i, plane, 0, 0};
      unsigned filters = 0;
      haddr_t address = HADDR_UNDEF;
      hsize_t bytes = 0;
      H5Dget_chunk_info_by_coord(data, at, &filters, &address, &bytes);
      if (plane == 0) first = address;
      ASSERT_EQ(address, first + plane * plane_bytes) << "image " << i << ", plane " << plane;
    }
    EXPECT_EQ(cached_pages(r.output, first, image_bytes), 0u)
        << "image " << i << " went through the page cache";
  }
  H5Dclose(data);
  H5Fclose(file);
  io::RunFileReader direct_file(r.output), cached_file(cached.output);
  for (std::int64_t i = 0; i < 3; ++i) {
    const auto image = direct_file.read_image("v", i);
    EXPECT_EQ(image, cached_file.read_image("v", i)) << "image " << i;
    EXPECT_GT(*std::max_element(image.begin(), image.end()), 0.0) << "image " << i << " is empty";
  }
}

TEST(DirectWrites, MisalignedBlocksAreLeftToTheCaller) {
  const fs::path path =
      fs::temp_directory_path() / ("grayscott_direct_" + std::to_string(::getpid()));
  std::ofstream(path).put('x');
  io::DirectWrites direct(path);
  if (!direct.usable()) {
    fs::remove(path);
    GTEST_SKIP() << "this file system takes no direct writes";
  }
  const std::size_t a = direct.alignment();
  std::vector<char> memory(8 * a + a, 'g');
  char* aligned = memory.data() + (a - reinterpret_cast<std::uintptr_t>(memory.data()) % a) % a;
  EXPECT_TRUE(direct.accepts(aligned, 4 * a, 2 * a));
  EXPECT_FALSE(direct.accepts(aligned + 1, 4 * a, 2 * a)) << "memory off the boundary";
  EXPECT_FALSE(direct.accepts(aligned, 4 * a - 4, 2 * a)) << "a length that is no whole block";
  EXPECT_FALSE(direct.accepts(aligned, 4 * a, 2 * a + 4)) << "a file offset off the boundary";
  EXPECT_FALSE(direct.write(aligned + 1, 4 * a, 0, "test")) << "declined, nothing written";
  EXPECT_EQ(fs::file_size(path), 1u);
  EXPECT_TRUE(direct.write(aligned, 4 * a, 2 * a, "test"));
  EXPECT_EQ(fs::file_size(path), 6 * a);
  std::ifstream in(path, std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(back.substr(2 * a), std::string(4 * a, 'g'));
  fs::remove(path);

  ::setenv("GRAYSCOTT_DIRECT_IO", "0", 1);
  std::ofstream(path).put('x');
  EXPECT_FALSE(io::DirectWrites(path).usable()) << "GRAYSCOTT_DIRECT_IO=0 turns them off";
  ::unsetenv("GRAYSCOTT_DIRECT_IO");
  fs::remove(path);
}
