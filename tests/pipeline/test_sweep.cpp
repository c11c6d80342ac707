#include <gtest/gtest.h>
#include <hdf5.h>
#include <png.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "engine/registry.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"
#include "io/pictures/atlas.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/text.hpp"
#include "pipeline/run.hpp"
#include "pipeline/sweep.hpp"
#include "requests/value_sets.hpp"
#include "scratch_dir.hpp"

using namespace grayscott;
using namespace grayscott::requests;
using namespace grayscott::pipeline;
namespace fs = std::filesystem;

namespace {

using grayscott::testing::ScratchDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no error)";
}

Problem small_problem(Precision precision = Precision::Single) {
  Problem p;
  p.grid = {24, 20};
  p.params = {0.03, 0.06, 0.2, 0.1, 1.0};
  p.boundary = Boundary::Periodic;
  p.precision = precision;
  return p;
}

SweepRequest small_sweep(const fs::path& output, InitialKind init,
                         std::vector<std::uint64_t> seeds = {0}) {
  SweepRequest r;
  r.problem = small_problem();
  r.members = cross_members({0.022, 0.03, 0.04}, {0.051, 0.06}, seeds);
  r.init.kind = init;
  r.images = 3;
  r.steps_per_image = 40;
  r.fields = {true, true};
  r.engine.backend = "cpu";
  r.output = output;
  r.quiet = true;
  return r;
}

