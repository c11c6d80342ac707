// The run file's writer: its layout, images appended and counted, checkpoints, flushes, what a
// write error leaves, and the status it ends with.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <exception>
#include <system_error>

#include "analysis/classify.hpp"
#include "io/files/direct_writes.hpp"
#include "io/files/durability.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/output_path.hpp"
#include "io/files/problem_attributes.hpp"
#include "io/files/repair.hpp"
#include "io/files/run_file.hpp"
#include "io/files/writer_process.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

std::size_t element_size(Precision p) { return p == Precision::Single ? 4 : 8; }

}  // namespace

std::uint64_t run_output_bytes(const RunMetadata& meta) {
  const double fields = (meta.fields.u ? 1 : 0) + (meta.fields.v ? 1 : 0);
  const double image = bytes_of_an_image(static_cast<double>(meta.problem.grid.depth) *
                                         static_cast<double>(meta.problem.grid.rows) *
                                         static_cast<double>(meta.problem.grid.cols) *
                                         static_cast<double>(element_size(meta.problem.precision)));
  // In floating point: the product of absurd requests must not wrap around to a small number.
  // Images, the two checkpoint slots of the fields not written, a custom initial state's u and
  // v, what each image has beside it; the file's own metadata, and the room past its end.
  const double images = static_cast<double>(meta.images);
  const double initial = meta.initial.kind == InitialKind::Custom ? 2 : 0;
  const double bytes = fields * images * image + (2 * (2 - fields) + initial) * image +
                       images_in_whole_chunks(images) * bytes_beside_an_image(meta.analysis) +
                       metadata_bytes + metadata_room_past_end;
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

namespace {

// Dataset access without a chunk cache: each write goes to the file at once, so that a write the
// disk has no room for fails in that call (and is not counted), instead of at a later flush that
// may already have recorded the larger extent. Under SWMR, HDF5 1.10 holds what H5Dwrite writes
// until the next flush all the same: images go to their chunks directly (write_image).
h5::Id uncached_access() {
  h5::Id dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "create dataset access properties");
  h5::check(H5Pset_chunk_cache(dapl, 0, 0, 1.0), "turn the chunk cache off");
  return dapl;
}

hsize_t chunk_rows_for(std::int64_t rows, std::int64_t cols, Precision precision) {
  // One image per chunk (a volume: one plane per chunk), split by rows only where a plane exceeds
  // HDF5's 4 GiB chunk limit.
  const hsize_t max_chunk_rows = std::max<hsize_t>(
      1, (hsize_t{1} << 31) / (static_cast<hsize_t>(cols) * element_size(precision)));
  return std::min(static_cast<hsize_t>(rows), max_chunk_rows);
}

// Chunked, and each chunk placed in the file when the dataset grows rather than at its first
// write: parallel HDF5 writes only into chunks that are already placed (it cannot place them
// during a collective write), so a file one process wrote can then be continued over MPI. Nothing
// is written at placement (HDF5 would otherwise write zeros there first, through a buffer of one
// chunk: an image more of memory and of writing), since every chunk placed is written at once.
h5::Id growing_dataset_properties(int rank, const hsize_t* chunk) {
  h5::Id props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
  h5::check(H5Pset_chunk(props, rank, chunk), "set chunking");
  h5::check(H5Pset_alloc_time(props, H5D_ALLOC_TIME_EARLY), "place chunks as the dataset grows");
  h5::check(H5Pset_fill_time(props, H5D_FILL_TIME_NEVER), "write nothing at placement");
  return props;
}

}  // namespace

struct RunFileWriter::Handles {
  h5::Id file, u, v, step, time, checkpoint_u, checkpoint_v, checkpoint_images;
  WritingHere writing;   // while this process writes the file (live_writer)
  h5::Id initial_state;  // a custom initial state's u and v (none for a generated one)
  // Processes writing together through MPI-IO: agreed on after each collective write.
  std::unique_ptr<h5::WriteAgreement> agreement;
  // /stats/<statistics_names[i]> and /stats/v_histogram (none without statistics).
  std::vector<h5::Id> statistics;
  h5::Id histogram;
  // /stats/class and /stats/<classification_names[i]> (none without --classify).
  h5::Id pattern_class;
  std::vector<h5::Id> features;
  // Every dataset this writer holds open: a file opened through MPI-IO closes only without them.
  void close_datasets() {
    u.reset(), v.reset(), step.reset(), time.reset(), checkpoint_u.reset(), checkpoint_v.reset(),
        checkpoint_images.reset(), initial_state.reset(), histogram.reset(), pattern_class.reset();
    statistics.clear();
    features.clear();
  }
  // Where the datasets' reserved room lies.
  std::vector<ByteRange> rooms;
  void note_room(hid_t dataset) {
    if (const auto room = chunk_room(dataset)) rooms.push_back(*room);
  }
  // Where the images of each dataset written image by image (the fields, the checkpoint slots)
  // lie, made at its first image.
  std::vector<std::pair<hid_t, std::unique_ptr<h5::ImageLocator>>> locators;
  int image_axes = 2;  // of a plane's images; 3 for a volume's
  h5::ImageLocator& places_of(hid_t dataset) {
    for (auto& [id, locator] : locators) {
      if (id == dataset) return *locator;
    }
    locators.emplace_back(dataset, std::make_unique<h5::ImageLocator>(dataset, image_axes));
    return *locators.back().second;
  }
  CheckpointSlots slots;  // one member: the run
  DirectWrites direct;    // a single process's images, straight to the disk where it can
};

namespace {
// The default block is the whole image.
RunFileAccess with_block(RunFileAccess access, const Grid& grid) {
  if (access.rows <= 0 || access.cols <= 0) {
    access.row_begin = access.col_begin = 0;
    access.rows = grid.rows, access.cols = grid.cols;
  }
  if (access.planes <= 0) access.plane_begin = 0, access.planes = grid.depth;
  return access;
}

// Where this process's block of image `index` of a dataset of images lies: (start, count) along
// the dataset's axes (time, a volume's planes, rows, cols).
std::pair<std::vector<hsize_t>, std::vector<hsize_t>> block_of(hsize_t index,
                                                               const RunFileAccess& access,
                                                               const Grid& grid) {
  std::vector<hsize_t> start{index}, count{1};
  if (grid.volume()) {
    start.push_back(static_cast<hsize_t>(access.plane_begin));
    count.push_back(static_cast<hsize_t>(access.planes));
  }
  start.push_back(static_cast<hsize_t>(access.row_begin));
  start.push_back(static_cast<hsize_t>(access.col_begin));
  count.push_back(static_cast<hsize_t>(access.rows));
  count.push_back(static_cast<hsize_t>(access.cols));
  return {start, count};
}
}  // namespace

