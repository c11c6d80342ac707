#include "io/files/repair.hpp"

#include <hdf5.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/statistics.hpp"
#include "io/files/checkpoint_slots.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/output_path.hpp"
#include "io/files/problem_attributes.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"
#include "io/files/sweep_file.hpp"
#include "io/files/writer_process.hpp"
#include "io/files/xdmf.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

// Whether HDF5 refuses to open the file as an ordinary reader: its superblock still marks it
// open for writing (a writer at work, or one that was killed).
bool marked_open_for_writing(const fs::path& path) {
  h5::silence_library_errors();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file >= 0) {
    H5Fclose(file);
    return false;
  }
  H5Eclear2(H5E_DEFAULT);
  return true;
}

std::string fields_of(const RunFileReader& file) {
  return FieldSet{file.has_field("u"), file.has_field("v")}.text();
}

hsize_t extent_of(hid_t dataset, int axis) {
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  std::vector<hsize_t> dims(
      static_cast<std::size_t>(std::max(1, H5Sget_simple_extent_ndims(space))));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims[static_cast<std::size_t>(axis)];
}

// A run's datasets along time: each holds one entry an image, as many as /step counts once the
// file is whole (a kill, or a write over MPI ranks that failed, can leave them longer).
std::vector<std::string> run_datasets_along_time() {
  std::vector<std::string> names{"v", "u", "time", "stats/v_histogram", "stats/class"};
  for (const char* name : analysis::statistics_names) names.push_back(std::string("stats/") + name);
  for (const char* name : analysis::classification_names)
    names.push_back(std::string("stats/") + name);
  return names;
}

bool exists(hid_t file, const std::string& name) {
  const auto slash = name.find('/');
  if (slash != std::string::npos &&
      H5Lexists(file, name.substr(0, slash).c_str(), H5P_DEFAULT) <= 0)
    return false;
  return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
}

// Cuts a run's datasets along time to the `images` /step counts.
void cut_to_counted_images(hid_t file, std::int64_t images, const fs::path& path) {
  const auto n = static_cast<hsize_t>(images);
  for (const std::string& name : run_datasets_along_time()) {
    if (!exists(file, name)) continue;
    h5::Id dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose,
                   "open /" + name + " in " + path.string());
    if (extent_of(dataset, 0) <= n) continue;
    h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
    std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    dims[0] = n;
    h5::check(H5Dset_extent(dataset, dims.data()), "cut /" + name + " to the images /step counts");
  }
}

}  // namespace

void cut_run_to_counted_images(const fs::path& path) {
  h5::silence_library_errors();
  h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open " + path.string());
  h5::Id step(H5Dopen2(file, "step", H5P_DEFAULT), H5Dclose, "open /step in " + path.string());
  cut_to_counted_images(file, static_cast<std::int64_t>(extent_of(step, 0)), path);
  step.reset();
  if (H5Fclose(file.release()) < 0) h5::fail("close " + path.string());
}

FileReport inspect_file(const fs::path& path) {
  check_readable_file(path);
  FileReport report;
  report.marked_open = marked_open_for_writing(path);
  RunFileReader file(path);
  for (const char* name : {"rows", "cols", "images", "steps_per_image", "status", "precision"}) {
    if (!file.has_attribute(name)) {
      throw InvalidInput(path.string() + " is not a grayscott file (no attribute " + name + ")");
    }
  }
  report.sweep = file.has_attribute("kind") && file.attribute_string("kind") == "sweep";
  report.problem = read_problem_attributes(file);
  if (!report.sweep) {
    report.problem.params.feed = file.attribute_double("feed");
    report.problem.params.kill = file.attribute_double("kill");
  }
  report.images_requested = file.attribute_int64("images");
  report.steps_per_image = file.attribute_int64("steps_per_image");
  report.fields = fields_of(file);
  report.status = file.attribute_string("status");
  report.version = file.has_attribute("version") ? file.attribute_string("version") : "";
  if (report.sweep) {
    check_members_of(file);
    const auto shape = file.shape(file.has_field("v") ? "v" : "u");
    report.members = shape.at(0);
    report.images = shape.at(1);
  } else {
    report.images = static_cast<std::int64_t>(file.read_int64("step").size());
    for (const std::string& name : run_datasets_along_time()) {
      if (file.has_field(name) && file.shape(name).at(0) > report.images)
        report.sizes_past_count = true;
    }
  }
  if (file.has_field("checkpoint/images")) {
    const std::vector<std::int64_t> marks = file.read_int64("checkpoint/images");
    for (std::int64_t n : marks) {
      // A run's checkpoint never runs ahead of the images durable before it.
      if (report.sweep || n <= report.images) {
        report.checkpoint_images = std::max(report.checkpoint_images, n);
      }
    }
    if (report.sweep) {
      // Each member's newest; the members' may differ (a sweep stopped within a batch).
      CheckpointSlots slots(report.members);
      slots.marks() = marks;
      report.least_checkpoint_images = report.checkpoint_images;
      for (std::int64_t m = 0; m < report.members; ++m)
        report.least_checkpoint_images =
            std::min(report.least_checkpoint_images, slots.newest_images(m));
    }
  }
  if (report.sweep) {
    if (file.has_field("images_written")) {
      report.images_written = file.read_int64("images_written");
    } else if (file.has_field("checkpoint/images")) {
      CheckpointSlots slots(report.members);
      slots.marks() = file.read_int64("checkpoint/images");
      for (std::int64_t m = 0; m < report.members; ++m)
        report.images_written.push_back(slots.newest_images(m));
    }
  }
  report.live_writer = live_writer(file);
  return report;
}