// Every value of a field dataset, as float64.
std::vector<double> read_all(const fs::path& file, const std::string& name) {
  io::RunFileReader reader(file);
  return reader.read_doubles(name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsing

TEST(SweepParsing, RangesIncludeBothEnds) {
  const auto v = parse_value_set("0.010:0.060:6", "feed");
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v.front(), 0.010);
  EXPECT_EQ(v.back(), 0.060);
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(v[i], 0.010 + 0.01 * static_cast<double>(i), 1e-15);
  EXPECT_EQ(parse_value_set("0.05:0.05:1", "kill"), std::vector<double>{0.05});
  EXPECT_EQ(parse_value_set(" 1 : 2 : 2 ", "kill"), (std::vector<double>{1, 2}));
}

TEST(SweepParsing, ListsKeepTheirOrder) {
  EXPECT_EQ(parse_value_set("0.014,0.022", "feed"), (std::vector<double>{0.014, 0.022}));
  EXPECT_EQ(parse_value_set("0.06, 0.045", "kill"), (std::vector<double>{0.06, 0.045}));
  EXPECT_EQ(parse_value_set("0.05", "kill"), std::vector<double>{0.05});
}

TEST(SweepParsing, BadInputGivesOneLineErrors) {
  EXPECT_NE(error_of([] { parse_value_set("0.01:0.06:0", "feed"); }).find("at least 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.01:0.06:-3", "feed"); }).find("at least 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.06:0.01:4", "feed"); }).find("reversed"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.01:abc:4", "feed"); }).find("'abc'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.01:0.02:2.5", "feed"); }).find("whole number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.01:0.02", "feed"); }).find("three parts"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.01:0.02:3:4", "feed"); }).find("three parts"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.01:0.02:1", "feed"); }).find("START = STOP"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.02:0.02:3", "feed"); }).find("count of 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.014,x", "kill"); }).find("'x'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.014,,0.02", "kill"); }).find("empty"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0.014,0.014", "kill"); }).find("twice"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("", "kill"); }).find("no value"), std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("nan,0.1", "kill"); }).find("finite"), std::string::npos);
  EXPECT_NE(error_of([] { parse_value_set("0:1:2000000", "kill"); }).find("exceeds"),
            std::string::npos);
  // Each message names the option and fits one line.
  const std::string e = error_of([] { parse_value_set("0.06:0.01:4", "kill"); });
  EXPECT_EQ(e.rfind("kill:", 0), 0u);
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(SweepParsing, SeedsAndSizes) {
  EXPECT_EQ(parse_seed_list("1,2,3"), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(parse_seed("9223372036854775807"), 9223372036854775807ULL);
  EXPECT_THROW(parse_seed("9223372036854775808"), InvalidInput);
  EXPECT_THROW(parse_seed("-1"), InvalidInput);
  EXPECT_THROW(parse_seed("1.5"), InvalidInput);
  EXPECT_THROW(parse_seed_list("1,1"), InvalidInput);
  EXPECT_THROW(parse_seed_list("1,,2"), InvalidInput);
  EXPECT_EQ(parse_bytes("512M", "m"), 512ull << 20);
  EXPECT_EQ(parse_bytes("4G", "m"), 4ull << 30);
  EXPECT_EQ(parse_bytes("1.5GiB", "m"), 3ull << 29);
  EXPECT_EQ(parse_bytes("64k", "m"), 64ull << 10);
  EXPECT_EQ(parse_bytes("1000", "m"), 1000u);
  for (const char* bad : {"", "0", "-4G", "4Q", "G", "4GG", "nan"}) {
    EXPECT_THROW(parse_bytes(bad, "m"), InvalidInput) << bad;
  }
}

TEST(SweepParsing, CrossingVariesKillFastestThenFeedThenSeed) {
  const auto m = cross_members({1, 2}, {10, 20, 30}, {7, 8});
  ASSERT_EQ(m.size(), 12u);
  EXPECT_EQ(m[0].feed, 1);
  EXPECT_EQ(m[0].kill, 10);
  EXPECT_EQ(m[0].seed, 7u);
  EXPECT_EQ(m[2].kill, 30);
  EXPECT_EQ(m[3].feed, 2);
  EXPECT_EQ(m[3].kill, 10);
  EXPECT_EQ(m[6].seed, 8u);
  EXPECT_EQ(m[6].feed, 1);
}

TEST(SweepBatching, FewestEqualBatchesWithinTheLimit) {
  EXPECT_EQ(batch_members(10, 100, 10'000), 10);  // all fit
  EXPECT_EQ(batch_members(10, 100, 400), 4);      // 3 batches: 4, 4, 2
  EXPECT_EQ(batch_members(9, 100, 400), 3);       // 3 batches of 3 rather than 4, 4, 1
  EXPECT_EQ(batch_members(10, 100, 100), 1);
  EXPECT_THROW(batch_members(10, 100, 99), InvalidInput);
  EXPECT_GT(default_batch_memory(find_backend("cpu")), 0u);
  const Problem p = small_problem();
  EXPECT_EQ(sweep_bytes_per_member(p, {false, true}), 4u * 24 * 20 * (6 + 3));
  EXPECT_EQ(sweep_bytes_per_member(small_problem(Precision::Double), {true, true}),
            8u * 24 * 20 * (6 + 6));
}

// ---------------------------------------------------------------------------------------------
// The sweep against single runs

class SweepEqualsRuns : public ::testing::TestWithParam<std::tuple<InitialKind, Precision>> {};

TEST_P(SweepEqualsRuns, EveryImageIsBitwiseTheRunsImage) {
  const auto [init, precision] = GetParam();
  const ScratchDir dir("sweep");
  SweepRequest sweep = small_sweep(dir / "sweep.h5", init,
                                   init == InitialKind::Noise ? std::vector<std::uint64_t>{1, 2}
                                                              : std::vector<std::uint64_t>{0});
  sweep.problem.precision = precision;
  const SweepSummary summary = execute_sweep(sweep);
  ASSERT_TRUE(summary.completed) << summary.status;
  EXPECT_EQ(summary.backend, "cpu");
  EXPECT_EQ(summary.batches, 1);

  io::RunFileReader swept(dir / "sweep.h5");
  // Several members, including the first and the last.
  const std::vector<std::size_t> checked = {0, 3, sweep.members.size() - 1};
  for (std::size_t m : checked) {
    RunRequest run;
    run.problem = sweep.problem;
    run.problem.params.feed = sweep.members[m].feed;
    run.problem.params.kill = sweep.members[m].kill;
    run.initial = {init, sweep.members[m].seed};
    run.images = sweep.images;
    run.steps_per_image = sweep.steps_per_image;
    run.fields = {true, true};
    run.engine = sweep.engine;
    run.output = dir / ("run" + std::to_string(m) + ".h5");
    run.quiet = true;
    ASSERT_TRUE(execute_run(run).completed);
    io::RunFileReader single(run.output);
    for (std::int64_t i = 0; i < sweep.images; ++i) {
      for (const char* field : {"u", "v"}) {
        // float -> double is exact, so equal doubles are equal stored values.
        const auto a = swept.read_image(field, i, static_cast<std::int64_t>(m));
        const auto b = single.read_image(field, i);
        ASSERT_EQ(a, b) << "member " << m << " image " << i << " field " << field;
      }
    }
  }
  // The members do differ (a sweep of copies would pass the comparison above trivially).
  EXPECT_NE(swept.read_image("v", 2, 0), swept.read_image("v", 2, 1));
}

INSTANTIATE_TEST_SUITE_P(InitAndPrecision, SweepEqualsRuns,
                         ::testing::Values(std::tuple{InitialKind::Rectangle, Precision::Single},
                                           std::tuple{InitialKind::Noise, Precision::Single},
                                           std::tuple{InitialKind::Noise, Precision::Double}));

// ---------------------------------------------------------------------------------------------
// The file

TEST(SweepFile, LayoutReadsBack) {
  const ScratchDir dir("sweep");
  SweepRequest sweep = small_sweep(dir / "sweep.h5", InitialKind::Noise, {5, 6});
  ASSERT_TRUE(execute_sweep(sweep).completed);
  io::RunFileReader file(dir / "sweep.h5");
  const std::int64_t members = 12;
  EXPECT_EQ(file.shape("v"), (std::vector<std::int64_t>{members, 3, 24, 20}));
  EXPECT_EQ(file.shape("u"), (std::vector<std::int64_t>{members, 3, 24, 20}));
  EXPECT_EQ(file.shape("feed"), std::vector<std::int64_t>{members});
  const auto feed = file.read_doubles("feed"), kill = file.read_doubles("kill");
  const auto seed = file.read_int64("seed");
  for (std::size_t m = 0; m < sweep.members.size(); ++m) {
    EXPECT_EQ(feed[m], sweep.members[m].feed);
    EXPECT_EQ(kill[m], sweep.members[m].kill);
    EXPECT_EQ(seed[m], static_cast<std::int64_t>(sweep.members[m].seed));
  }
  EXPECT_EQ(file.read_int64("step"), (std::vector<std::int64_t>{40, 80, 120}));
  EXPECT_EQ(file.read_int64("nonfinite_image"), std::vector<std::int64_t>(members, -1));
  EXPECT_EQ(file.read_int64("images_written"), std::vector<std::int64_t>(members, 3));
  EXPECT_EQ(file.attribute_int64("writer_pid"), 0);  // closed: no process writes it
  EXPECT_EQ(file.attribute_string("kind"), "sweep");
  EXPECT_EQ(file.attribute_string("status"), "complete");
  EXPECT_EQ(file.attribute_string("init"), "noise");
  EXPECT_EQ(file.attribute_string("boundary"), "periodic");
  EXPECT_EQ(file.attribute_string("precision"), "single");
  EXPECT_EQ(file.attribute_string("stencil_name"), "oono-puri");
  EXPECT_EQ(file.attribute_int64("members"), members);
  EXPECT_EQ(file.attribute_int64("rows"), 24);
  EXPECT_EQ(file.attribute_int64("cols"), 20);
  EXPECT_EQ(file.attribute_int64("steps_per_image"), 40);
  EXPECT_EQ(file.attribute_double("du"), 0.2);
  EXPECT_EQ(file.attribute_double("dt"), 1.0);
  EXPECT_FALSE(file.has_attribute("feed"));  // per member, not shared

  // One image per chunk, stored as float32.
  const hid_t h = H5Fopen((dir / "sweep.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(h, 0);
  const hid_t v = H5Dopen2(h, "v", H5P_DEFAULT);
  const hid_t plist = H5Dget_create_plist(v);
  hsize_t chunk[4] = {};
  EXPECT_EQ(H5Pget_chunk(plist, 4, chunk), 4);
  EXPECT_EQ(chunk[0], 1u);
  EXPECT_EQ(chunk[1], 1u);
  EXPECT_EQ(chunk[2], 24u);
  EXPECT_EQ(chunk[3], 20u);
  const hid_t type = H5Dget_type(v);
  EXPECT_EQ(H5Tget_size(type), 4u);
  H5Tclose(type);
  H5Pclose(plist);
  H5Dclose(v);
  H5Fclose(h);
}

TEST(SweepFile, EachMemberCountsItsImagesOnceTheyAreFlushed) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);  // 6 members, 3 images
  io::SweepMetadata meta = sweep_metadata(r);
  meta.backend = "cpu";
  const std::vector<float> images(2 * 24 * 20, 0.25f);  // two members' images of u or v
  const auto counts = [&] { return io::RunFileReader(r.output).read_int64("images_written"); };
  using Counts = std::vector<std::int64_t>;
  {
    io::SweepFileWriter file(r.output, meta, false);
    EXPECT_EQ(io::RunFileReader(r.output).attribute_int64("writer_pid"), ::getpid());
    file.write_images(2, 2, 0, images.data(), images.data());
    file.write_images(2, 2, 1, images.data(), images.data());
    // Counted once flushed: a kill before leaves them uncounted, as they may not be on the disk.
    EXPECT_EQ(counts(), Counts(6, 0));
    file.flush();
    EXPECT_EQ(counts(), (Counts{0, 0, 2, 2, 0, 0}));
    // An image written over, one after a gap: neither counts.
    file.write_images(2, 1, 0, images.data(), images.data());
    file.write_images(4, 1, 2, images.data(), images.data());
    file.flush();
    EXPECT_EQ(counts(), (Counts{0, 0, 2, 2, 0, 0}));
    file.write_images(3, 1, 2, images.data(), images.data());
    file.finish("interrupted", {});  // counts what was written since the last flush
  }
  EXPECT_EQ(counts(), (Counts{0, 0, 2, 3, 0, 0}));
  {
    // Continued, each member's count goes on from the file's.
    io::SweepFileWriter file(r.output, meta, io::SweepFileWriter::Continue{});
    file.write_images(2, 1, 2, images.data(), images.data());
    file.write_images(0, 1, 0, images.data(), images.data());
    file.finish("interrupted", {});
  }
  EXPECT_EQ(counts(), (Counts{1, 0, 3, 3, 0, 0}));
  EXPECT_EQ(io::RunFileReader(r.output).attribute_int64("writer_pid"), 0);
}

// A member's image is in the file once its write returns, before any flush: under SWMR, HDF5 1.10
// would hold what H5Dwrite writes in memory until the next flush, where a full disk would lose
// every image since the last one (as for a run:
// RunFileTest.EachImageIsInTheFileWhenItsWriteReturns).
TEST(SweepFile, EachImageIsInTheFileWhenItsWriteReturns) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);  // 6 members, 3 images
  io::SweepMetadata meta = sweep_metadata(r);
  meta.backend = "cpu";
  const std::size_t cells = 24 * 20;
  std::vector<float> u(2 * cells), v(2 * cells);  // members 2 and 3
  for (std::size_t c = 0; c < u.size(); ++c) {
    u[c] = 0.25f + static_cast<float>(c);
    v[c] = 0.5f + static_cast<float>(c);
  }
  std::string written;  // the file's bytes after the write, before any flush
  {
    io::SweepFileWriter file(r.output, meta, false);
    file.write_images(2, 2, 1, u.data(), v.data());
    std::ifstream in(r.output, std::ios::binary);
    written.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    file.finish("interrupted", {});
  }
  const hid_t h = H5Fopen(r.output.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  for (const auto& [name, values] : {std::pair{"u", &u}, std::pair{"v", &v}}) {
    const hid_t dataset = H5Dopen2(h, name, H5P_DEFAULT);
    for (hsize_t member = 2; member < 4; ++member) {
      const hsize_t at[4] = {member, 1, 0, 0};
      unsigned filters = 0;
      haddr_t address = HADDR_UNDEF;
      hsize_t bytes = 0;
      H5Dget_chunk_info_by_coord(dataset, at, &filters, &address, &bytes);
      ASSERT_EQ(bytes, cells * sizeof(float)) << name << " member " << member;
      ASSERT_LE(address + bytes, written.size()) << name << " member " << member;
      EXPECT_EQ(std::memcmp(written.data() + address, values->data() + (member - 2) * cells, bytes),
                0)
          << name << " of member " << member << " was not in the file when its write returned";
    }
    H5Dclose(dataset);
  }
  H5Fclose(h);
}

TEST(SweepFile, BatchesBeyondTheMemoryLimitGiveTheSameFile) {
  const ScratchDir dir("sweep");
  SweepRequest one = small_sweep(dir / "one.h5", InitialKind::Noise, {1, 2});
  const SweepSummary single = execute_sweep(one);
  ASSERT_TRUE(single.completed);
  EXPECT_EQ(single.batches, 1);

  SweepRequest many = one;
  many.output = dir / "many.h5";
  // Room for 5 members: 12 members run as 3 batches of 4.
  many.max_batch_bytes = 5 * sweep_bytes_per_member(many.problem, many.fields) + 7;
  const SweepSummary batched = execute_sweep(many);
  ASSERT_TRUE(batched.completed);
  EXPECT_EQ(batched.batches, 3);
  EXPECT_EQ(batched.batch_size, 4);
  for (const char* name : {"v", "u", "feed", "kill", "seed", "step"}) {
    EXPECT_EQ(read_all(dir / "one.h5", name), read_all(dir / "many.h5", name)) << name;
  }
}

TEST(SweepFile, ThreadCountsGiveTheSameFile) {
  const ScratchDir dir("sweep");
  std::vector<std::vector<double>> files;
  for (int threads : {1, 2}) {
    SweepRequest r =
        small_sweep(dir / ("t" + std::to_string(threads) + ".h5"), InitialKind::Noise, {3});
    r.engine.threads = threads;
    ASSERT_TRUE(execute_sweep(r).completed);
    files.push_back(read_all(r.output, "v"));
  }
  EXPECT_EQ(files[0], files[1]);
}

TEST(SweepFile, ADivergingMemberIsRecordedAndTheOthersGoOn) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  // Both within the stability limit at u = 1, v = 0 at dt 1.8 (2.41 and 2.5), above the dt
  // stable at every state (1.11): the first stays finite, the second (no feed, no kill) diverges.
  r.problem.params.dt = 1.8;
  r.members = {{0.03, 0.06, 0}, {0.0, 0.0, 0}};
  const SweepSummary summary = execute_sweep(r);
  EXPECT_TRUE(summary.completed);
  EXPECT_EQ(summary.nonfinite_members, 1);
  io::RunFileReader file(r.output);
  const auto first = file.read_int64("nonfinite_image");
  EXPECT_EQ(first[0], -1);
  EXPECT_GE(first[1], 0);
  for (double x : file.read_image("v", 2, 0)) ASSERT_TRUE(std::isfinite(x));
}

TEST(SweepFile, BadRequestsFailBeforeComputing) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  r.members = cross_members({-0.01, 0.02}, {0.06}, {0});
  EXPECT_NE(error_of([&] { execute_sweep(r); }).find("feed must be"), std::string::npos);
  r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  r.max_batch_bytes = 100;
  EXPECT_NE(error_of([&] { execute_sweep(r); }).find("one member needs"), std::string::npos);
  r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  r.images = 0;
  EXPECT_THROW(execute_sweep(r), InvalidInput);
  EXPECT_FALSE(fs::exists(dir / "s.h5"));
  r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  ASSERT_TRUE(execute_sweep(r).completed);
  EXPECT_NE(error_of([&] { execute_sweep(r); }).find("already exists"), std::string::npos);
  r.overwrite = true;
  EXPECT_TRUE(execute_sweep(r).completed);
}

// The largest sweep the command line takes (1000 feeds x 1000 kills) is checked member by member
// without validating a whole problem per member, which took minutes: the outcome is pinned here,
// and a slow path shows as a slow test.
TEST(SweepFile, AMillionMembersAreValidatedAndRefusedUpFront) {
  const ScratchDir dir("sweep");
  const auto values = [](double start, double stop) {
    return parse_value_set(std::to_string(start) + ":" + std::to_string(stop) + ":1000", "rate");
  };
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  r.problem = Problem{};  // the course's grid: 1000 images of a million members fill no disk
  r.images = 1000;
  r.members = cross_members(values(0.01, 0.06), values(0.04, 0.07), {0});
  ASSERT_EQ(r.members.size(), 1'000'000u);
  const io::SweepMetadata meta = sweep_metadata(r);
  EXPECT_EQ(meta.members(), 1'000'000);
  EXPECT_EQ(meta.feed.back(), 0.06);
  EXPECT_EQ(meta.kill.back(), 0.07);
  EXPECT_NE(error_of([&] { execute_sweep(r); }).find("output needs"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "s.h5"));

  // A grid whose member size wrapped around 2^64 to 48 GiB in integers.
  r.problem.grid = {2147483647, 238609295};
  EXPECT_EQ(sweep_bytes_per_member(r.problem, {false, true}), UINT64_MAX);
  // A limit the machine has (one beyond its memory is refused first); the wrapped size would
  // have been named as 48 GiB.
  r.max_batch_bytes = std::uint64_t{1} << 30;
  EXPECT_NE(error_of([&] { execute_sweep(r); }).find("one member needs over 16 EiB"),
            std::string::npos);
  r.problem = Problem{};
  r.max_batch_bytes = 0;

  // One bad rate among them, in the last member, is still found and named.
  r.members.back().kill = -0.07;
  EXPECT_EQ(error_of([&] { sweep_metadata(r); }),
            "kill must be a finite non-negative number, got -0.07");
  // So is the stability limit.
  r.members.back().kill = 0.07;
  r.problem.params.dt = 6.0;
  EXPECT_NE(error_of([&] { sweep_metadata(r); }).find("stability limit"), std::string::npos);
  // The limit moves with feed and kill: dt 4.3 suits every feed up to 0.06 (2 / (0.06 + 0.1 * 4)
  // = 4.35) but not the last member's 0.1 (2 / (0.1 + 0.1 * 4) = 4), which is named.
  r.problem.params.dt = 4.3;
  EXPECT_NO_THROW(sweep_metadata(r));
  r.members.back().feed = 0.1;
  EXPECT_NE(error_of([&] { sweep_metadata(r); })
                .find("stability limit 4 of stencil oono-puri "
                      "with du 0.1, dv 0.05, feed 0.1 and kill "
                      "0.07"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The atlas

namespace {

io::Rgb8Image read_png(const fs::path& path) {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw std::runtime_error("cannot open " + path.string());
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  struct Guard {
    png_structp* png;
    png_infop* info;
    ~Guard() { png_destroy_read_struct(png, info, nullptr); }
  } guard{&png, &info};
  if (setjmp(png_jmpbuf(png))) throw std::runtime_error("libpng: cannot read " + path.string());
  png_init_io(png, file.get());
  png_read_info(png, info);
  io::Rgb8Image image;
  image.width = png_get_image_width(png, info);
  image.height = png_get_image_height(png, info);
  if (png_get_color_type(png, info) != PNG_COLOR_TYPE_RGB || png_get_bit_depth(png, info) != 8) {
    throw std::runtime_error("not an 8-bit RGB PNG");
  }
  image.pixels.resize(static_cast<std::size_t>(3 * image.width * image.height));
  for (std::int64_t r = 0; r < image.height; ++r) {
    png_read_row(png, image.pixels.data() + 3 * r * image.width, nullptr);
  }
  png_read_end(png, nullptr);
  return image;
}

// Checks that every member of `seed` has its tile, pixel for pixel, where the atlas's layout puts
// it (the layout's own arithmetic: SweepAtlas.LargeImagesAreSubsampledIntoTiles).
void expect_tiles(const fs::path& sweep_file, const io::Rgb8Image& atlas, std::int64_t seed,
                  std::int64_t image, std::int64_t scale = 1) {
  io::RunFileReader file(sweep_file);
  const auto dims = file.shape("v");
  const auto feed = file.read_doubles("feed"), kill = file.read_doubles("kill");
  const auto seeds = file.read_int64("seed");
  std::vector<double> feeds(feed), kills(kill);
  std::sort(feeds.begin(), feeds.end());
  feeds.erase(std::unique(feeds.begin(), feeds.end()), feeds.end());
  std::sort(kills.begin(), kills.end());
  kills.erase(std::unique(kills.begin(), kills.end()), kills.end());
  io::RenderOptions options;
  options.scale = scale;
  const io::AtlasPainter painter(sweep_file, options);
  const io::AtlasLayout& layout = painter.layout();
  ASSERT_EQ(layout.feeds, static_cast<std::int64_t>(feeds.size()));
  ASSERT_EQ(layout.kills, static_cast<std::int64_t>(kills.size()));
  ASSERT_EQ(atlas.width, layout.width);
  ASSERT_EQ(atlas.height, layout.height);
  int tiles = 0;
  for (std::int64_t m = 0; m < dims[0]; ++m) {
    if (seeds[m] != seed) continue;
    const auto f = std::find(feeds.begin(), feeds.end(), feed[m]) - feeds.begin();
    const auto k = std::find(kills.begin(), kills.end(), kill[m]) - kills.begin();
    const io::Rgb8Image tile =
        io::colorize(file.read_image("v", image, m), dims[2], dims[3], 0, 0.5);
    for (std::int64_t r = 0; r < layout.tile_rows; ++r) {
      for (std::int64_t c = 0; c < layout.tile_cols; ++c) {
        for (int ch = 0; ch < 3; ++ch) {
          const auto want = tile.pixels[3 * (r / layout.enlarge * layout.subsample * dims[3] +
                                             c / layout.enlarge * layout.subsample) +
                                        ch];
          const auto got =
              atlas.pixels[3 * ((layout.tile_y(f) + r) * atlas.width + layout.tile_x(k) + c) + ch];
          ASSERT_EQ(got, want) << "member " << m << " pixel " << r << "," << c;
        }
      }
    }
    ++tiles;
  }
  EXPECT_EQ(tiles, layout.feeds * layout.kills);
}

// Pixels darker than mid-grey in a rectangle of the margins: the labels' ink.
bool dark(const io::Rgb8Image& image, std::int64_t x, std::int64_t y) {
  return image.pixels[static_cast<std::size_t>(3 * (y * image.width + x))] < 128;
}

int ink(const io::Rgb8Image& image, std::int64_t x0, std::int64_t y0, std::int64_t x1,
        std::int64_t y1) {
  int inked = 0;
  for (std::int64_t y = y0; y < y1; ++y) {
    for (std::int64_t x = x0; x < x1; ++x) inked += dark(image, x, y);
  }
  return inked;
}

}  // namespace

TEST(SweepAtlas, OneTilePerFeedAndKillWithLabelledAxes) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  r.fields = {false, true};
  ASSERT_TRUE(execute_sweep(r).completed);
  ASSERT_TRUE(io::is_sweep_file(r.output));
  io::RenderOptions options;
  options.out_dir = dir / "atlas";
  const auto written = io::render_run(r.output, options);  // detects the sweep
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].filename(), "atlas.png");
  const io::Rgb8Image atlas = read_png(written[0]);
  const io::AtlasPainter painter(r.output, options);
  const io::AtlasLayout& layout = painter.layout();
  EXPECT_EQ(layout.feeds * layout.kills, 6);
  expect_tiles(r.output, atlas, 0, r.images - 1);
  ASSERT_FALSE(io::atlas_font().empty())
      << "no font for the atlas labels, which go unchecked: install fonts-dejavu-core "
         "(scripts/setup) or set GRAYSCOTT_FONT";
  EXPECT_GT(ink(atlas, 0, layout.top, layout.left, layout.tile_y(0) + layout.tile_rows), 20)
      << "feed labels";
  const std::int64_t grid_bottom = layout.tile_y(0) + layout.tile_rows;
  EXPECT_GT(ink(atlas, layout.left, grid_bottom, atlas.width, atlas.height), 20) << "kill labels";
}

namespace {

// Runs of consecutive indices in [begin, end) where `inked(i)` holds: the labels along an axis.
std::vector<std::pair<std::int64_t, std::int64_t>> runs(
    std::int64_t begin, std::int64_t end, const std::function<bool(std::int64_t)>& inked) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t i = begin; i < end; ++i) {
    if (!inked(i)) continue;
    if (out.empty() || out.back().second != i)
      out.emplace_back(i, i + 1);
    else
      out.back().second = i + 1;
  }
  return out;
}