RunFileWriter::RunFileWriter(const fs::path& path, const RunMetadata& meta, bool overwrite,
                             const RunFileAccess& access)
    : h_(std::make_unique<Handles>()),
      path_(path),
      meta_(meta),
      access_(with_block(access, meta.problem.grid)) {
  h5::silence_library_errors();
  h_->image_axes = meta.problem.grid.volume() ? 3 : 2;
  const Problem& p = meta.problem;
  const fs::path partial = partial_name(
      path, access_.partial_tag.empty() ? std::to_string(::getpid()) : access_.partial_tag);
  try {
    h5::Id fapl = h5::writer_access(access_.file_access);
    h_->file = h5::Id(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose,
                      "create " + partial.string());
    if (access_.shared()) h_->agreement = std::make_unique<h5::WriteAgreement>(h_->file);
    if (!access_.shared()) h_->direct = DirectWrites(partial);  // the name moves; the file stays

    const auto cols = static_cast<hsize_t>(p.grid.cols);
    const hsize_t chunk_rows = chunk_rows_for(p.grid.rows, p.grid.cols, p.precision);
    const hid_t type = p.precision == Precision::Single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    const h5::Id uncached = uncached_access();
    // A volume's images are [depth, rows, cols], chunked one plane (of chunk_rows rows) at a time.
    auto make_field = [&](hid_t where, const char* name, hsize_t first, hsize_t first_max) {
      const std::vector<hsize_t> dims = h5::with_image_axes({first}, p.grid),
                                 max_dims = h5::with_image_axes({first_max}, p.grid);
      std::vector<hsize_t> chunk(dims.size(), 1);
      chunk[chunk.size() - 2] = chunk_rows;
      chunk.back() = cols;
      h5::Id space = h5::simple_space(dims, max_dims);
      h5::Id props = growing_dataset_properties(static_cast<int>(chunk.size()), chunk.data());
      return h5::Id(H5Dcreate2(where, name, type, space, H5P_DEFAULT, props, uncached), H5Dclose,
                    std::string("create dataset ") + name);
    };
    // The growing datasets have the run's image count as their largest size: HDF5 then finds
    // their chunks by arithmetic (its implicit index), so an image written changes no chunk
    // index, only the dataset's size in its header. Over MPI, where nothing orders what a flush
    // writes, a rank killed in a flush thus cannot leave an index naming chunks never placed.
    const auto most_images = static_cast<hsize_t>(std::max<std::int64_t>(meta.images, 1));
    if (meta.fields.v) {
      h_->v = make_field(h_->file, "v", 0, most_images);
      // The course's tools read the dataset "matrix".
      h5::check(H5Lcreate_hard(h_->file, "v", h_->file, "matrix", H5P_DEFAULT, H5P_DEFAULT),
                "link /matrix to /v");
    }
    if (meta.fields.u) h_->u = make_field(h_->file, "u", 0, most_images);
    {
      const hsize_t sdims[1] = {0}, smax[1] = {most_images},
                    schunk[1] = {std::min<hsize_t>(1024, most_images)};
      h5::Id space = h5::simple_space(sdims, smax);
      h5::Id props = growing_dataset_properties(1, schunk);
      h_->step =
          h5::Id(H5Dcreate2(h_->file, "step", H5T_STD_I64LE, space, H5P_DEFAULT, props, uncached),
                 H5Dclose, "create dataset step");
      // The model time of each image, step x dt, grows with the images as /step does.
      h_->time =
          h5::Id(H5Dcreate2(h_->file, "time", H5T_IEEE_F64LE, space, H5P_DEFAULT, props, uncached),
                 H5Dclose, "create dataset time");
    }
    {
      // The axes' names and coordinates, as dimension scales: /v and /u are (time, y, x), a
      // volume's (time, z, y, x), /step is (time); xarray and netCDF-4 readers read them (see
      // docs/file-format.md).
      h5::make_time_scale(h_->time);
      const h5::GridScales grid =
          h5::create_grid_scales(h_->file, p.grid.rows, p.grid.cols, access_.writes_companions,
                                 access_.transfer, p.grid.depth);
      std::vector<hid_t> field_axes{h_->time};
      if (p.grid.volume()) field_axes.push_back(grid.z);
      field_axes.push_back(grid.y);
      field_axes.push_back(grid.x);
      for (const h5::Id* field : {&h_->v, &h_->u}) {
        if (field->get() < 0) continue;
        h5::attach_scales(*field, field_axes);
        h5::write_attribute(*field, "coordinates", std::string("step"));
      }
      h5::attach_scales(h_->step, std::span<const hid_t>(field_axes.data(), 1));
      if (meta.initial.kind == InitialKind::Custom) {
        // The state the run started from, [0] u and [1] v: not generated from the attributes,
        // so kept for the record and for a continued run that has no checkpoint yet. Its first
        // axis is a scale of its own, so that netCDF readers (xarray) name every axis.
        h_->initial_state = make_field(h_->file, "initial_state", 2, 2);
        const h5::Id field_axis = h5::create_index_scale(
            h_->file, "initial_field", 2, access_.writes_companions, access_.transfer);
        h5::write_attribute(field_axis, "long_name",
                            std::string("field of the initial state: 0 u, 1 v"));
        field_axes.front() = field_axis;
        h5::attach_scales(h_->initial_state, field_axes);
        h5::write_attribute(h_->initial_state, "fields", std::string("u,v"));
        // "written" once its values are on the disk: a run killed before that has none to give.
        h5::write_attribute(h_->initial_state, "status", std::string("being written"));
      }
    }
    if (meta.analysis.statistics) {
      // One value per image each, along the images' time axis; the histogram's counts per image
      // along a second axis of its bins.
      h5::Id group(H5Gcreate2(h_->file, "stats", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                   "create group stats");
      const hsize_t sdims[1] = {0}, smax[1] = {most_images},
                    schunk[1] = {std::min<hsize_t>(1024, most_images)};
      h5::Id space = h5::simple_space(sdims, smax);
      h5::Id props = growing_dataset_properties(1, schunk);
      const hid_t time_axis[1] = {h_->time};
      for (const char* name : analysis::statistics_names) {
        h5::Id dataset(H5Dcreate2(group, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, props, uncached),
                       H5Dclose, std::string("create dataset stats/") + name);
        h5::attach_scales(dataset, time_axis);
        h_->statistics.push_back(std::move(dataset));
      }
      const auto bins = static_cast<hsize_t>(meta.analysis.statistics->bins);
      const hsize_t hdims[2] = {0, bins}, hmax[2] = {most_images, bins},
                    hchunk[2] = {std::max<hsize_t>(1, std::min<hsize_t>(64, most_images)), bins};
      h5::Id hspace = h5::simple_space(hdims, hmax);
      h5::Id hprops = growing_dataset_properties(2, hchunk);
      h_->histogram = h5::Id(
          H5Dcreate2(group, "v_histogram", H5T_STD_U64LE, hspace, H5P_DEFAULT, hprops, uncached),
          H5Dclose, "create dataset stats/v_histogram");
      // Its bins as an index axis of their own, so that netCDF readers name both axes.
      const h5::Id bin_axis = h5::create_index_scale(group, "v_bin", meta.analysis.statistics->bins,
                                                     access_.writes_companions, access_.transfer);
      h5::write_attribute(bin_axis, "long_name",
                          std::string("bin of the histogram of v (its range: v_histogram's)"));
      const hid_t histogram_axes[2] = {h_->time, bin_axis};
      h5::attach_scales(h_->histogram, histogram_axes);
      const std::vector<double> range{meta.analysis.statistics->low,
                                      meta.analysis.statistics->high};
      h5::write_attribute(h_->histogram, "range", range);
      if (meta.analysis.classify) {
        h_->pattern_class =
            h5::Id(H5Dcreate2(group, "class", H5T_STD_I64LE, space, H5P_DEFAULT, props, uncached),
                   H5Dclose, "create dataset stats/class");
        h5::attach_scales(h_->pattern_class, time_axis);
        h5::write_class_attributes(h_->pattern_class, analysis::pattern_class_names);
        for (const char* name : analysis::classification_names) {
          h5::Id dataset(
              H5Dcreate2(group, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, props, uncached),
              H5Dclose, std::string("create dataset stats/") + name);
          h5::attach_scales(dataset, time_axis);
          h_->features.push_back(std::move(dataset));
        }
      }
    }
    {
      // Two slots of the whole state: the newer valid one is the checkpoint.
      h5::Id group(H5Gcreate2(h_->file, "checkpoint", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose, "create group checkpoint");
      // Only the fields the images do not hold: the state after n images is /u[n-1], /v[n-1]
      // where those are written.
      if (!meta.fields.u) h_->checkpoint_u = make_field(group, "u", 2, 2);
      if (!meta.fields.v) h_->checkpoint_v = make_field(group, "v", 2, 2);
      const hsize_t dims[1] = {2};
      h5::Id space = h5::simple_space(dims);
      h_->checkpoint_images = h5::Id(
          H5Dcreate2(group, "images", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          H5Dclose, "create dataset checkpoint/images");
      h5::Id file_space(H5Dget_space(h_->checkpoint_images), H5Sclose, "get a dataspace");
      h5::Id mem_space = h5::simple_space(dims);
      if (!access_.writes_companions) {
        h5::check(H5Sselect_none(file_space), "select nothing");
        h5::check(H5Sselect_none(mem_space), "select nothing");
      }
      h5::check(H5Dwrite(h_->checkpoint_images, H5T_NATIVE_INT64, mem_space, file_space,
                         access_.transfer, h_->slots.marks().data()),
                "write checkpoint/images");
    }
    {
      // Growing a dataset of fixed largest size the first time reserves room for all of it;
      // done here, the file's end moves no more while images arrive (the file has the finished
      // run's size from the start; images not yet written take no disk). A flush writes the
      // file's end last: a rank killed in it would otherwise leave a dataset whose data lies
      // past the recorded end, which no reader opens.
      for (const h5::Id* dataset : {&h_->v, &h_->u, &h_->step, &h_->time}) {
        if (dataset->get() < 0) continue;
        h5::Id space(H5Dget_space(*dataset), H5Sclose, "get a dataspace");
        hsize_t dims[4] = {0, 0, 0, 0};
        H5Sget_simple_extent_dims(space, dims, nullptr);
        dims[0] = 1;
        h5::check(H5Dset_extent(*dataset, dims), "reserve room for the images");
        // Only the images' room is left a hole: /step and /time, 16 bytes an image, get their
        // disk blocks with the metadata, so that the images kept can be counted on a full disk.
        if (dataset == &h_->v || dataset == &h_->u) h_->note_room(*dataset);
        dims[0] = 0;
        h5::check(H5Dset_extent(*dataset, dims), "reserve room for the images");
      }
    }

    const hid_t root = h_->file;
    write_problem_attributes(root, p, meta.images, meta.steps_per_image);
    h5::write_attribute(root, "feed", p.params.feed);
    h5::write_attribute(root, "kill", p.params.kill);
    write_initial_attributes(root, meta.initial);
    if (meta.initial.kind == InitialKind::Noise) {
      h5::write_attribute(root, "seed", static_cast<std::int64_t>(meta.initial.seed));
      h5::write_attribute(root, "noise_amplitude", noise_amplitude);
    }
    write_analysis_attributes(root, meta.analysis);
    h5::write_attribute(root, "backend", meta.backend);
    h5::write_attribute(root, "version", meta.version);
    h5::write_attribute(root, "status", std::string("running"));
    // Who writes it, so that `grayscott repair` and `info` tell a running file from one whose
    // writer was killed.
    if (!access_.shared()) {
      h_->writing = record_writer(root);
    } else {
      h_->writing = record_shared_writers(root, access_.file_access);
    }
    h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + partial.string());
    // From here on readers may open the file while it grows; no new object may be created. The
    // file takes its name only then, so that a reader never finds it in another state.
    if (!access_.shared()) swmr_ = H5Fstart_swmr_write(h_->file) >= 0;
    // After SWMR's start, which cuts the file at its end (and any blocks past it); over MPI
    // after the flush above, which gave the file its size.
    give_metadata_its_blocks(partial);
    if (access_.writes_companions) {
      take_output_name(partial, path, overwrite);
      write_companion();  // no image yet: replaces any stale companion
    }
  } catch (...) {
    h_->close_datasets();
    h_->file.reset();
    std::error_code ignored;
    if (access_.writes_companions) fs::remove(partial, ignored);
    throw;
  }
}

RunFileWriter::RunFileWriter(const fs::path& path, const RunMetadata& meta, Continue from,
                             const RunFileAccess& access)
    : h_(std::make_unique<Handles>()),
      path_(path),
      meta_(meta),
      access_(with_block(access, meta.problem.grid)) {
  h5::silence_library_errors();
  h_->image_axes = meta.problem.grid.volume() ? 3 : 2;
  // Under the folder's lock, which a claim of the name takes too, held until this process has
  // recorded itself as the writer (below): only if the file is still the one read and no live
  // process writes it (another --resume may have opened it since it was read).
  std::optional<FolderLock> claiming;
  if (access_.writes_companions) claiming.emplace(path);
  refuse_to_continue_unless_agreed(path, from.read, access_.writes_companions, access_.file_access);
  h5::Id fapl = h5::writer_access(access_.file_access);
  h5::clear_writer_marks_on_open(fapl);
  h_->file = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose,
                    "open " + path.string() + " to continue it");
  if (access_.shared()) h_->agreement = std::make_unique<h5::WriteAgreement>(h_->file);
  // A killed writer may leave the superblock's end of file behind what it flushed.
  if (!access_.shared()) H5Fincrement_filesize(h_->file, 0);
  if (!access_.shared()) h_->direct = DirectWrites(path);
  open_datasets();
  written_ = durable_ = from.images_done;
  for (std::int64_t i = 0; i < from.images_done; ++i) {
    places_.push_back(image_places(static_cast<hsize_t>(i)));
  }
  h5::rewrite_string_attribute(h_->file, "status", "running");
  if (access_.shared()) {
    h_->writing = record_shared_writers(h_->file, access_.file_access);
  } else {
    h_->writing = record_writer(h_->file);
  }
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path.string());
  // Files of earlier versions written over MPI use the older format, which SWMR cannot use:
  // flushes still make the images durable, readers just cannot open the file while it is written.
  if (!access_.shared()) {
    swmr_ = H5Fstart_swmr_write(h_->file) >= 0;
    if (!swmr_) H5Eclear2(H5E_DEFAULT);
  }
  claiming.reset();
  give_metadata_its_blocks(path);
  if (from.images_done == meta_.images) complete_final_checkpoint();
}

