// Continuing a run from its file: what the file says about the run, readying it for MPI ranks,
// and the newest checkpoint's state.
#include <algorithm>
#include <stdexcept>

#include "io/files/hdf5.hpp"
#include "io/files/problem_attributes.hpp"
#include "io/files/reader.hpp"
#include "io/files/run_file.hpp"
#include "io/files/writer_process.hpp"
#include "io/files/xdmf.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

// The run file's chunked datasets.
constexpr const char* run_chunked_datasets[] = {
    "v", "u", "step", "time", "checkpoint/u", "checkpoint/v", "initial_state"};

}  // namespace

RunFileState read_run_state(const fs::path& path) {
  RunFileReader file(path);
  refuse_if_being_written(path, live_writer(file), "continue");
  refuse_to_replace_what_is_no_companion(path, "a continued run");
  if (file.has_attribute("kind") && file.attribute_string("kind") == "sweep") {
    throw InvalidInput(path.string() +
                       " is a sweep file: continue it with grayscott sweep --resume");
  }
  for (const char* name : {"rows", "cols", "images", "steps_per_image", "status", "precision"}) {
    if (!file.has_attribute(name)) {
      throw InvalidInput(path.string() + " is not a grayscott run file (no attribute " + name +
                         ")");
    }
  }
  RunFileState state;
  state.identity = file.identity();
  RunMetadata& m = state.meta;
  Problem& p = m.problem;
  p = read_problem_attributes(file);
  p.params.feed = file.attribute_double("feed");
  p.params.kill = file.attribute_double("kill");
  m.images = file.attribute_int64("images");
  m.steps_per_image = file.attribute_int64("steps_per_image");
  m.fields = file.image_fields();
  m.initial = read_initial_attributes(file);
  if (m.initial.kind == InitialKind::Noise) {
    m.initial.seed = static_cast<std::uint64_t>(file.attribute_int64("seed"));
  }
  m.analysis = read_analysis_attributes(file);
  m.backend = file.attribute_string("backend");
  m.version = file.attribute_string("version");
  state.status = file.attribute_string("status");
  state.images_in_file = static_cast<std::int64_t>(file.read_int64("step").size());
  // Files of earlier versions placed the chunks of a single process's file at their first write.
  for (const char* name : run_chunked_datasets) {
    if (!file.has_field(name)) continue;
    if (!file.places_chunks_as_it_grows(name)) state.extendable_in_parallel = false;
    if (file.unplaced_chunks(name) > 0) state.every_chunk_placed = false;
  }
  if (file.has_field("checkpoint/images")) {
    for (std::int64_t n : file.read_int64("checkpoint/images")) {
      // A checkpoint never runs ahead of the images durable before it.
      if (n <= state.images_in_file) state.checkpoint_images = std::max(state.checkpoint_images, n);
    }
  }
  state.initial_state_stored =
      file.has_field("initial_state") &&
      file.dataset_attribute_string("initial_state", "status") == "written";
  if (m.analysis.until_steady > 0 && file.has_field("stats/change_rms_per_step")) {
    state.steady = steady_history(m.analysis, file.read_doubles("stats/change_rms_per_step"),
                                  state.checkpoint_images);
  }
  return state;
}

void place_unwritten_run_chunks(const fs::path& path) {
  h5::place_unwritten_chunks(path.string(), run_chunked_datasets);
}