// The columns (or, reading upwards, rows) of a label's ink: what the picture shows of it, whole,
// when drawn on the white page.
std::int64_t ink_extent(const io::TextMask& mask) {
  std::int64_t first = -1, last = -1;
  for (std::int64_t x = 0; x < mask.width; ++x) {
    for (std::int64_t y = 0; y < mask.height; ++y) {
      if (mask.coverage[static_cast<std::size_t>(y * mask.width + x)] < 128) continue;
      if (first < 0) first = x;
      last = x;
    }
  }
  return first < 0 ? 0 : last - first + 1;
}

// Checks a rendered atlas's axes against the ticks its painter chose: a tick mark at each tick's
// place and nowhere else; one label per tick, apart from the others, centred on its tick, as wide
// as its text's ink (whole: not cut at the picture's edge) and within the picture.
void expect_ticked_axes(const io::Rgb8Image& atlas, const io::AtlasPainter& painter) {
  const io::AtlasLayout& layout = painter.layout();
  const io::AtlasTicks& ticks = painter.ticks();
  ASSERT_EQ(atlas.width, layout.width);
  ASSERT_EQ(atlas.height, layout.height);
  const io::TextRenderer text(io::atlas_font(), 14);
  ASSERT_TRUE(text.usable()) << "no font for the labels (fonts-dejavu-core)";
  const std::int64_t bottom = layout.grid_bottom();
  const auto pixel_of = [](double position) {
    return static_cast<std::int64_t>(std::floor(position + 1e-6));
  };

  // Feed: marks in the column just left of the grid, labels left of them.
  const std::int64_t mark_x = layout.left - 2;
  const auto feed_marks =
      runs(layout.top, bottom, [&](std::int64_t y) { return dark(atlas, mark_x, y); });
  ASSERT_EQ(feed_marks.size(), ticks.feed.size());
  for (std::size_t i = 0; i < ticks.feed.size(); ++i) {
    EXPECT_EQ(feed_marks[i].first, pixel_of(ticks.feed[ticks.feed.size() - 1 - i].position));
    EXPECT_EQ(feed_marks[i].second - feed_marks[i].first, 1);
  }
  // Left of the marks: the feed axis's title (reading upwards, at the picture's left), then the
  // labels, right-aligned.
  const std::int64_t labels_end = layout.left - 1 - layout.tick_length;
  const auto column_ink = [&](std::int64_t x) { return ink(atlas, x, 0, x + 1, atlas.height) > 0; };
  const auto left_ink = runs(0, labels_end, column_ink);
  ASSERT_GE(left_ink.size(), 2u) << "the feed axis's title and its labels";
  const std::int64_t labels_begin = left_ink.front().second;  // past the title
  const auto feed_labels = runs(0, atlas.height, [&](std::int64_t y) {
    return ink(atlas, labels_begin, y, labels_end, y + 1) > 0;
  });
  ASSERT_EQ(feed_labels.size(), ticks.feed.size()) << "labels merged or missing";
  for (std::size_t i = 0; i < ticks.feed.size(); ++i) {
    const io::AxisTick& tick = ticks.feed[ticks.feed.size() - 1 - i];  // top label: largest feed
    const auto [y0, y1] = feed_labels[i];
    EXPECT_GT(y0, 0) << tick.text;
    EXPECT_LT(y1, atlas.height) << tick.text;
    EXPECT_NEAR(static_cast<double>(y0 + y1) / 2, tick.position, 1.5)
        << tick.text << " not centred on its tick";
    const auto columns = runs(labels_begin, labels_end,
                              [&](std::int64_t x) { return ink(atlas, x, y0, x + 1, y1) > 0; });
    ASSERT_FALSE(columns.empty());
    EXPECT_EQ(columns.back().second - columns.front().first, ink_extent(text.render(tick.text)))
        << tick.text << ": the label drawn is not its text, whole";
  }

  // Kill: marks in the row just below the grid, labels (reading upwards) below them.
  const std::int64_t mark_y = bottom + 2;
  const auto kill_marks = runs(layout.left, layout.left + layout.grid_width(),
                               [&](std::int64_t x) { return dark(atlas, x, mark_y); });
  ASSERT_EQ(kill_marks.size(), ticks.kill.size());
  for (std::size_t i = 0; i < ticks.kill.size(); ++i) {
    EXPECT_EQ(kill_marks[i].first, pixel_of(ticks.kill[i].position));
    EXPECT_EQ(kill_marks[i].second - kill_marks[i].first, 1);
  }
  // Below the marks, the labels' rows come first, then the axis's title (one line: its last run
  // of inked rows); left of the feed marks lies the other axis (its title may reach below a
  // short grid).
  const std::int64_t below_marks = bottom + 1 + layout.tick_length;
  const std::int64_t kill_side = layout.left - 1 - layout.tick_length;
  const auto row_ink = [&](std::int64_t y) {
    return ink(atlas, kill_side, y, atlas.width, y + 1) > 0;
  };
  const auto lower_ink = runs(below_marks, atlas.height, row_ink);
  ASSERT_GE(lower_ink.size(), 2u) << "the kill labels and the axis's title";
  const std::int64_t labels_top = lower_ink.front().first;
  const std::int64_t labels_bottom = lower_ink.back().first;
  const auto kill_labels = runs(kill_side, atlas.width, [&](std::int64_t x) {
    return ink(atlas, x, labels_top, x + 1, labels_bottom) > 0;
  });
  ASSERT_EQ(kill_labels.size(), ticks.kill.size()) << "labels merged or missing";
  for (std::size_t i = 0; i < ticks.kill.size(); ++i) {
    const io::AxisTick& tick = ticks.kill[i];
    const auto [x0, x1] = kill_labels[i];
    EXPECT_GT(x0, 0) << tick.text;
    EXPECT_LT(x1, atlas.width) << tick.text;
    EXPECT_NEAR(static_cast<double>(x0 + x1) / 2, tick.position, 1.5)
        << tick.text << " not centred on its tick";
    const auto rows = runs(labels_top, labels_bottom,
                           [&](std::int64_t y) { return ink(atlas, x0, y, x1, y + 1) > 0; });
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows.back().second - rows.front().first, ink_extent(text.render(tick.text)))
        << tick.text << ": the label drawn is not its text, whole";
  }
}

}  // namespace