void RunFileWriter::complete_final_checkpoint() {
  // A run killed after its last image: its final state is in one slot; the other gets it too,
  // as an uninterrupted run's file holds it (what the resume adds to the file, as a sweep does).
  const std::int64_t in0 = h_->slots.images(0, 0), in1 = h_->slots.images(1, 0);
  if (std::max(in0, in1) != meta_.images || in0 == in1) return;
  const hid_t mem_type = h5::native_type(meta_.problem.precision);
  // This process's block of the newest slot (over MPI ranks each rank's; alone the image), to
  // be written into the other as a checkpoint is (collectively over ranks).
  const auto [start, count] = block_of(in0 > in1 ? 0u : 1u, access_, meta_.problem.grid);
  const std::size_t bytes = static_cast<std::size_t>(access_.planes * access_.rows * access_.cols) *
                            H5Tget_size(mem_type);
  std::vector<std::byte> u(bytes), v(bytes);
  // The fields the images do not hold.
  h5::read_checkpoint_block(h_->checkpoint_u.get(), h_->checkpoint_v.get(), start, count, mem_type,
                            u.data(), v.data(), path_.string());
  h_->slots.save_into_older_slot(0, 1, meta_.images, slot_writes(u.data(), v.data()));
}

void RunFileWriter::open_datasets() {
  const h5::Id uncached = uncached_access();
  auto open = [&](const char* name) {
    return h5::Id(H5Dopen2(h_->file, name, uncached), H5Dclose,
                  std::string("open /") + name + " in " + path_.string());
  };
  if (meta_.fields.v) h_->v = open("v");
  if (meta_.fields.u) h_->u = open("u");
  h_->step = open("step");
  // Files written before the time coordinate have none.
  if (H5Lexists(h_->file, "time", H5P_DEFAULT) > 0) h_->time = open("time");
  if (meta_.analysis.statistics) {
    for (const char* name : analysis::statistics_names)
      h_->statistics.push_back(open((std::string("stats/") + name).c_str()));
    h_->histogram = open("stats/v_histogram");
    if (meta_.analysis.classify) {
      h_->pattern_class = open("stats/class");
      for (const char* name : analysis::classification_names)
        h_->features.push_back(open((std::string("stats/") + name).c_str()));
    }
  }
  if (!meta_.fields.u) h_->checkpoint_u = open("checkpoint/u");
  if (!meta_.fields.v) h_->checkpoint_v = open("checkpoint/v");
  h_->checkpoint_images = open("checkpoint/images");
  h5::check(H5Dread(h_->checkpoint_images, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, access_.transfer,
                    h_->slots.marks().data()),
            "read checkpoint/images");
}