namespace {

// This process's block of [index] of a dataset of whole states ([n, rows, cols], a volume's
// [n, depth, rows, cols]) into `out`, in the run's precision.
template <class Real>
void read_state_block(hid_t file, const fs::path& path, const std::string& name, hsize_t index,
                      std::int64_t row_begin, std::int64_t rows, std::int64_t col_begin,
                      std::int64_t cols, std::int64_t plane_begin, std::int64_t planes,
                      std::vector<Real>& out) {
  h5::Id dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "open /" + name);
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank != 3 && rank != 4) {
    throw InvalidInput(path.string() + ": /" + name + " is not a dataset of images");
  }
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  if (index >= dims[0]) throw InvalidInput(path.string() + ": /" + name + " holds too few states");
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = index, count[0] = 1;
  const std::size_t row_axis = dims.size() - 2;
  if (rows > 0) {
    start[row_axis] = static_cast<hsize_t>(row_begin);
    start[row_axis + 1] = static_cast<hsize_t>(col_begin);
    count[row_axis] = static_cast<hsize_t>(rows);
    count[row_axis + 1] = static_cast<hsize_t>(cols);
  }
  if (rank == 4 && planes > 0) {
    start[1] = static_cast<hsize_t>(plane_begin);
    count[1] = static_cast<hsize_t>(planes);
  }
  hsize_t values = 1;
  for (hsize_t n : count) values *= n;
  out.resize(values);
  h5::read_block(dataset, start, count, h5::native_type<Real>(), out.data(),
                 "/" + name + " from " + path.string());
}

}  // namespace

template <class Real>
void read_checkpoint(const fs::path& path, std::int64_t row_begin, std::int64_t rows,
                     std::int64_t col_begin, std::int64_t cols, std::vector<Real>& u,
                     std::vector<Real>& v, std::int64_t plane_begin, std::int64_t planes) {
  h5::silence_library_errors();
  h5::Id file(open_for_reading(path), H5Fclose, "open " + path.string());
  h5::Id images_set(H5Dopen2(file, "checkpoint/images", H5P_DEFAULT), H5Dclose,
                    "open /checkpoint/images in " + path.string());
  CheckpointSlots slots;
  h5::check(
      H5Dread(images_set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, slots.marks().data()),
      "read /checkpoint/images");
  const int slot = slots.newest(0);
  const std::int64_t images_done = slots.newest_images(0);
  if (images_done <= 0) throw std::logic_error("read_checkpoint: the file has no checkpoint");
  // A field the run writes is its last image; the others are in the checkpoint's slot.
  auto read = [&](const char* field, std::vector<Real>& out) {
    const bool written = H5Lexists(file, field, H5P_DEFAULT) > 0;
    const std::string name = written ? std::string(field) : std::string("checkpoint/") + field;
    const hsize_t index =
        written ? static_cast<hsize_t>(images_done - 1) : static_cast<hsize_t>(slot);
    read_state_block<Real>(file, path, name, index, row_begin, rows, col_begin, cols, plane_begin,
                           planes, out);
  };
  read("u", u);
  read("v", v);
}

template <class Real>
void read_initial_state(const fs::path& path, std::int64_t row_begin, std::int64_t rows,
                        std::int64_t col_begin, std::int64_t cols, std::vector<Real>& u,
                        std::vector<Real>& v, std::int64_t plane_begin, std::int64_t planes) {
  h5::silence_library_errors();
  h5::Id file(open_for_reading(path), H5Fclose, "open " + path.string());
  if (H5Lexists(file, "initial_state", H5P_DEFAULT) <= 0) {
    throw InvalidInput(path.string() +
                       " records a custom initial state but holds no /initial_state");
  }
  read_state_block<Real>(file, path, "initial_state", 0, row_begin, rows, col_begin, cols,
                         plane_begin, planes, u);
  read_state_block<Real>(file, path, "initial_state", 1, row_begin, rows, col_begin, cols,
                         plane_begin, planes, v);
}

template void read_initial_state<float>(const fs::path&, std::int64_t, std::int64_t, std::int64_t,
                                        std::int64_t, std::vector<float>&, std::vector<float>&,
                                        std::int64_t, std::int64_t);
template void read_initial_state<double>(const fs::path&, std::int64_t, std::int64_t, std::int64_t,
                                         std::int64_t, std::vector<double>&, std::vector<double>&,
                                         std::int64_t, std::int64_t);
template void read_checkpoint<float>(const fs::path&, std::int64_t, std::int64_t, std::int64_t,
                                     std::int64_t, std::vector<float>&, std::vector<float>&,
                                     std::int64_t, std::int64_t);
template void read_checkpoint<double>(const fs::path&, std::int64_t, std::int64_t, std::int64_t,
                                      std::int64_t, std::vector<double>&, std::vector<double>&,
                                      std::int64_t, std::int64_t);

}  // namespace grayscott::io