TEST(SweepAtlas, AxesAreTickedAtRoundValuesLabelledInFull) {
  // grayscott sweep --feed 0.010:0.060:4 --kill 0.040:0.070:4: feeds 0.02667 and 0.04333 are
  // labelled by none of their own values, but by round ones at their places along the axis.
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  const std::vector<double> feeds = parse_value_set("0.010:0.060:4", "feed");
  r.members = cross_members(feeds, parse_value_set("0.040:0.070:4", "kill"), {0});
  r.images = 1;
  r.fields = {false, true};
  ASSERT_TRUE(execute_sweep(r).completed);
  io::RenderOptions options;
  options.out_dir = dir / "atlas";
  const io::AtlasPainter painter(r.output, options);
  const auto texts = [](const std::vector<io::AxisTick>& ticks) {
    std::vector<std::string> out;
    for (const io::AxisTick& tick : ticks) out.push_back(tick.text);
    return out;
  };
  // Tiles 24 pixels high and 20 wide (and gaps of 2): a label's line of text fits every 0.02 of
  // feed and every 0.01 of kill.
  EXPECT_EQ(texts(painter.ticks().feed), (std::vector<std::string>{"0.02", "0.04", "0.06"}));
  EXPECT_EQ(texts(painter.ticks().kill),
            (std::vector<std::string>{"0.04", "0.05", "0.06", "0.07"}));
  const io::AtlasLayout& layout = painter.layout();
  // 0.06 at the top tile's centre; 0.04 between the tiles of 0.02667 and 0.04333, 4/5 of the
  // way from the first.
  EXPECT_DOUBLE_EQ(painter.ticks().feed[2].position, layout.row_centre(3));
  const double along = (0.04 - feeds[1]) / (feeds[2] - feeds[1]);
  EXPECT_NEAR(along, 0.8, 1e-12);
  EXPECT_NEAR(painter.ticks().feed[1].position,
              layout.row_centre(1) + along * (layout.row_centre(2) - layout.row_centre(1)), 1e-9);
  EXPECT_DOUBLE_EQ(painter.ticks().kill[1].position, layout.column_centre(1));
  const auto written = io::render_run(r.output, options);
  ASSERT_EQ(written.size(), 1u);
  const io::Rgb8Image atlas = read_png(written[0]);
  expect_ticked_axes(atlas, painter);
  expect_tiles(r.output, atlas, 0, 0);
}