namespace {

// A writer that opened the file without SWMR and stopped before it closed it (a repair or a
// resume cut short: they open it so before it is written in SWMR mode) leaves a mark no reader
// accepts: cleared here as `h5clear -s` does. HDF5's lock on the file refuses this while such a
// writer still has it open. True when there was a mark to clear.
bool clear_mark_left_without_swmr(const fs::path& path) {
  h5::silence_library_errors();
  if (const hid_t readable = open_for_reading(path); readable >= 0) {
    H5Fclose(readable);
    return false;
  }
  const bool without_swmr = marked_open_without_swmr();
  H5Eclear2(H5E_DEFAULT);
  if (!without_swmr) return false;  // inspect_file says why it cannot be read
  h5::Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  h5::clear_writer_marks_on_open(fapl);
  h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose,
              "open " + path.string() + " to clear the mark of a writer that stopped");
  H5Fincrement_filesize(file, 0);  // a stopped writer may leave the end of file behind
  if (H5Fclose(file.release()) < 0) h5::fail("close " + path.string());
  return true;
}

}  // namespace

RepairOutcome repair_file(const fs::path& path) {
  check_readable_file(path);
  refuse_to_replace_what_is_no_companion(path, "repair");
  RepairOutcome outcome;
  // A file that no reader opened, and that every reader opens now, is changed and said so.
  outcome.changed = clear_mark_left_without_swmr(path);
  outcome.before = inspect_file(path);
  const FileReport& before = outcome.before;
  refuse_if_being_written(path, before.live_writer, "repair");
  outcome.images = before.sweep ? before.complete_images() : before.images;
  outcome.status = before.status;
  if (before.needs_repair()) {
    h5::silence_library_errors();
    // The file's own format; the marks of a writer that is gone cleared as the file opens.
    h5::Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
    h5::clear_writer_marks_on_open(fapl);
    h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose,
                "open " + path.string() + " to repair it");
    H5Fincrement_filesize(file, 0);  // a killed writer may leave the end of file behind
    if (before.sweep) {
      const std::vector<std::int64_t> counts = cut_sweep_to_complete_images(file);
      outcome.images = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
    } else {
      cut_to_counted_images(file, before.images, path);
    }
    if (before.status == "running") {
      outcome.status = before.sweep
                           ? "killed with " + std::to_string(outcome.images) + " of " +
                                 std::to_string(before.members * before.images) + " images complete"
                           : "killed after image " + std::to_string(before.images);
      h5::rewrite_string_attribute(file, "status", outcome.status);
    }
    // Its writer is gone: the file records none, as a closed file does.
    record_no_writer(file);
    h5::check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush " + path.string());
    if (H5Fclose(file.release()) < 0) h5::fail("close " + path.string());
    outcome.changed = true;
  }
  // The companion, from where the file holds its images now.
  if (before.sweep) {
    const SweepFileState state = read_sweep_state(path);
    h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                "open " + path.string());
    h5::Id u, v;
    if (state.meta.fields.u) u = h5::Id(H5Dopen2(file, "u", H5P_DEFAULT), H5Dclose, "open /u");
    if (state.meta.fields.v) v = h5::Id(H5Dopen2(file, "v", H5P_DEFAULT), H5Dclose, "open /v");
    outcome.companion_written =
        write_sweep_xdmf(path, state.meta,
                         sweep_image_places(u.get(), v.get(), state.meta.members(),
                                            state.meta.images, state.meta.problem.grid.volume()));
  } else {
    outcome.companion_written = write_xdmf(path, read_run_state(path).meta, outcome.images);
  }
  return outcome;
}

}  // namespace grayscott::io
