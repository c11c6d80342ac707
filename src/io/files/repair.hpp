// What a grayscott file holds and what it needs (`grayscott info FILE`), and making a file left
// by kill -9, a crash or a full disk readable by every reader (`grayscott repair FILE`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace grayscott::io {

// A run or sweep file as `grayscott info FILE` describes it.
struct FileReport {
  bool sweep = false;
  std::int64_t members = 1;
  Problem problem;  // feed and kill: the run's (a sweep's are per member)
  std::int64_t images_requested = 0;
  std::int64_t images = 0;  // counted in /step (a sweep: per member, every image, written or not)
  // A sweep: each member's images complete in the file, its first ones (/images_written; the
  // images of its checkpoint in a file of an earlier grayscott).
  std::vector<std::int64_t> images_written;
  std::int64_t complete_images() const {
    return std::accumulate(images_written.begin(), images_written.end(), std::int64_t{0});
  }
  std::int64_t steps_per_image = 0;
  std::string fields;  // "v", "u", "u,v"
  std::string status;
  std::string version;
  std::int64_t checkpoint_images = 0;  // the newest valid checkpoint; 0: none
  // A sweep: the images of the oldest of its members' newest checkpoints.
  std::int64_t least_checkpoint_images = 0;
  // HDF5 marks the file open for writing: only SWMR readers open it until it is repaired (or
  // continued). True of a file being written as well.
  bool marked_open = false;
  // The process that writes it, when it runs on this machine (0: none known to be alive).
  std::int64_t live_writer = 0;
  // A run's datasets along time hold more entries than /step counts images (left by a kill, or
  // by an earlier grayscott's write over MPI ranks that failed): readers such as
  // xarray refuse them until they are cut.
  bool sizes_past_count = false;
  bool needs_repair() const {
    return live_writer == 0 && (marked_open || status == "running" || sizes_past_count);
  }
};

// Reads what the file says about itself without changing it. Throws InvalidInput when it is not a
// grayscott file.
FileReport inspect_file(const std::filesystem::path& path);

struct RepairOutcome {
  FileReport before;
  std::int64_t images = 0;  // counted after the repair (a sweep: its members' complete images)
  std::string status;       // after the repair
  bool changed = false;     // anything was written besides the .xmf (a writer's mark cleared)
  bool companion_written = false;  // the .xmf was (re)written; false: it was current
};

// Turns a file whose writer was killed (or ran out of disk) into one every reader opens: HDF5's
// mark of a file open for writing cleared, /v, /u, /time and /stats cut to the images /step counts
// (the complete ones: a kill can leave larger sizes than the images flushed), the status "killed
// after image N" where it still said "running", and the .xmf rewritten. A sweep's members are
// counted each (cut_sweep_to_complete_images: /images_written, and what lies past it read as never
// written), its status "killed with N of M images complete". Changes nothing else, so a second
// repair finds nothing to do. Refuses (InvalidInput) a file that is not a grayscott file and one
// whose writer still runs on this machine.
RepairOutcome repair_file(const std::filesystem::path& path);

// Cuts a closed run file's datasets along time (/v, /u, /time, /stats) to the images /step
// counts, in place, by this process alone: a file whose writes over MPI ranks failed.
void cut_run_to_counted_images(const std::filesystem::path& path);

}  // namespace grayscott::io