TEST(SweepAtlas, AnAxisOfOneValueShowsItInFullWithRoomForIt) {
  // One feed whose shortest exact text is long: the margin grows to hold it whole.
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  const double feed = 0.13 / 3;  // 0.043333333333333335
  r.members = cross_members({feed}, {0.05, 0.06, 0.07}, {0});
  r.images = 1;
  r.fields = {false, true};
  ASSERT_TRUE(execute_sweep(r).completed);
  io::RenderOptions options;
  options.out_dir = dir / "atlas";
  const io::AtlasPainter painter(r.output, options);
  ASSERT_EQ(painter.ticks().feed.size(), 1u);
  EXPECT_EQ(painter.ticks().feed[0].text, "0.043333333333333335");
  EXPECT_DOUBLE_EQ(painter.ticks().feed[0].position, painter.layout().row_centre(0));
  EXPECT_GT(painter.layout().left, io::plan_atlas(24, 20, 1, 3).left) << "no room made";
  const io::Rgb8Image atlas = read_png(io::render_run(r.output, options).at(0));
  expect_ticked_axes(atlas, painter);
}

TEST(SweepAtlas, AnnotatedAtlasesGetAColorbarUnderTheAxes) {
  // Three feeds by two kills of 24x20 tiles: a grid 42 pixels wide, narrower than its text.
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  ASSERT_TRUE(execute_sweep(r).completed);
  io::RenderOptions options;
  options.out_dir = dir / "plain";
  const io::Rgb8Image plain = read_png(io::render_run(r.output, options).at(0));
  options.out_dir = dir / "annotated";
  options.annotate = true;
  const io::Rgb8Image annotated = read_png(io::render_run(r.output, options).at(0));
  // The picture is as wide as its longer title and its colour bar's text need.
  EXPECT_GE(annotated.width, plain.width);
  ASSERT_GT(annotated.height, plain.height);
  // Below the title, the tiles, labels and axis titles are the plain atlas's, pixel for pixel;
  // below them, a bar from the colormap's low to its high end.
  const io::AtlasPainter painter(r.output, options);
  const io::AtlasLayout& layout = painter.layout();
  const auto pixel = [&](const io::Rgb8Image& image, std::int64_t x, std::int64_t y) {
    const auto* p = &image.pixels[static_cast<std::size_t>(3 * (y * image.width + x))];
    return std::array<std::uint8_t, 3>{p[0], p[1], p[2]};
  };
  for (std::int64_t y = layout.top; y < plain.height; ++y) {
    for (std::int64_t x = 0; x < plain.width; ++x)
      ASSERT_EQ(pixel(plain, x, y), pixel(annotated, x, y)) << x << " " << y;
  }
  const io::ColormapTable& inferno = io::colormap_table(io::Colormap::Inferno);
  const std::int64_t grid_width = layout.grid_width();
  std::int64_t bar_row = -1;
  for (std::int64_t y = plain.height; y < annotated.height && bar_row < 0; ++y) {
    if (pixel(annotated, layout.left, y) == inferno[0]) bar_row = y;
  }
  ASSERT_GE(bar_row, 0) << "no colorbar below the axes";
  std::int64_t bar_end = layout.left;
  while (bar_end < annotated.width &&
         pixel(annotated, bar_end, bar_row) != std::array<std::uint8_t, 3>{255, 255, 255})
    ++bar_end;
  EXPECT_GE(bar_end - layout.left, grid_width) << "the bar spans the grid at least";
  EXPECT_EQ(pixel(annotated, bar_end - 1, bar_row), inferno[255]);
  // The bar's two ends and the field's name beneath it: three words apart, none touching another.
  std::vector<bool> inked(static_cast<std::size_t>(annotated.width), false);
  for (std::int64_t x = 0; x < annotated.width; ++x)
    inked[static_cast<std::size_t>(x)] =
        ink(annotated, x, bar_row + 12, x + 1, annotated.height) > 0;
  int words = 0;
  for (std::size_t x = 0; x < inked.size(); ++x) {
    // A word: ink after at least four blank columns (letters of one word are closer).
    const bool starts =
        inked[x] && (x < 4 || !(inked[x - 1] || inked[x - 2] || inked[x - 3] || inked[x - 4]));
    words += starts ? 1 : 0;
  }
  EXPECT_EQ(words, 3) << "the colorbar's ends and the field's name, apart";
  // The title's ink ends inside the picture, a margin before its right edge: not cut.
  for (const io::Rgb8Image* picture : {&plain, &annotated}) {
    EXPECT_GT(ink(*picture, 0, 0, picture->width, layout.top), 20) << "a title";
    EXPECT_EQ(ink(*picture, picture->width - 4, 0, picture->width, layout.top), 0)
        << "the title runs to the picture's edge";
  }
}