RunFileWriter::~RunFileWriter() {
  if (h_ && h_->file.get() >= 0) {
    try {
      finish("incomplete: the run was interrupted");
    } catch (...) {
      // A destructor must not throw; the images already written stay in the file.
    }
  }
}

namespace {

// Writes this process's block into [index, block] of a dataset of images (of a volume: every
// plane of the block's rows and columns).
void write_block(hid_t dataset, hsize_t index, const RunFileAccess& access, const Grid& grid,
                 hid_t mem_type, const void* data, const std::string& what) {
  const auto [start, count] = block_of(index, access, grid);
  h5::write_block(dataset, start, count, mem_type, data, what, access.transfer);
}

// Below this, an image goes through the page cache: a direct write waits for the disk, which costs
// a small image more than the copy it saves.
constexpr std::size_t smallest_direct_image = std::size_t{64} << 10;

// Writes image `index` of a 3-D dataset of whole images (of `grid`, `element` bytes a value, in
// chunks of `chunk_rows` rows) straight to the disk at the places HDF5 gave its chunks in the
// file, chunks that follow each other in the file and in memory in one write (an image's chunks,
// a volume's planes, were placed in order: one write an image). Returns false where a piece
// cannot be written so (not aligned as the disk asks, or the file system declines) or the image
// is small: the caller then writes the image through HDF5, which writes the same bytes to the
// same places. HDF5 keeps no copy of these chunks (no chunk cache, nothing written at placement,
// and its own writes of whole images go straight to their chunks), so nothing of it goes stale.
bool write_image_directly(DirectWrites& direct, h5::ImageLocator& places, hsize_t index,
                          const Grid& grid, std::size_t element, const void* data,
                          const std::string& what) {
  // The file holds little-endian values: the memory's bytes are the file's only on such a CPU.
  if (!direct.usable() || std::endian::native != std::endian::little) return false;
  if (static_cast<std::size_t>(grid.cells()) * element < smallest_direct_image) return false;
  const auto rows = static_cast<hsize_t>(grid.rows), cols = static_cast<hsize_t>(grid.cols);
  const hsize_t chunk_rows = places.chunk_rows();
  if (chunk_rows == 0) return false;
  struct Chunk {
    const char* data;
    std::size_t bytes;
    haddr_t address;
  };
  std::vector<Chunk> chunks;
  // A volume's planes one after the other, each in chunks of rows.
  std::vector<hsize_t> leading{index};
  if (grid.volume()) leading.push_back(0);
  for (hsize_t plane = 0; plane < static_cast<hsize_t>(grid.depth); ++plane) {
    if (grid.volume()) leading.back() = plane;
    const char* plane_data = static_cast<const char*>(data) + plane * rows * cols * element;
    for (hsize_t row = 0; row < rows; row += chunk_rows) {
      const auto address = places.chunk_address(leading, row);
      if (!address) return false;
      const Chunk chunk{plane_data + row * cols * element,
                        static_cast<std::size_t>(std::min(chunk_rows, rows - row) * cols * element),
                        *address};
      Chunk* last = chunks.empty() ? nullptr : &chunks.back();
      // At most 1 GiB a write: Linux writes at most 2 GiB less a page at once, and a write cut
      // short there would leave the rest misaligned for the disk.
      if (last != nullptr && last->data + last->bytes == chunk.data &&
          last->address + last->bytes == chunk.address &&
          last->bytes + chunk.bytes <= (std::size_t{1} << 30)) {
        last->bytes += chunk.bytes;  // the next piece of the file and of memory: one write
      } else {
        chunks.push_back(chunk);
      }
    }
  }
  for (const Chunk& chunk : chunks) {
    if (!direct.accepts(chunk.data, chunk.bytes, chunk.address)) return false;
  }
  for (const Chunk& chunk : chunks) {
    if (!direct.write(chunk.data, chunk.bytes, chunk.address, what)) return false;
  }
  return true;
}

hsize_t first_extent(hid_t dataset) {
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  return dims[0];
}

}  // namespace

