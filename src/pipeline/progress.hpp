// The progress bar on stderr (a terminal only) and the closing one-line summary.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace grayscott::io {
struct RunMetadata;    // io/files/run_file.hpp
struct SweepMetadata;  // io/files/sweep_file.hpp
}  // namespace grayscott::io

namespace grayscott::pipeline {

class Progress {
 public:
  // `enabled`: draw the bar (stderr is a terminal and not --quiet). With no cell updates per
  // image (rendering), the bar shows no rate.
  Progress(std::int64_t total_images, double cell_updates_per_image, bool enabled);
  void update(std::int64_t images_done);
  void set_total(std::int64_t total_images) { total_ = total_images; }
  void clear();  // erase the bar before printing anything else
  double elapsed_seconds() const;

 private:
  std::int64_t total_;
  double cell_updates_per_image_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

// Where a run's notices go: "grayscott: ..." lines on stderr when none is given; the Python
// module makes them Python warnings (a notebook shows those, not the process's stderr).
using NoticeSink = std::function<void(const std::string& notice)>;

// Before a run or sweep writes its new file `path`: refuses it as io::check_output_path does,
// then, unless `quiet`, warns when its name does not end in .h5, .hdf5, .he5 or .nc (it is written
// as HDF5 all the same) and, when it will take more than about 1 GB, says what it will write
// ("1000 images of 1080x1920 (v): 8.3 GB on disk"), through `notices`.
void claim_output(const std::filesystem::path& path, bool overwrite, bool quiet,
                  const io::RunMetadata& run, const NoticeSink& notices = {});
void claim_output(const std::filesystem::path& path, bool overwrite, bool quiet,
                  const io::SweepMetadata& sweep, const NoticeSink& notices = {});

std::string format_rate(double cell_updates_per_s);  // "5.41 Gcell-updates/s"
std::string format_duration(double seconds);         // "1 m 12 s", "3.2 s"

}  // namespace grayscott::pipeline