// A classified sweep, annotated: each tile marked in its top-left corner with its member's class
// (outlined in black), and a legend naming every class, on as many lines as a narrow atlas needs.
TEST(SweepAtlas, AnnotatedClassesMarkEachTileAndTheLegendNamesEveryClass) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Noise);
  r.problem.grid = {32, 32};
  r.problem.boundary = Boundary::Periodic;
  r.members = cross_members({0.02, 0.03}, {0.05, 0.06}, {0});
  r.images = 2;
  r.steps_per_image = 200;
  r.analysis.statistics = analysis::HistogramSpec{};
  r.analysis.classify = true;
  ASSERT_TRUE(execute_sweep(r).completed);
  io::RenderOptions options;
  options.out_dir = dir / "atlas";
  options.annotate = true;
  const io::AtlasPainter painter(r.output, options);
  const io::Rgb8Image atlas = read_png(io::render_run(r.output, options).at(0));
  const io::AtlasLayout& layout = painter.layout();
  const auto pixel = [&](std::int64_t x, std::int64_t y) {
    const auto* p = &atlas.pixels[static_cast<std::size_t>(3 * (y * atlas.width + x))];
    return std::array<std::uint8_t, 3>{p[0], p[1], p[2]};
  };
  io::RunFileReader file(r.output);
  const std::vector<std::int64_t> classes = file.read_int64("stats/class");  // [member, image]
  const std::array<std::uint8_t, 3> black{0, 0, 0};
  for (std::int64_t m = 0; m < 4; ++m) {
    const std::int64_t pattern = classes[static_cast<std::size_t>(m * 2 + 1)];  // the last image
    ASSERT_GE(pattern, 0);
    const std::int64_t x = layout.tile_x(m % 2) + 1, y = layout.tile_y(m / 2) + 1;
    EXPECT_EQ(pixel(x, y), black) << "member " << m;
    EXPECT_EQ(pixel(x + 2, y + 2), io::class_colours[static_cast<std::size_t>(pattern)])
        << "member " << m;
  }
  // Below the grid: every class's colour inside a black outline, the legend's squares.
  int named = 0;
  for (const auto& colour : io::class_colours) {
    bool found = false;
    for (std::int64_t y = layout.grid_bottom() + 1; y + 1 < atlas.height && !found; ++y) {
      for (std::int64_t x = 1; x + 1 < atlas.width && !found; ++x) {
        found = pixel(x, y) == colour && pixel(x - 1, y - 1) == black &&
                (pixel(x - 1, y) == black || pixel(x, y - 1) == black);
      }
    }
    named += found ? 1 : 0;
  }
  EXPECT_EQ(named, static_cast<int>(io::class_colours.size())) << "the legend names every class";
}