void RunFileWriter::append(std::int64_t step, const void* u, const void* v,
                           const analysis::ImageStatistics* statistics) {
  try {
    if (meta_.analysis.statistics && statistics == nullptr)
      throw std::logic_error("a run with statistics appends none");
    append_image(step, u, v);
    if (meta_.analysis.statistics) uncounted_statistics_.push_back(*statistics);
  } catch (const std::exception&) {
    after_write_error();
    rethrow_naming_a_full_disk(path_);
  }
}

void RunFileWriter::after_write_error() {
  write_failed_ = true;
  // Shrinking is collective under MPI, and a failure need not reach every rank alike.
  if (access_.shared()) return;
  // Every image whose writes completed (a failed append took its own back) is counted in /step
  // once flushed (its count needs no new room), and kept, made durable by one more flush. Only
  // if that fails too, keep what the last flush that succeeded made durable.
  try {
    make_images_durable();
  } catch (const std::exception&) {
    H5Eclear2(H5E_DEFAULT);
  }
  const std::int64_t complete = written_ - static_cast<std::int64_t>(uncounted_steps_.size());
  if (keep_images(complete)) {
    durable_ = complete;
    return;
  }
  H5Eclear2(H5E_DEFAULT);
  if (!keep_images(durable_)) H5Eclear2(H5E_DEFAULT);
}

bool RunFileWriter::keep_images(std::int64_t images) {
  // Shrinking changes metadata in place, which needs no new room.
  const auto n = static_cast<hsize_t>(images);
  const std::vector<hsize_t> extent = h5::with_image_axes({n}, meta_.problem.grid);
  const hsize_t steps[1] = {n};
  if (meta_.fields.v && first_extent(h_->v) > n) H5Dset_extent(h_->v, extent.data());
  if (meta_.fields.u && first_extent(h_->u) > n) H5Dset_extent(h_->u, extent.data());
  if (first_extent(h_->step) > n) H5Dset_extent(h_->step, steps);
  if (h_->time.get() >= 0 && first_extent(h_->time) > n) H5Dset_extent(h_->time, steps);
  for (const auto* group : {&h_->statistics, &h_->features})
    for (const h5::Id& dataset : *group)
      if (first_extent(dataset) > n) H5Dset_extent(dataset, steps);
  if (h_->pattern_class.get() >= 0 && first_extent(h_->pattern_class) > n)
    H5Dset_extent(h_->pattern_class, steps);
  if (h_->histogram.get() >= 0 && first_extent(h_->histogram) > n) {
    const hsize_t counts[2] = {n, static_cast<hsize_t>(meta_.analysis.statistics->bins)};
    H5Dset_extent(h_->histogram, counts);
  }
  written_ = images;
  uncounted_steps_.clear();
  uncounted_statistics_.clear();
  uncounted_described_ = false;
  if (places_.size() > static_cast<std::size_t>(images)) {
    places_.resize(static_cast<std::size_t>(images));
  }
  return H5Fflush(h_->file, H5F_SCOPE_GLOBAL) >= 0;
}

