#include "pipeline/progress.hpp"

#include <cstdio>

#include "io/files/output_path.hpp"
#include "io/files/run_file.hpp"
#include "io/files/sweep_file.hpp"

namespace grayscott::pipeline {

using Clock = std::chrono::steady_clock;

Progress::Progress(std::int64_t total_images, double cell_updates_per_image, bool enabled)
    : total_(total_images),
      cell_updates_per_image_(cell_updates_per_image),
      enabled_(enabled),
      start_(Clock::now()),
      last_draw_(start_) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Progress::update(std::int64_t done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  // Redraw at most ten times a second, and always at the end.
  if (done < total_ && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  const double seconds = elapsed_seconds();
  const double fraction = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  const double rate =
      seconds > 0 ? static_cast<double>(done) * cell_updates_per_image_ / seconds : 0;
  const double left =
      done > 0 ? seconds * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
  std::fprintf(
      stderr, "\r[%s] image %lld/%lld  %s%s%s left   ", bar.c_str(), static_cast<long long>(done),
      static_cast<long long>(total_), cell_updates_per_image_ > 0 ? format_rate(rate).c_str() : "",
      cell_updates_per_image_ > 0 ? "  " : "", done > 0 ? format_duration(left).c_str() : "?");
  std::fflush(stderr);
}

void Progress::clear() {
  if (enabled_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

namespace {

void announce_output(const std::filesystem::path& path, const std::string& contents,
                     std::uint64_t bytes, bool quiet, const NoticeSink& notices) {
  if (quiet) return;
  const auto notice = [&](const char* kind, const std::string& text) {
    if (notices) return notices(text);
    std::fprintf(stderr, "grayscott: %s%s\n", kind, text.c_str());
  };
  const std::string extension = io::lowercase_extension(path);
  if (extension != ".h5" && extension != ".hdf5" && extension != ".he5" && extension != ".nc") {
    notice("warning: ",
           path.string() + " does not end in .h5 or .hdf5; it is written as HDF5 all the same");
  }
  if (bytes > 1'000'000'000) {
    char size[32];
    std::snprintf(size, sizeof size, "%.1f GB", static_cast<double>(bytes) / 1e9);
    notice("", "writing " + contents + " to " + path.string() + ": " + size + " on disk");
  }
}

// "1000 images of 1080x1920 (v)", "100 images of 64x64x64 (v)".
std::string describe_images(std::int64_t images, const Grid& grid, FieldSet fields) {
  return std::to_string(images) + " image" + (images == 1 ? "" : "s") + " of " + grid.text() +
         " (" +
         (fields.u && fields.v ? "u, v"
          : fields.u           ? "u"
                               : "v") +
         ")";
}

}  // namespace

void claim_output(const std::filesystem::path& path, bool overwrite, bool quiet,
                  const io::RunMetadata& run, const NoticeSink& notices) {
  const std::uint64_t bytes = io::run_output_bytes(run);
  io::check_output_path(path, overwrite, bytes);
  announce_output(path, describe_images(run.images, run.problem.grid, run.fields), bytes, quiet,
                  notices);
}

void claim_output(const std::filesystem::path& path, bool overwrite, bool quiet,
                  const io::SweepMetadata& sweep, const NoticeSink& notices) {
  const std::uint64_t bytes = io::sweep_output_bytes(sweep);
  io::check_output_path(path, overwrite, bytes);
  announce_output(path,
                  std::to_string(sweep.members()) + " members x " +
                      describe_images(sweep.images, sweep.problem.grid, sweep.fields),
                  bytes, quiet, notices);
}

std::string format_rate(double r) {
  char text[64];
  if (r >= 1e9)
    std::snprintf(text, sizeof text, "%.2f Gcell-updates/s", r / 1e9);
  else
    std::snprintf(text, sizeof text, "%.1f Mcell-updates/s", r / 1e6);
  return text;
}

std::string format_duration(double s) {
  char text[64];
  if (s < 60)
    std::snprintf(text, sizeof text, "%.1f s", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%d m %02d s", static_cast<int>(s) / 60,
                  static_cast<int>(s) % 60);
  else
    std::snprintf(text, sizeof text, "%d h %02d m", static_cast<int>(s) / 3600,
                  (static_cast<int>(s) / 60) % 60);
  return text;
}

}  // namespace grayscott::pipeline