TEST(SweepAtlas, OneAtlasPerSeedAndAChosenImage) {
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Noise, {4, 9});
  ASSERT_TRUE(execute_sweep(r).completed);
  io::RenderOptions options;
  options.out_dir = dir / "atlas";
  options.image = 1;
  const auto written = io::render_run(r.output, options);
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(written[0].filename(), "atlas_seed4.png");
  EXPECT_EQ(written[1].filename(), "atlas_seed9.png");
  expect_tiles(r.output, read_png(written[0]), 4, 1);
  expect_tiles(r.output, read_png(written[1]), 9, 1);
  EXPECT_NE(read_png(written[0]).pixels, read_png(written[1]).pixels);
  options.image = 3;
  EXPECT_THROW(io::render_run(r.output, options), InvalidInput);
}

TEST(SweepAtlas, LargeImagesAreSubsampledIntoTiles) {
  const io::AtlasLayout a = io::plan_atlas(600, 300, 2, 3);
  EXPECT_EQ(a.subsample, 3);
  EXPECT_EQ(a.tile_rows, 200);
  EXPECT_EQ(a.tile_cols, 100);
  EXPECT_EQ(a.tile_x(1) - a.tile_x(0), a.tile_cols + a.gap);
  EXPECT_GT(a.tile_y(0), a.tile_y(1));  // feed increases upwards
  EXPECT_EQ(io::plan_atlas(128, 128, 1, 1).subsample, 1);
  // A scale given is taken as it is: every cell, no subsampling.
  const io::AtlasLayout full = io::plan_atlas(600, 300, 2, 3, 1);
  EXPECT_EQ(full.subsample, 1);
  EXPECT_EQ(full.tile_rows, 600);
}