void RunFileWriter::write_image(hid_t dataset, hsize_t index, const void* data,
                                const std::string& what) {
  const Problem& p = meta_.problem;
  if (!access_.shared() && h_->direct.usable() &&
      write_image_directly(h_->direct, h_->places_of(dataset), index, p.grid,
                           element_size(p.precision), data, what)) {
    return;
  }
  const hsize_t leading[1] = {index};
  if (!access_.shared() && h_->places_of(dataset).write_image(leading, data, what)) return;
  const hid_t mem_type = h5::native_type(p.precision);
  if (!h_->agreement) {
    write_block(dataset, index, access_, p.grid, mem_type, data, what);
    return;
  }
  // Every process stops at the same write, so that none waits in the next one for the others.
  std::exception_ptr failed;
  try {
    write_block(dataset, index, access_, p.grid, mem_type, data, what);
  } catch (...) {
    failed = std::current_exception();
  }
  if (h_->agreement->any(failed != nullptr) && !failed)
    throw std::runtime_error(what + ": another process's part of it failed");
  if (failed) std::rethrow_exception(failed);
}

void RunFileWriter::append_image(std::int64_t step, const void* u, const void* v) {
  const Problem& p = meta_.problem;
  const auto n = static_cast<hsize_t>(written_);
  auto append_image = [&](const h5::Id& dataset, const void* data, const char* name) {
    // A continued run writes over the images it recomputes: the dataset never shrinks.
    const hsize_t before = first_extent(dataset);
    const std::vector<hsize_t> extent = h5::with_image_axes({std::max(before, n + 1)}, p.grid);
    h5::check(H5Dset_extent(dataset, extent.data()), std::string("grow dataset ") + name);
    try {
      write_image(dataset, n, data,
                  "write image " + std::to_string(n) + " of " + name + " to " + path_.string());
    } catch (...) {
      // Count no image that is not in the file. Over MPI the size stays: shrinking is collective,
      // and a failure need not reach every process alike; /step alone counts the images there.
      const std::vector<hsize_t> back = h5::with_image_axes({before}, p.grid);
      if (!access_.shared()) H5Dset_extent(dataset, back.data());
      throw;
    }
  };
  if (meta_.fields.v) append_image(h_->v, v, "v");
  if (meta_.fields.u) append_image(h_->u, u, "u");
  ++written_;
  // /step counts the images, so it grows only once they are flushed (make_images_durable):
  // nothing orders the metadata one flush writes, and a process killed inside it could leave
  // /step grown and not /v, /time or /stats.
  uncounted_steps_.push_back(step);
  if (!access_.shared()) start_writeback(h_->file);
}

// Writes `values` of the images appended since the last count into the 1-D dataset along time.
void RunFileWriter::write_uncounted_values(hid_t dataset, hid_t value_type, const void* values,
                                           const char* name) {
  const auto first = static_cast<hsize_t>(written_) - uncounted_steps_.size();
  const hsize_t count[1] = {uncounted_steps_.size()};
  // A continued run writes over the values it recomputes: the dataset never shrinks.
  const hsize_t extent[1] = {std::max(first_extent(dataset), first + count[0])};
  h5::check(H5Dset_extent(dataset, extent), std::string("grow dataset ") + name);
  h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const hsize_t start[1] = {first};
  h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
            std::string("select values of ") + name);
  h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, 1));
  // Every process takes part in a collective write; one of them brings the values.
  if (!access_.writes_companions) {
    h5::check(H5Sselect_none(file_space), std::string("select no ") + name);
    h5::check(H5Sselect_none(mem_space), std::string("select no ") + name);
  }
  h5::check(H5Dwrite(dataset, value_type, mem_space, file_space, access_.transfer, values),
            std::string("write ") + name + " to " + path_.string());
}

void RunFileWriter::describe_uncounted_images() {
  if (uncounted_steps_.empty() || uncounted_described_) return;
  const Problem& p = meta_.problem;
  std::vector<double> times(uncounted_steps_.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    times[i] = static_cast<double>(uncounted_steps_[i]) * p.params.dt;
  }
  if (h_->time.get() >= 0)
    write_uncounted_values(h_->time, H5T_NATIVE_DOUBLE, times.data(), "time");
  if (meta_.analysis.statistics)
    write_statistics(static_cast<hsize_t>(written_) - uncounted_steps_.size());
  uncounted_described_ = true;
}

void RunFileWriter::count_images() {
  if (uncounted_steps_.empty()) return;
  const auto first = static_cast<hsize_t>(written_) - uncounted_steps_.size();
  // The images' times and statistics, then their steps: /step, written last, never counts an
  // image whose values are not all there.
  describe_uncounted_images();
  write_uncounted_values(h_->step, H5T_NATIVE_INT64, uncounted_steps_.data(), "step");
  const hsize_t counted = first + uncounted_steps_.size();
  uncounted_steps_.clear();
  uncounted_statistics_.clear();
  uncounted_described_ = false;
  // Every process asks (metadata reads are collective over MPI); a continued run recounts the
  // images it writes over, which stay where they were.
  places_.resize(std::min<std::size_t>(places_.size(), first));
  for (hsize_t i = places_.size(); i < counted; ++i) places_.push_back(image_places(i));
}

