// The progress bar on stderr (a terminal only) and the closing one-line summary.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

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

std::string format_rate(double cell_updates_per_s);  // "5.41 Gcell-updates/s"
std::string format_duration(double seconds);         // "1 m 12 s", "3.2 s"

}  // namespace grayscott::pipeline
