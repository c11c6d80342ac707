// Test-only: writes a run file of a volume through the run file's writer, with no engine, so that
// the volume's files, companions and pictures are tested before any backend steps a volume.
//
//   write_volume_file FILE DEPTH ROWS COLS IMAGES [single|double] [v|u,v] [stop-after=N]
//
// Image i holds v = 0.5 exp(-r^2 / s_i^2) about the volume's centre (a ball whose radius grows with
// i; s_i = (2 + i) / 10 of the shortest side) and u = 1 - v. With stop-after=N the process ends
// after N images are flushed, without closing the file (as kill -9 leaves it).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/files/run_file.hpp"

using namespace grayscott;

namespace {

template <class Real>
std::vector<Real> ball(const Grid& g, std::int64_t image, bool v) {
  std::vector<Real> out(static_cast<std::size_t>(g.cells()));
  const double side = static_cast<double>(std::min({g.depth, g.rows, g.cols}));
  const double s = side * static_cast<double>(2 + image) / 10.0;
  std::size_t k = 0;
  for (std::int64_t z = 0; z < g.depth; ++z) {
    for (std::int64_t y = 0; y < g.rows; ++y) {
      for (std::int64_t x = 0; x < g.cols; ++x) {
        const double dz = static_cast<double>(z) - static_cast<double>(g.depth - 1) / 2;
        const double dy = static_cast<double>(y) - static_cast<double>(g.rows - 1) / 2;
        const double dx = static_cast<double>(x) - static_cast<double>(g.cols - 1) / 2;
        const double value = 0.5 * std::exp(-(dz * dz + dy * dy + dx * dx) / (s * s));
        out[k++] = static_cast<Real>(v ? value : 1.0 - value);
      }
    }
  }
  return out;
}

template <class Real>
int write(const io::RunMetadata& meta, const std::string& path, std::int64_t stop_after) {
  io::RunFileWriter writer(path, meta, /*overwrite=*/true);
  const Grid& g = meta.problem.grid;
  for (std::int64_t i = 0; i < meta.images; ++i) {
    const std::vector<Real> u = ball<Real>(g, i, false), v = ball<Real>(g, i, true);
    writer.append((i + 1) * meta.steps_per_image, u.data(), v.data());
    if (i + 1 == stop_after) {
      writer.flush();
      std::fflush(nullptr);
      ::_exit(0);  // the file left open, as kill -9 leaves it
    }
    if (i == meta.images / 2) writer.save_checkpoint(i + 1, u.data(), v.data());
  }
  const std::vector<Real> u = ball<Real>(g, meta.images - 1, false),
                          v = ball<Real>(g, meta.images - 1, true);
  writer.save_checkpoint(meta.images, u.data(), v.data());
  writer.finish("complete");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: %s FILE DEPTH ROWS COLS IMAGES [single|double] [v|u,v] [stop-after=N]\n",
                 argv[0]);
    return 2;
  }
  io::RunMetadata meta;
  meta.problem.grid = {std::atoll(argv[3]), std::atoll(argv[4]), std::atoll(argv[2])};
  meta.problem.stencil =
      meta.problem.grid.volume() ? Stencil::seven_point() : Stencil::oono_puri();
  meta.problem.params.feed = 0.03;
  meta.problem.params.kill = 0.06;
  meta.images = std::atoll(argv[5]);
  meta.steps_per_image = 10;
  meta.fields = {false, true};
  meta.backend = "test";
  meta.version = "test";
  std::int64_t stop_after = 0;
  for (int a = 6; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "double") meta.problem.precision = Precision::Double;
    if (arg == "u,v") meta.fields = {true, true};
    if (arg.rfind("stop-after=", 0) == 0) stop_after = std::atoll(arg.c_str() + 11);
  }
  try {
    return meta.problem.precision == Precision::Double
               ? write<double>(meta, argv[1], stop_after)
               : write<float>(meta, argv[1], stop_after);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