void RunFileWriter::write_statistics(hsize_t first) {
  const std::size_t n = uncounted_statistics_.size();
  const auto bins = static_cast<hsize_t>(meta_.analysis.statistics->bins);
  const auto write = [&](hid_t dataset, int rank, hid_t value_type, const void* values,
                         const std::string& name) {
    const hsize_t count[2] = {n, bins};
    hsize_t extent[2] = {std::max(first_extent(dataset), first + n), bins};
    h5::check(H5Dset_extent(dataset, extent), "grow dataset " + name);
    h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
    const hsize_t start[2] = {first, 0};
    h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select values of " + name);
    h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, rank));
    // Every process takes part in a collective write; one of them brings the values (the same on
    // every process: the statistics are merged before they reach the writers).
    if (!access_.writes_companions) {
      h5::check(H5Sselect_none(file_space), "select no " + name);
      h5::check(H5Sselect_none(mem_space), "select no " + name);
    }
    h5::check(H5Dwrite(dataset, value_type, mem_space, file_space, access_.transfer, values),
              "write " + name + " to " + path_.string());
  };
  std::vector<double> values(n);
  for (std::size_t i = 0; i < h_->statistics.size(); ++i) {
    for (std::size_t k = 0; k < n; ++k)
      values[k] = analysis::statistics_values(uncounted_statistics_[k])[i];
    write(h_->statistics[i], 1, H5T_NATIVE_DOUBLE, values.data(),
          std::string("stats/") + analysis::statistics_names[i]);
  }
  std::vector<std::uint64_t> counts;
  counts.reserve(n * bins);
  for (const analysis::ImageStatistics& s : uncounted_statistics_)
    counts.insert(counts.end(), s.histogram.begin(), s.histogram.end());
  write(h_->histogram, 2, H5T_NATIVE_UINT64, counts.data(), "stats/v_histogram");
  if (!meta_.analysis.classify) return;
  for (std::size_t i = 0; i < h_->features.size(); ++i) {
    for (std::size_t k = 0; k < n; ++k)
      values[k] = analysis::classification_values(uncounted_statistics_[k])[i];
    write(h_->features[i], 1, H5T_NATIVE_DOUBLE, values.data(),
          std::string("stats/") + analysis::classification_names[i]);
  }
  std::vector<std::int64_t> classes(n);
  for (std::size_t k = 0; k < n; ++k) classes[k] = uncounted_statistics_[k].pattern_class;
  write(h_->pattern_class, 1, H5T_NATIVE_INT64, classes.data(), "stats/class");
}

void RunFileWriter::make_images_durable() {
  // The images, their times and statistics in one flush; nothing orders the metadata a flush
  // writes, so a process killed inside it may leave any of them grown and not the others.
  describe_uncounted_images();
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
  if (uncounted_steps_.empty()) return;
  // They are all in the file; now /step counts them, in a flush of its own.
  count_images();
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
}

void RunFileWriter::save_checkpoint(std::int64_t images_done, const void* u, const void* v,
                                    bool final_state) {
  try {
    final_state = final_state || images_done == meta_.images;
    const SlotWrites writes = slot_writes(u, v);
    if (final_state && h_->slots.empty(0)) {
      // No valid checkpoint to keep meanwhile (a run shorter than its checkpoint interval): both
      // slots written, then made durable and marked valid together, in half the syncs.
      h_->slots.save_into_both_slots(0, 1, images_done, writes);
      return;
    }
    h_->slots.save(0, 1, images_done, final_state, writes);
  } catch (const std::exception&) {
    after_write_error();
    rethrow_naming_a_full_disk(path_);
  }
}

void RunFileWriter::write_initial_state(const void* u, const void* v) {
  if (h_->initial_state.get() < 0) {
    throw std::logic_error("write_initial_state: the run's initial state is not a custom one");
  }
  try {
    const std::string what = "write the initial state to " + path_.string();
    write_image(h_->initial_state, 0, u, what);
    write_image(h_->initial_state, 1, v, what);
    h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
    if (!access_.shared()) sync_to_disk(h_->file);
    h5::rewrite_string_attribute(h_->initial_state, "status", "written");
    h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
    if (!access_.shared()) sync_to_disk(h_->file);
  } catch (const std::exception&) {
    after_write_error();
    rethrow_naming_a_full_disk(path_);
  }
}

SlotWrites RunFileWriter::slot_writes(const void* u, const void* v) {
  SlotWrites writes;
  // The state's fields the images do not hold.
  writes.write_state = [this, u, v](int slot) {
    const std::string what = "write the checkpoint to " + path_.string();
    if (!meta_.fields.u) write_image(h_->checkpoint_u, static_cast<hsize_t>(slot), u, what);
    if (!meta_.fields.v) write_image(h_->checkpoint_v, static_cast<hsize_t>(slot), v, what);
  };
  // The state, and the images it follows, reach the disk before the slot says it is valid.
  writes.make_state_durable = [this] {
    make_images_durable();
    if (!access_.shared()) sync_to_disk(h_->file);
  };
  writes.write_marks = [this](int first_slot, int slots) {
    h5::Id file_space(H5Dget_space(h_->checkpoint_images), H5Sclose, "get a dataspace");
    const hsize_t start[1] = {static_cast<hsize_t>(first_slot)},
                  count[1] = {static_cast<hsize_t>(slots)};
    h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select a checkpoint slot");
    h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, 1));
    if (!access_.writes_companions) {
      h5::check(H5Sselect_none(file_space), "select nothing");
      h5::check(H5Sselect_none(mem_space), "select nothing");
    }
    h5::check(H5Dwrite(h_->checkpoint_images, H5T_NATIVE_INT64, mem_space, file_space,
                       access_.transfer, h_->slots.marks().data() + first_slot),
              "write the checkpoint to " + path_.string());
  };
  writes.make_marks_durable = [this] {
    flush();
    if (!access_.shared()) sync_to_disk(h_->file);
  };
  return writes;
}

void RunFileWriter::flush() {
  try {
    make_images_durable();
  } catch (const std::exception&) {
    after_write_error();
    rethrow_naming_a_full_disk(path_);
  }
  durable_ = written_;
  // The companion lists exactly the images /step counts; each flush adds the new ones only. It
  // is written beside and renamed, so it needs room twice: where the disk has none, the images
  // (durable now) go on, and the companion is tried again at the next flush and at the end (one
  // process writes it: over MPI ranks its failure must not part them).
  if (access_.writes_companions) {
    try {
      write_companion();
    } catch (const std::exception&) {
      H5Eclear2(H5E_DEFAULT);
    }
  }
}