TEST(SweepAtlas, SmallImagesAreEnlargedIntoReadableTiles) {
  // 4 x 4 members of 32 x 32: the grid of tiles 512 pixels, not a 128-pixel thumbnail.
  const io::AtlasLayout small = io::plan_atlas(32, 32, 4, 4);
  EXPECT_EQ(small.subsample, 1);
  EXPECT_EQ(small.enlarge, 4);
  EXPECT_EQ(small.tile_rows, 128);
  EXPECT_EQ(small.tile_cols, 128);
  // One member: its tile at most 256 pixels; a wide map of small members is not enlarged.
  EXPECT_EQ(io::plan_atlas(32, 16, 1, 1).tile_rows, 256);
  EXPECT_EQ(io::plan_atlas(64, 64, 48, 48).enlarge, 1);
  EXPECT_EQ(io::plan_atlas(32, 32, 4, 4, 2).tile_cols, 64);  // --scale 2

  // Rendered automatically and at --scale 3: each value a block of pixels, where the layout
  // says, with the labels placed for the larger grid.
  const ScratchDir dir("sweep");
  SweepRequest r = small_sweep(dir / "s.h5", InitialKind::Rectangle);
  r.fields = {false, true};
  ASSERT_TRUE(execute_sweep(r).completed);
  for (const std::int64_t scale : {0, 3}) {
    io::RenderOptions options;
    options.out_dir = dir / ("atlas" + std::to_string(scale));
    options.scale = scale;
    const io::AtlasPainter painter(r.output, options);
    EXPECT_GT(painter.layout().enlarge, 1) << "scale " << scale;
    const auto written = io::render_run(r.output, options);
    ASSERT_EQ(written.size(), 1u);
    const io::Rgb8Image atlas = read_png(written[0]);
    expect_tiles(r.output, atlas, 0, r.images - 1, scale);
    expect_ticked_axes(atlas, painter);
  }
  io::RenderOptions too_large;
  too_large.scale = io::max_scale + 1;
  too_large.out_dir = dir / "never";
  EXPECT_THROW(io::render_run(r.output, too_large), InvalidInput);
  EXPECT_FALSE(fs::exists(dir / "never"));
}

TEST(SweepBatches, ASweepTooLargeForOneEngineRunsInEqualBatchesThatFit) {
  // 100000 members where one engine takes 65535: two batches of 50000, not 65535 + 34465.
  EXPECT_EQ(batch_members(100'000, 1, UINT64_MAX, 65535), 50'000);
  EXPECT_EQ(batch_members(65'535, 1, UINT64_MAX, 65535), 65'535);
  // The memory limit still applies where it is the tighter one.
  EXPECT_EQ(batch_members(100, 10, 250, 65535), 25);
}