void RunFileWriter::give_metadata_its_blocks(const fs::path& where) {
  // The room reserved for the datasets' chunks stays a hole until written (du shows what is
  // written); every other byte of the file is metadata. A continued file's room is found from
  // its chunks; where a field holds no image yet, nothing is done.
  if (h_->rooms.empty()) {
    for (const h5::Id* dataset : {&h_->v, &h_->u}) {
      if (dataset->get() >= 0 && first_extent(*dataset) == 0) return;
    }
    for (const h5::Id* dataset : {&h_->v, &h_->u, &h_->checkpoint_u, &h_->checkpoint_v}) {
      if (dataset->get() >= 0 && first_extent(*dataset) > 0) h_->note_room(*dataset);
    }
  }
  // Over MPI ranks HDF5's descriptor is MPI-IO's: one process opens the file once more, since
  // rank 0 writes the metadata of a flush while the others wait for it to say it is done, and a
  // write that fails there for want of room leaves them waiting forever.
  if (access_.shared() && !access_.writes_companions) return;
  reserve_metadata_blocks(h_->file, h_->rooms,
                          access_.shared() ? std::optional<fs::path>(where) : std::nullopt);
}

ImagePlaces RunFileWriter::image_places(hsize_t index) const {
  ImagePlaces places;
  const hsize_t leading[1] = {index};
  if (meta_.fields.u) places.u = h_->places_of(h_->u).image_offset(leading);
  if (meta_.fields.v) places.v = h_->places_of(h_->v).image_offset(leading);
  return places;
}

void RunFileWriter::write_companion() {
  if (!companion_) {
    companion_ = std::make_unique<XdmfCompanion>(
        path_, "grayscott",
        [path = path_, grid = xdmf_grid_of(meta_), places = &places_](std::int64_t i) {
          return xdmf_run_step(path, grid, i, (*places)[static_cast<std::size_t>(i)]);
        });
  }
  try {
    companion_->write(static_cast<std::int64_t>(places_.size()));
  } catch (const std::exception& e) {
    // Named after the run's file, which the user asked for.
    throw std::runtime_error(path_.string() + ": its XDMF companion: " + e.what());
  }
}

void RunFileWriter::finish(const std::string& status) {
  if (h_->file.get() < 0) return;
  // Over MPI, before anything more is written: a failed write may have left the file's view
  // shifted (see h5::mend_file_view_after_failure).
  const bool failed_anywhere =
      access_.shared() && h5::mend_file_view_after_failure(h_->file, write_failed_);
  if (!access_.shared() && !write_failed_ && !uncounted_steps_.empty()) {
    // Images appended since the last flush (a run stopped by non-finite values or an error in
    // its stepping, with no flush after its last image): made durable and counted as a flush
    // does; where that fails, kept as after a failed write.
    try {
      make_images_durable();
    } catch (const std::exception&) {
      H5Eclear2(H5E_DEFAULT);
      after_write_error();
    }
  }
  if (write_failed_ && !access_.shared()) {
    // The images kept are durable (after_write_error). The status is rewritten in place, in the
    // heap that holds the file's strings, which has room for it: no new room on the disk is
    // needed. Should it fail all the same, the file is closed as it is, its status "running",
    // and status_recorded() says so (grayscott repair then records it).
    status_recorded_ = false;
    try {
      h5::rewrite_string_attribute(h_->file, "status", status);
      record_no_writer(h_->file);
      status_recorded_ = H5Fflush(h_->file, H5F_SCOPE_GLOBAL) >= 0;
    } catch (const std::exception&) {
    }
    H5Eclear2(H5E_DEFAULT);
    h_->close_datasets();
    if (H5Fclose(h_->file.release()) < 0) {
      H5Eclear2(H5E_DEFAULT);
      status_recorded_ = false;
    }
    swmr_ = false;
    h_->writing = WritingHere{};
    // The companion lists the images kept; where the disk has no room for it, the previous one
    // (which lists no more than those) stays.
    if (access_.writes_companions) {
      try {
        write_companion();
      } catch (const std::exception&) {
      }
    }
    return;
  }
  // The images appended since the last flush are not counted yet; closing flushes.
  if (!uncounted_steps_.empty()) make_images_durable();
  // The companion before the file says its writer has gone: once it says so, another process
  // may replace the file (--force), and a companion written after that would land beside the
  // new file. (Over ranks after a failed write, once the closed file is cut, below.)
  std::exception_ptr companion_failure;
  if (access_.writes_companions && !failed_anywhere) {
    try {
      write_companion();
    } catch (const std::exception&) {
      companion_failure = std::current_exception();
    }
  }
  // In place: a reader never finds the file in any other state than open for SWMR or closed.
  h5::rewrite_string_attribute(h_->file, "status", status);
  // Collective over MPI ranks, each writing the same values.
  record_no_writer(h_->file);
  h_->close_datasets();
  h_->writing = WritingHere{};  // closed or not, this process writes it no more
  if (H5Fclose(h_->file.release()) < 0) h5::fail("close " + path_.string());
  swmr_ = false;
  // Over MPI ranks the image of a failed write stays in /v's size (and its statistics'), past
  // what /step counts, which readers such as xarray refuse. Shrinking there is collective, and
  // after a failed write the processes' metadata caches no longer agree (it parted them); one
  // process cuts the closed file alone instead, in place, as grayscott repair does.
  if (failed_anywhere && access_.writes_companions) {
    try {
      cut_run_to_counted_images(path_);
    } catch (const std::exception&) {
      H5Eclear2(H5E_DEFAULT);  // grayscott repair cuts it
    }
    try {
      write_companion();
    } catch (const std::exception&) {
      companion_failure = std::current_exception();
    }
  }
  if (companion_failure) {
    try {
      std::rethrow_exception(companion_failure);
    } catch (const std::exception& e) {
      // The file is whole and says how the run ended; only its companion is missing or behind.
      throw std::runtime_error(e.what() + companion_remedy(path_, "run"));
    }
  }
}

}  // namespace grayscott::io
