#include "io/files/sweep_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <optional>

#include "analysis/classify.hpp"
#include "io/files/durability.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/output_path.hpp"
#include "io/files/problem_attributes.hpp"
#include "io/files/reader.hpp"
#include "io/files/writer_process.hpp"
#include "io/files/xdmf.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

std::size_t element_size(Precision p) { return p == Precision::Single ? 4 : 8; }

// The datasets whose chunks one process places as it writes them.
constexpr const char* chunked_datasets[] = {"v", "u", "checkpoint/u", "checkpoint/v"};

// Creates a one-dimensional dataset and, when `write_data`, fills it (with MPI every rank creates
// it, one writes it).
void write_vector(hid_t file, const char* name, hid_t file_type, hid_t mem_type, std::size_t count,
                  const void* data, bool write_data) {
  const hsize_t dims[1] = {count};
  h5::Id space = h5::simple_space(dims);
  h5::Id dataset(H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose, std::string("create dataset ") + name);
  if (count > 0 && write_data) {
    h5::check(H5Dwrite(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
              std::string("write dataset ") + name);
  }
}

// /images_written [members] along the member axis (where the file has one), holding `counts`
// (written by the process with `write_values`; with MPI every rank creates it). Created where the
// file is open for creating objects: before SWMR writing starts.
void create_images_written(hid_t file, hid_t member_scale, std::span<const std::int64_t> counts,
                           bool write_values) {
  write_vector(file, "images_written", H5T_STD_I64LE, H5T_NATIVE_INT64, counts.size(),
               counts.data(), write_values);
  h5::Id dataset(H5Dopen2(file, "images_written", H5P_DEFAULT), H5Dclose, "open /images_written");
  if (member_scale >= 0) h5::attach_scales(dataset, std::span<const hid_t>(&member_scale, 1));
  h5::write_attribute(dataset, "long_name",
                      std::string("images of each member complete in the file: its first ones"));
}

// Writes the whole images of the block [start, start + count) of a dataset of images (its two
// leading axes: members and images, or checkpoint slots and members) from `data`, the block's
// images in order. A process alone writes them straight into their chunks
// (h5::ImageLocator::write_image: under SWMR, HDF5 would hold what H5Dwrite writes in memory until
// the next flush); processes sharing the file, or images not in whole chunks, through H5Dwrite.
void write_whole_images(hid_t dataset, const std::vector<hsize_t>& start,
                        const std::vector<hsize_t>& count, bool alone, const Problem& p,
                        const void* data, const std::string& what) {
  if (alone) {
    h5::ImageLocator places(dataset, p.grid.volume() ? 3 : 2);
    const std::size_t image_bytes =
        static_cast<std::size_t>(p.grid.cells()) * element_size(p.precision);
    const auto* image = static_cast<const unsigned char*>(data);
    bool written = true;
    for (hsize_t i = 0; i < count[0] && written; ++i) {
      for (hsize_t j = 0; j < count[1] && written; ++j, image += image_bytes) {
        const hsize_t leading[2] = {start[0] + i, start[1] + j};
        // Either every image or none: they are alike.
        written = places.write_image(leading, image, what);
      }
    }
    if (written) return;
  }
  h5::write_block(dataset, start, count, h5::native_type(p.precision), data, what);
}

}  // namespace

bool write_sweep_xdmf(const fs::path& h5_path, const SweepMetadata& meta,
                      const std::vector<ImagePlaces>& places) {
  const Problem& p = meta.problem;
  const XdmfGridInfo grid{p.grid.rows, p.grid.cols, meta.steps_per_image,
                          p.params.dt, p.precision, p.grid.depth};
  const auto members = static_cast<std::size_t>(meta.members());
  // The time steps some member reached: a stopped sweep's later ones hold nothing of the sweep.
  const auto has_place = [](const ImagePlaces& place) { return place.u || place.v; };
  std::int64_t steps = meta.images;
  while (steps > 0 &&
         std::none_of(places.begin() + static_cast<std::ptrdiff_t>((steps - 1) * members),
                      places.begin() + static_cast<std::ptrdiff_t>(steps * members), has_place)) {
    --steps;
  }
  XdmfCompanion companion(h5_path, "grayscott sweep", [&](std::int64_t i) {
    const auto first = places.begin() + static_cast<std::ptrdiff_t>(i * members);
    return xdmf_sweep_step(
        h5_path, grid, i,
        std::vector<ImagePlaces>(first, first + static_cast<std::ptrdiff_t>(members)));
  });
  return companion.write(steps);
}

std::vector<ImagePlaces> sweep_image_places(hid_t u, hid_t v, std::int64_t members,
                                            std::int64_t images, bool volume) {
  // Each member's images complete in the file: past its count an image is not the sweep's (a
  // stopped sweep leaves it unwritten, reading 0), and the companion leaves it out.
  std::vector<std::int64_t> complete(static_cast<std::size_t>(members), images);
  if (const hid_t any = v >= 0 ? v : u; any >= 0) {
    const h5::Id file(H5Iget_file_id(any), H5Fclose, "get the sweep's file");
    if (H5Lexists(file, "images_written", H5P_DEFAULT) > 0) {
      const h5::Id counts(H5Dopen2(file, "images_written", H5P_DEFAULT), H5Dclose,
                          "open /images_written");
      h5::check(H5Dread(counts, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, complete.data()),
                "read /images_written");
    }
  }
  std::vector<ImagePlaces> places;
  places.reserve(static_cast<std::size_t>(members * images));
  std::optional<h5::ImageLocator> u_places, v_places;
  const int axes = volume ? 3 : 2;
  if (u >= 0) u_places.emplace(u, axes);
  if (v >= 0) v_places.emplace(v, axes);
  for (std::int64_t i = 0; i < images; ++i) {
    for (std::int64_t m = 0; m < members; ++m) {
      const hsize_t leading[2] = {static_cast<hsize_t>(m), static_cast<hsize_t>(i)};
      ImagePlaces place;
      if (i >= complete[static_cast<std::size_t>(m)]) {
        places.push_back(place);  // not the sweep's (yet): left out
        continue;
      }
      if (u_places) place.u = u_places->image_offset(leading);
      if (v_places) place.v = v_places->image_offset(leading);
      places.push_back(place);
    }
  }
  return places;
}

std::uint64_t sweep_output_bytes(const SweepMetadata& meta) {
  const double fields = (meta.fields.u ? 1 : 0) + (meta.fields.v ? 1 : 0);
  const double image = bytes_of_an_image(static_cast<double>(meta.problem.grid.depth) *
                                         static_cast<double>(meta.problem.grid.rows) *
                                         static_cast<double>(meta.problem.grid.cols) *
                                         static_cast<double>(element_size(meta.problem.precision)));
  // The images, the checkpoint's two slots of the fields not written, what each image has beside
  // it; the file's own metadata, and the room past its end. In floating point: the product of
  // absurd requests must not wrap around to a small number.
  const double members = static_cast<double>(meta.members());
  const double images = static_cast<double>(meta.images);
  const double bytes =
      members * ((fields * images + 2.0 * (2 - fields)) * image +
                 images_in_whole_chunks(images) * bytes_beside_an_image(meta.analysis)) +
      metadata_bytes + metadata_room_past_end;
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

struct SweepFileWriter::Handles {
  h5::Id file, u, v, checkpoint_u, checkpoint_v, checkpoint_images, nonfinite;
  WritingHere writing;    // while this process writes the file (live_writer)
  h5::Id images_written;  // none in a file of an earlier grayscott until it is continued
  // /stats/<statistics_names[i]>, /stats/v_histogram and /stats/settled_image (none without).
  std::vector<h5::Id> statistics;
  h5::Id histogram, settled;
  // /stats/class and /stats/<classification_names[i]> (none without --classify).
  h5::Id pattern_class;
  std::vector<h5::Id> features;
  // Opened once, by every process together: with MPI, opening is a collective operation, while
  // checkpoints come at each process's own pace.
  void open_small_datasets() {
    auto open = [&](const char* name) {
      return h5::Id(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, std::string("open /") + name);
    };
    if (H5Lexists(file, "checkpoint/u", H5P_DEFAULT) > 0) checkpoint_u = open("checkpoint/u");
    if (H5Lexists(file, "checkpoint/v", H5P_DEFAULT) > 0) checkpoint_v = open("checkpoint/v");
    checkpoint_images = open("checkpoint/images");
    nonfinite = open("nonfinite_image");
    if (H5Lexists(file, "images_written", H5P_DEFAULT) > 0) images_written = open("images_written");
    if (H5Lexists(file, "stats", H5P_DEFAULT) > 0) {
      for (const char* name : analysis::statistics_names)
        statistics.push_back(open((std::string("stats/") + name).c_str()));
      histogram = open("stats/v_histogram");
      settled = open("stats/settled_image");
      if (H5Lexists(file, "stats/class", H5P_DEFAULT) > 0) {
        pattern_class = open("stats/class");
        for (const char* name : analysis::classification_names)
          features.push_back(open((std::string("stats/") + name).c_str()));
      }
    }
  }
  void close_datasets() {
    u.reset(), v.reset(), checkpoint_u.reset(), checkpoint_v.reset(), checkpoint_images.reset(),
        nonfinite.reset(), images_written.reset();
    statistics.clear();
    features.clear();
    histogram.reset(), settled.reset(), pattern_class.reset();
  }
};

SweepFileWriter::SweepFileWriter(const fs::path& path, const SweepMetadata& meta, bool overwrite,
                                 const SweepFileAccess& access)
    : h_(std::make_unique<Handles>()), path_(path), meta_(meta), access_(access) {
  if (meta.kill.size() != meta.feed.size() || meta.seed.size() != meta.feed.size()) {
    throw std::logic_error("sweep metadata: feed, kill and seed differ in length");
  }
  for (std::uint64_t s : meta.seed) {
    if (s > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw InvalidInput("seed " + std::to_string(s) + " does not fit the file's int64 /seed");
    }
  }
  h5::silence_library_errors();
  const Problem& p = meta.problem;
  const bool shared = access.shared();
  const fs::path partial = partial_name(
      path, access.partial_tag.empty() ? std::to_string(::getpid()) : access.partial_tag);
  h5::Id fapl = h5::writer_access(access.file_access);
  h_->file = h5::Id(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose,
                    "create " + partial.string());
  try {
    const auto members = static_cast<hsize_t>(meta.members());
    const auto images = static_cast<hsize_t>(meta.images);
    const auto rows = static_cast<hsize_t>(p.grid.rows), cols = static_cast<hsize_t>(p.grid.cols);
    const std::vector<hsize_t> dims = h5::with_image_axes({members, images}, p.grid);
    // One image per chunk (a volume: one plane per chunk, as in a run file), split by rows only
    // past HDF5's 4 GiB chunk limit.
    const hsize_t max_chunk_rows =
        std::max<hsize_t>(1, (hsize_t{1} << 31) / (cols * element_size(p.precision)));
    std::vector<hsize_t> chunk(dims.size(), 1);
    chunk[chunk.size() - 2] = std::min(rows, max_chunk_rows);
    chunk.back() = cols;
    const int rank = static_cast<int>(dims.size());
    const bool single = p.precision == Precision::Single;
    const hid_t type = single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    auto make_field = [&](const char* name) {
      h5::Id space = h5::simple_space(dims);
      h5::Id props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
      h5::check(H5Pset_chunk(props, rank, chunk.data()), "set chunking");
      // The fill value, where a chunk is not placed (an earlier grayscott's file; placing it
      // writes this): NaN, not a plausible 0.
      const float nan_single = std::numeric_limits<float>::quiet_NaN();
      const double nan_double = std::numeric_limits<double>::quiet_NaN();
      h5::check(H5Pset_fill_value(props, single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE,
                                  single ? static_cast<const void*>(&nan_single) : &nan_double),
                "set the fill value");
      // Every chunk placed at creation, in order, in one block (HDF5's implicit index): an
      // image's place in the file is then arithmetic, for the companion's offsets and the direct
      // writes. Looked up chunk by chunk instead, it costs HDF5 1.10 time that grows with the
      // chunks, so that finishing a sweep of 10,000 members took minutes. Processes sharing the
      // file need their chunks in place anyway (allocating is a collective metadata operation),
      // and a volume's image (a chunk per plane) in one piece. Filling the chunks would write
      // the whole file twice: a stopped sweep leaves what it had not reached unwritten (0, no
      // disk) for its continuation, /images_written saying what is the sweep's (`grayscott
      // repair` writes NaN past those counts after a kill).
      h5::check(H5Pset_alloc_time(props, H5D_ALLOC_TIME_EARLY), "set early allocation");
      h5::check(H5Pset_fill_time(props, H5D_FILL_TIME_NEVER), "set no fill at allocation");
      return h5::Id(H5Dcreate2(h_->file, name, type, space, H5P_DEFAULT, props, H5P_DEFAULT),
                    H5Dclose, std::string("create dataset ") + name);
    };
    if (meta.fields.v) h_->v = make_field("v");
    if (meta.fields.u) h_->u = make_field("u");

    const bool writes = access.writes_shared_data;
    write_vector(h_->file, "feed", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, meta.feed.size(),
                 meta.feed.data(), writes);
    write_vector(h_->file, "kill", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, meta.kill.size(),
                 meta.kill.data(), writes);
    std::vector<std::int64_t> seeds(meta.seed.begin(), meta.seed.end());
    write_vector(h_->file, "seed", H5T_STD_I64LE, H5T_NATIVE_INT64, seeds.size(), seeds.data(),
                 writes);
    std::vector<std::int64_t> steps(images);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      steps[i] = static_cast<std::int64_t>(i + 1) * meta.steps_per_image;
    }
    write_vector(h_->file, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, steps.size(), steps.data(),
                 writes);

    const hid_t root = h_->file;
    h5::write_attribute(root, "kind", std::string("sweep"));
    h5::write_attribute(root, "members", meta.members());
    write_problem_attributes(root, p, meta.images, meta.steps_per_image);
    write_initial_attributes(root, meta.init);
    if (meta.init.kind == InitialKind::Noise)
      h5::write_attribute(root, "noise_amplitude", noise_amplitude);
    h5::write_attribute(root, "backend", meta.backend);
    h5::write_attribute(root, "version", meta.version);
    h5::write_attribute(root, "status", std::string("running"));
    // Who writes it, so that `grayscott repair` and `info` tell a running sweep from one whose
    // writer was killed.
    if (shared) {
      h_->writing = record_shared_writers(root, access.file_access);
    } else {
      h_->writing = record_writer(root);
    }
    {
      // Two slots of every member's state to continue from, and the images done at each.
      h5::Id group(H5Gcreate2(h_->file, "checkpoint", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose, "create group checkpoint");
      const std::vector<hsize_t> cdims = h5::with_image_axes({2, members}, p.grid);
      // Only the fields the images do not hold: a member's state after n images is its image n-1
      // of /u and /v where those are written.
      for (const char* name : {"u", "v"}) {
        if ((name[0] == 'u' && meta.fields.u) || (name[0] == 'v' && meta.fields.v)) continue;
        h5::Id space = h5::simple_space(cdims);
        h5::Id props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
        h5::check(H5Pset_chunk(props, rank, chunk.data()), "set chunking");
        // Placed at creation, as the images are (processes sharing the file need it, and alone
        // the file then never grows at its end, where a full disk would leave no room for the
        // metadata that closing it writes).
        h5::check(H5Pset_alloc_time(props, H5D_ALLOC_TIME_EARLY), "set early allocation");
        h5::check(H5Pset_fill_time(props, H5D_FILL_TIME_NEVER), "set no fill at allocation");
        h5::Id dataset(H5Dcreate2(group, name, type, space, H5P_DEFAULT, props, H5P_DEFAULT),
                       H5Dclose, std::string("create dataset checkpoint/") + name);
      }
      const hsize_t idims[2] = {2, members};
      h5::Id space = h5::simple_space(idims);
      h5::Id dataset(
          H5Dcreate2(group, "images", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          H5Dclose, "create dataset checkpoint/images");
      slots_ = CheckpointSlots(meta.members());
      if (writes) {
        h5::check(H5Dwrite(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                           slots_.marks().data()),
                  "write checkpoint/images");
      }
    }
    {
      // Written at the end; created now, since no object can be created under SWMR.
      std::vector<std::int64_t> none(members, -1);
      write_vector(h_->file, "nonfinite_image", H5T_STD_I64LE, H5T_NATIVE_INT64, none.size(),
                   none.data(), writes);
    }
    {
      // The axes' names and coordinates, as dimension scales: /v and /u are (member, time, y,
      // x); /feed, /kill, /seed and /nonfinite_image lie along member, /step and /time (step x
      // dt) along time, so that xarray and netCDF-4 readers name every axis and take feed, kill
      // and seed as the members' coordinates (see docs/file-format.md).
      std::vector<double> times(steps.size());
      for (std::size_t i = 0; i < times.size(); ++i) {
        times[i] = static_cast<double>(steps[i]) * p.params.dt;
      }
      write_vector(h_->file, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, times.size(), times.data(),
                   writes);
      const auto open = [&](const char* name) {
        return h5::Id(H5Dopen2(h_->file, name, H5P_DEFAULT), H5Dclose,
                      std::string("open /") + name);
      };
      const h5::Id time = open("time");
      h5::make_time_scale(time);
      const h5::Id member = h5::create_index_scale(h_->file, "member", meta.members(), writes);
      // Each member's images complete in the file, counted as they are flushed (see flush()).
      written_.assign(members, 0);
      counted_ = written_;
      create_images_written(h_->file, member, counted_, writes);
      const h5::GridScales grid = h5::create_grid_scales(h_->file, p.grid.rows, p.grid.cols, writes,
                                                         H5P_DEFAULT, p.grid.depth);
      // A volume's images (member, time, z, y, x).
      std::vector<hid_t> axes{member, time};
      if (p.grid.volume()) axes.push_back(grid.z);
      axes.push_back(grid.y);
      axes.push_back(grid.x);
      for (const h5::Id* field : {&h_->v, &h_->u}) {
        if (field->get() < 0) continue;
        h5::attach_scales(*field, axes);
        h5::write_attribute(*field, "coordinates", std::string("feed kill seed step"));
      }
      for (const char* name : {"feed", "kill", "seed", "nonfinite_image"}) {
        h5::attach_scales(open(name), std::span<const hid_t>(axes.data(), 1));
      }
      h5::attach_scales(open("step"), std::span<const hid_t>(axes.data() + 1, 1));
      if (meta.analysis.statistics) {
        // Every member's statistics of every image, (member, time), NaN where none was written;
        // the histogram (member, time, v_bin); where each member settled (-1: it did not).
        h5::Id group(H5Gcreate2(h_->file, "stats", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                     "create group stats");
        const auto bins = static_cast<hsize_t>(meta.analysis.statistics->bins);
        const auto create = [&](const char* name, hid_t file_type, hid_t fill_type,
                                const void* fill, std::span<const hsize_t> shape) {
          h5::Id space = h5::simple_space(shape);
          h5::Id props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
          h5::check(H5Pset_fill_value(props, fill_type, fill), "set the fill value");
          // Written at creation (its fill value): the file does not grow as images come.
          h5::check(H5Pset_alloc_time(props, H5D_ALLOC_TIME_EARLY), "early allocation");
          return h5::Id(H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, props, H5P_DEFAULT),
                        H5Dclose, std::string("create dataset stats/") + name);
        };
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const std::uint64_t zero = 0;
        const std::int64_t none = -1;
        const hsize_t per_image[2] = {members, images}, counts[3] = {members, images, bins},
                      per_member[1] = {members};
        for (const char* name : analysis::statistics_names) {
          h5::attach_scales(create(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &nan, per_image),
                            std::span<const hid_t>(axes.data(), 2));
        }
        const h5::Id bin_axis =
            h5::create_index_scale(group, "v_bin", meta.analysis.statistics->bins, writes);
        h5::write_attribute(bin_axis, "long_name",
                            std::string("bin of the histogram of v (its range: v_histogram's)"));
        const h5::Id histogram =
            create("v_histogram", H5T_STD_U64LE, H5T_NATIVE_UINT64, &zero, counts);
        const hid_t histogram_axes[3] = {member, time, bin_axis};
        h5::attach_scales(histogram, histogram_axes);
        const std::vector<double> range{meta.analysis.statistics->low,
                                        meta.analysis.statistics->high};
        h5::write_attribute(histogram, "range", range);
        h5::attach_scales(
            create("settled_image", H5T_STD_I64LE, H5T_NATIVE_INT64, &none, per_member),
            std::span<const hid_t>(axes.data(), 1));
        if (meta.analysis.classify) {
          const h5::Id classes = create("class", H5T_STD_I64LE, H5T_NATIVE_INT64, &none, per_image);
          h5::attach_scales(classes, std::span<const hid_t>(axes.data(), 2));
          h5::write_class_attributes(classes, analysis::pattern_class_names);
          for (const char* name : analysis::classification_names) {
            h5::attach_scales(create(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &nan, per_image),
                              std::span<const hid_t>(axes.data(), 2));
          }
        }
      }
      write_analysis_attributes(root, meta.analysis);
      h5::write_attribute(member, "long_name",
                          std::string("member index; its rates and seed are feed, kill, seed"));
    }
    h_->open_small_datasets();
    h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path.string());
    // Alone, readers may open it while it grows (where the file system lets HDF5 start SWMR).
    if (!shared && H5Fstart_swmr_write(h_->file) < 0) H5Eclear2(H5E_DEFAULT);
    // After SWMR's start, which cuts the file at its end (and any blocks past it).
    give_metadata_its_blocks(partial);
    if (access.writes_shared_data) {
      take_output_name(partial, path, overwrite);
    }
  } catch (...) {
    h_->close_datasets();
    h_->file.reset();
    std::error_code ignored;
    if (access.writes_shared_data) fs::remove(partial, ignored);
    throw;
  }
}

SweepFileWriter::SweepFileWriter(const fs::path& path, const SweepMetadata& meta, Continue from,
                                 const SweepFileAccess& access)
    : h_(std::make_unique<Handles>()), path_(path), meta_(meta), access_(access) {
  h5::silence_library_errors();
  const bool shared = access.shared();
  // As a run's (RunFileWriter's Continue): under the folder's lock until this process is the
  // recorded writer, only if the file is still the one read and no live process writes it.
  std::optional<FolderLock> claiming;
  if (access.writes_shared_data) claiming.emplace(path);
  refuse_to_continue_unless_agreed(path, from.read, access.writes_shared_data, access.file_access);
  h5::Id fapl = h5::writer_access(access.file_access);
  h5::clear_writer_marks_on_open(fapl);
  h_->file = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose,
                    "open " + path.string() + " to continue it");
  if (!shared) H5Fincrement_filesize(h_->file, 0);
  if (meta.fields.v) h_->v = h5::Id(H5Dopen2(h_->file, "v", H5P_DEFAULT), H5Dclose, "open /v");
  if (meta.fields.u) h_->u = h5::Id(H5Dopen2(h_->file, "u", H5P_DEFAULT), H5Dclose, "open /u");
  h_->open_small_datasets();
  slots_ = CheckpointSlots(meta.members());
  h5::check(H5Dread(h_->checkpoint_images, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                    slots_.marks().data()),
            "read /checkpoint/images");
  // Each member's images complete in the file. A file of an earlier grayscott has no count: its
  // members hold at least the images of their checkpoints, and the count starts from those.
  written_.assign(static_cast<std::size_t>(meta.members()), 0);
  if (h_->images_written.get() >= 0) {
    h5::check(H5Dread(h_->images_written, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                      written_.data()),
              "read /images_written");
  } else {
    for (std::size_t m = 0; m < written_.size(); ++m)
      written_[m] = slots_.newest_images(static_cast<std::int64_t>(m));
    h5::Id member;
    if (H5Lexists(h_->file, "member", H5P_DEFAULT) > 0)
      member = h5::Id(H5Dopen2(h_->file, "member", H5P_DEFAULT), H5Dclose, "open /member");
    create_images_written(h_->file, member.get(), written_, access.writes_shared_data);
    h_->images_written =
        h5::Id(H5Dopen2(h_->file, "images_written", H5P_DEFAULT), H5Dclose, "open /images_written");
  }
  counted_ = written_;
  h5::rewrite_string_attribute(h_->file, "status", "running");
  // This process writes it now (over MPI ranks, rank 0).
  if (shared) {
    h_->writing = record_shared_writers(h_->file, access.file_access);
  } else {
    h_->writing = record_writer(h_->file);
  }
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path.string());
  if (!shared) {
    if (H5Fstart_swmr_write(h_->file) < 0) H5Eclear2(H5E_DEFAULT);
  }
  claiming.reset();
  give_metadata_its_blocks(path);
  // Independent writes of members no rank computes again: one process does them.
  if (access.writes_shared_data) complete_final_checkpoints();
}

void SweepFileWriter::save_checkpoint(std::int64_t member_begin, std::int64_t member_count,
                                      std::int64_t images_done, const void* u, const void* v,
                                      const std::int64_t* nonfinite_image) {
  {
    const hsize_t start[1] = {static_cast<hsize_t>(member_begin)};
    const hsize_t count[1] = {static_cast<hsize_t>(member_count)};
    h5::write_block(h_->nonfinite, start, count, H5T_NATIVE_INT64, nonfinite_image,
                    "write /nonfinite_image to " + path_.string());
  }
  try {
    slots_.save(member_begin, member_count, images_done, images_done == meta_.images,
                slot_writes(member_begin, member_count, u, v));
  } catch (const std::exception&) {
    rethrow_naming_a_full_disk(path_);
  }
}

SlotWrites SweepFileWriter::slot_writes(std::int64_t member_begin, std::int64_t member_count,
                                        const void* u, const void* v) {
  SlotWrites writes;
  writes.write_state = [this, member_begin, member_count, u, v](int slot) {
    const Problem& p = meta_.problem;
    // Every member's whole image (a volume's every plane).
    const std::vector<hsize_t> count =
        h5::with_image_axes({1, static_cast<hsize_t>(member_count)}, p.grid);
    std::vector<hsize_t> start(count.size(), 0);
    start[0] = static_cast<hsize_t>(slot), start[1] = static_cast<hsize_t>(member_begin);
    for (const auto& [dataset, data] :
         {std::pair<hid_t, const void*>{h_->checkpoint_u, u}, {h_->checkpoint_v, v}}) {
      if (dataset < 0) continue;  // a field the images hold
      write_whole_images(dataset, start, count, !access_.shared(), p, data,
                         "write the checkpoint to " + path_.string());
    }
  };
  writes.write_marks = [this, member_begin, member_count](int first_slot, int slots) {
    for (int slot = first_slot; slot < first_slot + slots; ++slot) {
      write_slot_images(slot, member_begin, member_count);
    }
  };
  // With shared access the writes are durable once made (see flush); alone, a flush makes them so.
  writes.make_state_durable = [this] { flush(); };
  writes.make_marks_durable = [this] { flush(); };
  return writes;
}

// Writes the images done at `slot` of the given members, as slots_ holds them.
void SweepFileWriter::write_slot_images(int slot, std::int64_t member_begin,
                                        std::int64_t member_count) {
  const auto members = static_cast<std::size_t>(meta_.members());
  const hsize_t start[2] = {static_cast<hsize_t>(slot), static_cast<hsize_t>(member_begin)};
  const hsize_t count[2] = {1, static_cast<hsize_t>(member_count)};
  h5::write_block(h_->checkpoint_images, start, count, H5T_NATIVE_INT64,
                  slots_.marks().data() + static_cast<std::size_t>(slot) * members +
                      static_cast<std::size_t>(member_begin),
                  "write the checkpoint to " + path_.string());
}

// A member stopped between the two saves of its final state has it in one slot only; it is not
// computed again, so its other slot gets it now, as an uninterrupted sweep leaves both.
void SweepFileWriter::complete_final_checkpoints() {
  const Problem& p = meta_.problem;
  const auto members = static_cast<std::size_t>(meta_.members());
  const hid_t mem_type = h5::native_type(p.precision);
  const std::size_t bytes = static_cast<std::size_t>(p.grid.cells()) * H5Tget_size(mem_type);
  std::vector<std::byte> u(bytes), v(bytes);
  for (std::size_t m = 0; m < members; ++m) {
    const auto member = static_cast<std::int64_t>(m);
    const std::int64_t in0 = slots_.images(0, member), in1 = slots_.images(1, member);
    if (std::max(in0, in1) != meta_.images || in0 == in1) continue;
    const std::vector<hsize_t> count = h5::with_image_axes({1, 1}, p.grid);
    std::vector<hsize_t> start(count.size(), 0);
    start[0] = in0 > in1 ? 0u : 1u, start[1] = m;
    // The fields the images do not hold.
    h5::read_checkpoint_block(h_->checkpoint_u.get(), h_->checkpoint_v.get(), start, count,
                              mem_type, u.data(), v.data(), path_.string());
    // Into the older slot, marked valid once the state is written.
    slots_.save_into_older_slot(member, 1, meta_.images,
                                slot_writes(member, 1, u.data(), v.data()));
  }
}

void check_members_of(const RunFileReader& file) {
  const std::int64_t members = file.has_attribute("members")
                                   ? file.attribute_int64("members")
                                   : static_cast<std::int64_t>(file.read_doubles("feed").size());
  const auto refuse = [&](const std::string& holds) {
    refuse_changed_file(file, holds + " for " + std::to_string(members) + " members");
  };
  for (const char* name : {"feed", "kill", "seed"}) {
    const auto count = static_cast<std::int64_t>(file.shape(name).at(0));
    if (count != members || count == 0)
      refuse("/" + std::string(name) + " holds " + std::to_string(count) + " values");
  }
  // Each dataset that holds something of every member, and its axis along the members (-1: its
  // last, the checkpoint marks' [slots, members]).
  constexpr std::pair<const char*, int> per_member[] = {{"v", 0},
                                                        {"u", 0},
                                                        {"nonfinite_image", 0},
                                                        {"images_written", 0},
                                                        {"checkpoint/images", -1},
                                                        {"stats/change_rms_per_step", 0},
                                                        {"stats/settled_image", 0}};
  for (const auto& [name, along] : per_member) {
    if (!file.has_field(name)) continue;
    const std::vector<std::int64_t> shape = file.shape(name);
    const std::size_t axis =
        along >= 0 ? static_cast<std::size_t>(along) : std::max<std::size_t>(shape.size(), 1) - 1;
    if (shape.size() <= axis || shape[axis] != members)
      refuse("/" + std::string(name) + " holds " +
             (shape.size() <= axis ? std::string("no") : std::to_string(shape[axis])) +
             " members' values");
  }
}

SweepFileState read_sweep_state(const fs::path& path) {
  RunFileReader file(path);
  refuse_if_being_written(path, live_writer(file), "continue");
  refuse_to_replace_what_is_no_companion(path, "a continued sweep");
  if (!file.has_attribute("kind") || file.attribute_string("kind") != "sweep") {
    // A run's file says so by its attributes; another program's has none of grayscott's.
    if (!file.has_attribute("steps_per_image") || !file.has_attribute("images")) {
      throw InvalidInput(path.string() + " is not a grayscott sweep file (no attribute kind)");
    }
    throw InvalidInput(path.string() +
                       " is not a sweep file (a run continues with grayscott run "
                       "--resume)");
  }
  SweepFileState state;
  state.identity = file.identity();
  SweepMetadata& m = state.meta;
  Problem& p = m.problem;
  p = read_problem_attributes(file);
  m.feed = file.read_doubles("feed");
  m.kill = file.read_doubles("kill");
  for (std::int64_t s : file.read_int64("seed")) m.seed.push_back(static_cast<std::uint64_t>(s));
  check_members_of(file);
  p.params.feed = m.feed[0], p.params.kill = m.kill[0];
  m.init = read_initial_attributes(file);
  m.images = file.attribute_int64("images");
  m.steps_per_image = file.attribute_int64("steps_per_image");
  m.fields = file.image_fields();
  m.analysis = read_analysis_attributes(file);
  m.backend = file.attribute_string("backend");
  m.version = file.attribute_string("version");
  state.status = file.attribute_string("status");
  for (const char* name : chunked_datasets) {
    if (file.has_field(name) && file.unplaced_chunks(name) > 0) state.every_chunk_placed = false;
  }
  const auto members = static_cast<std::size_t>(m.members());
  state.checkpoint_images.assign(members, 0);
  state.nonfinite_image = file.read_int64("nonfinite_image");
  if (!file.has_field("checkpoint/images")) {
    throw InvalidInput(path.string() + " keeps no checkpoint (written by an older grayscott)");
  }
  CheckpointSlots slots(m.members());
  slots.marks() = file.read_int64("checkpoint/images");
  for (std::size_t k = 0; k < members; ++k) {
    state.checkpoint_images[k] = slots.newest_images(static_cast<std::int64_t>(k));
  }
  if (m.analysis.until_steady > 0 && file.has_field("stats/change_rms_per_step")) {
    // [member, time]: each member's images before its own checkpoint.
    const std::vector<double> changes = file.read_doubles("stats/change_rms_per_step");
    const std::vector<std::int64_t> settled = file.read_int64("stats/settled_image");
    state.steady.resize(members);
    for (std::size_t k = 0; k < members; ++k) {
      const std::span<const double> row(changes.data() + k * static_cast<std::size_t>(m.images),
                                        static_cast<std::size_t>(m.images));
      state.steady[k] = steady_history(m.analysis, row, state.checkpoint_images[k],
                                       k < settled.size() ? settled[k] : -1);
    }
  }
  return state;
}

namespace {

// The fill value of a dataset (what its never-written elements read as), one element's bytes in
// the dataset's own type.
std::vector<unsigned char> fill_value_of(hid_t dataset, const std::string& name) {
  h5::Id type(H5Dget_type(dataset), H5Tclose, "read the type of /" + name);
  h5::Id props(H5Dget_create_plist(dataset), H5Pclose, "read /" + name);
  std::vector<unsigned char> fill(H5Tget_size(type));
  h5::check(H5Pget_fill_value(props, type, fill.data()), "read the fill value of /" + name);
  return fill;
}

std::vector<hsize_t> dims_of(hid_t dataset) {
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

// Selects [member, images from `first` on, every further index] of a dataset laid out
// [members, images, ...].
void select_images_from(hid_t space, const std::vector<hsize_t>& dims, hsize_t member,
                        hsize_t first, std::vector<hsize_t>& count) {
  std::vector<hsize_t> start(dims.size(), 0);
  count = dims;
  start[0] = member, count[0] = 1;
  start[1] = first, count[1] = dims[1] - first;
  h5::check(
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
      "select images");
}

}  // namespace

std::vector<std::int64_t> cut_sweep_to_complete_images(hid_t file) {
  const auto exists = [&](const std::string& name) {
    return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
  };
  const auto open = [&](const std::string& name) {
    return h5::Id(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "open /" + name);
  };
  std::vector<std::pair<std::string, h5::Id>> fields;
  for (const char* name : {"v", "u"})
    if (exists(name)) fields.emplace_back(name, open(name));
  if (fields.empty()) throw InvalidInput("a sweep file without /v or /u");
  const std::vector<hsize_t> dims = dims_of(fields.front().second);
  // [members, images, rows, cols], a volume's [members, images, depth, rows, cols].
  if (dims.size() != 4 && dims.size() != 5) {
    throw InvalidInput("a sweep file whose images are neither 4-D nor 5-D");
  }
  const hsize_t members = dims[0], images = dims[1];

  // The images each member holds: its writer's count, and never fewer than its checkpoint's.
  CheckpointSlots slots(static_cast<std::int64_t>(members));
  {
    h5::Id marks = open("checkpoint/images");
    h5::check(H5Dread(marks, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, slots.marks().data()),
              "read /checkpoint/images");
  }
  const bool counted = exists("images_written");
  std::vector<std::int64_t> counts(members, 0);
  if (counted) {
    h5::check(H5Dread(open("images_written"), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                      counts.data()),
              "read /images_written");
  }
  for (hsize_t m = 0; m < members; ++m) {
    counts[m] = std::clamp(std::max(counts[m], slots.newest_images(static_cast<std::int64_t>(m))),
                           std::int64_t{0}, static_cast<std::int64_t>(images));
  }
  if (!counted) {
    h5::Id member;
    if (exists("member")) member = open("member");
    create_images_written(file, member.get(), counts, true);
    return counts;
  }

  // Past the counts, what was written reads as never written. An image is read first and written
  // over only where it holds anything but the fill value: where a single process never placed
  // its chunk, writing would place it (and take disk a full disk may lack).
  for (const auto& [name, dataset] : fields) {
    const std::vector<unsigned char> fill = fill_value_of(dataset, name);
    const std::size_t value_bytes = fill.size();
    std::size_t image_values = 1;
    for (std::size_t k = 2; k < dims.size(); ++k) image_values *= static_cast<std::size_t>(dims[k]);
    std::vector<unsigned char> image(image_values * value_bytes), empty(image.size());
    for (std::size_t i = 0; i < image_values; ++i)
      std::copy(fill.begin(), fill.end(),
                empty.begin() + static_cast<std::ptrdiff_t>(i * value_bytes));
    h5::Id type(H5Dget_type(dataset), H5Tclose, "read the type of /" + name);
    std::vector<hsize_t> one = dims;
    one[0] = 1, one[1] = 1;
    h5::Id mem = h5::simple_space(one);
    for (hsize_t m = 0; m < members; ++m) {
      for (auto k = static_cast<hsize_t>(counts[m]); k < images; ++k) {
        std::vector<hsize_t> start(dims.size(), 0);
        start[0] = m, start[1] = k;
        h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
        h5::check(
            H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, one.data(), nullptr),
            "select an image");
        h5::check(H5Dread(dataset, type, mem, space, H5P_DEFAULT, image.data()),
                  "read image " + std::to_string(k) + " of /" + name);
        if (image == empty) continue;
        h5::check(H5Dwrite(dataset, type, mem, space, H5P_DEFAULT, empty.data()),
                  "empty image " + std::to_string(k) + " of /" + name);
      }
    }
  }
  if (exists("stats")) {
    // Every dataset of /stats laid out [members, images, ...]: emptied past the counts.
    std::vector<std::string> names{"v_histogram", "class"};
    for (const char* name : analysis::statistics_names) names.emplace_back(name);
    for (const char* name : analysis::classification_names) names.emplace_back(name);
    for (const std::string& short_name : names) {
      const std::string name = "stats/" + short_name;
      if (!exists(name)) continue;
      h5::Id dataset = open(name);
      const std::vector<hsize_t> shape = dims_of(dataset);
      if (shape.size() < 2 || shape[0] != members || shape[1] != images) continue;
      const std::vector<unsigned char> fill = fill_value_of(dataset, name);
      h5::Id type(H5Dget_type(dataset), H5Tclose, "read the type of /" + name);
      for (hsize_t m = 0; m < members; ++m) {
        if (static_cast<hsize_t>(counts[m]) >= images) continue;
        h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
        std::vector<hsize_t> count;
        select_images_from(space, shape, m, static_cast<hsize_t>(counts[m]), count);
        hsize_t values = 1;
        for (hsize_t c : count) values *= c;
        std::vector<unsigned char> empty(values * fill.size());
        for (hsize_t i = 0; i < values; ++i)
          std::copy(fill.begin(), fill.end(),
                    empty.begin() + static_cast<std::ptrdiff_t>(i * fill.size()));
        h5::Id mem = h5::simple_space(count);
        h5::check(H5Dwrite(dataset, type, mem, space, H5P_DEFAULT, empty.data()),
                  "empty /" + name + " past the images counted");
      }
    }
  }
  // An image recorded (where the member settled, or first held a non-finite value) that is not
  // counted: none is.
  for (const char* name : {"stats/settled_image", "nonfinite_image"}) {
    if (!exists(name)) continue;
    h5::Id dataset = open(name);
    std::vector<std::int64_t> recorded(members);
    h5::check(H5Dread(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, recorded.data()),
              std::string("read /") + name);
    bool changed = false;
    for (hsize_t m = 0; m < members; ++m) {
      if (recorded[m] < counts[m] || recorded[m] == -1) continue;
      recorded[m] = -1;
      changed = true;
    }
    if (changed) {
      h5::check(H5Dwrite(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, recorded.data()),
                std::string("write /") + name);
    }
  }
  h5::check(H5Dwrite(open("images_written"), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                     counts.data()),
            "write /images_written");
  return counts;
}

template <class Real>
void read_sweep_checkpoint(const fs::path& path, std::int64_t member_begin,
                           std::int64_t member_count, std::vector<Real>& u, std::vector<Real>& v) {
  RunFileReader file(path);
  auto marks = file.read_int64("checkpoint/images");
  CheckpointSlots slots(static_cast<std::int64_t>(marks.size() / 2));
  slots.marks() = std::move(marks);
  const int slot = slots.newest(member_begin);
  const std::int64_t images_done = slots.images(slot, member_begin);
  // A field the sweep writes is the member's last image, the others are in the slot.
  const auto field = [&](const std::string& name, std::int64_t member) {
    return file.has_field(name) ? file.read_image(name, images_done - 1, member)
                                : file.read_image("checkpoint/" + name, member, slot);
  };
  const auto dims = file.shape(file.has_field("v") ? "v" : "u");
  std::size_t cells = 1;  // a member's image: rows*cols, a volume's depth*rows*cols
  for (std::size_t k = 2; k < dims.size(); ++k) cells *= static_cast<std::size_t>(dims[k]);
  u.resize(cells * static_cast<std::size_t>(member_count));
  v.resize(cells * static_cast<std::size_t>(member_count));
  for (std::int64_t m = 0; m < member_count; ++m) {
    // One member at a time, through the reader's float64 path: exact for float and double.
    const auto a = field("u", member_begin + m);
    const auto b = field("v", member_begin + m);
    std::copy(a.begin(), a.end(), u.begin() + static_cast<std::ptrdiff_t>(m * cells));
    std::copy(b.begin(), b.end(), v.begin() + static_cast<std::ptrdiff_t>(m * cells));
  }
}

template void read_sweep_checkpoint<float>(const fs::path&, std::int64_t, std::int64_t,
                                           std::vector<float>&, std::vector<float>&);
template void read_sweep_checkpoint<double>(const fs::path&, std::int64_t, std::int64_t,
                                            std::vector<double>&, std::vector<double>&);

void SweepFileWriter::give_metadata_its_blocks(const fs::path& where) {
  // The images' room (and over MPI the checkpoints', placed at creation too) stays a hole until
  // written; every other byte is metadata, which a full disk must not keep from being rewritten.
  std::vector<ByteRange> rooms;
  for (const h5::Id* dataset : {&h_->v, &h_->u, &h_->checkpoint_u, &h_->checkpoint_v}) {
    if (dataset->get() < 0) continue;
    if (const auto room = chunk_room(*dataset)) rooms.push_back(*room);
  }
  const bool shared = access_.shared();
  if (shared && !access_.writes_shared_data) return;
  reserve_metadata_blocks(h_->file, std::move(rooms),
                          shared ? std::optional<fs::path>(where) : std::nullopt);
}

void SweepFileWriter::flush() {
  // The images first, then their count, in a flush of its own: a count never names an image that
  // is not on the disk, whenever the process is killed. With shared access each rank's writes are
  // raw writes into chunks allocated at creation, durable once made: its count follows them.
  const bool alone = !access_.shared();
  try {
    if (alone) h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
    if (count_written_images() && alone) {
      h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
    }
  } catch (const std::exception&) {
    rethrow_naming_a_full_disk(path_);
  }
}

bool SweepFileWriter::count_written_images() {
  if (h_->images_written.get() < 0) return false;
  // The members whose count grew: consecutive ones (a batch, on this process).
  std::size_t first = 0, end = written_.size();
  while (first < end && written_[first] == counted_[first]) ++first;
  while (end > first && written_[end - 1] == counted_[end - 1]) --end;
  if (first == end) return false;
  const hsize_t start[1] = {first}, count[1] = {end - first};
  h5::write_block(h_->images_written, start, count, H5T_NATIVE_INT64, written_.data() + first,
                  "write /images_written to " + path_.string());
  std::copy(written_.begin() + static_cast<std::ptrdiff_t>(first),
            written_.begin() + static_cast<std::ptrdiff_t>(end),
            counted_.begin() + static_cast<std::ptrdiff_t>(first));
  return true;
}

SweepFileWriter::~SweepFileWriter() {
  if (h_ && h_->file.get() >= 0) {
    try {
      finish("incomplete: the sweep was interrupted", {});
    } catch (...) {
      // A destructor must not throw; the images already written stay in the file.
    }
  }
}

void SweepFileWriter::write_images(std::int64_t member_begin, std::int64_t member_count,
                                   std::int64_t image, const void* u, const void* v) {
  try {
    write_image_block(member_begin, member_count, image, u, v);
  } catch (const std::exception&) {
    rethrow_naming_a_full_disk(path_);
  }
  // A member's images are written in order: the image after those written extends them (a
  // continued member writes over the images after its checkpoint first, which changes nothing).
  for (std::int64_t m = member_begin; m < member_begin + member_count; ++m) {
    auto& written = written_[static_cast<std::size_t>(m)];
    if (written == image) written = image + 1;
  }
}

void SweepFileWriter::write_image_block(std::int64_t member_begin, std::int64_t member_count,
                                        std::int64_t image, const void* u, const void* v) {
  const Problem& p = meta_.problem;
  if (member_begin < 0 || member_count <= 0 || member_begin + member_count > meta_.members() ||
      image < 0 || image >= meta_.images) {
    throw std::out_of_range("sweep file: image block outside the file");
  }
  const std::vector<hsize_t> count =
      h5::with_image_axes({static_cast<hsize_t>(member_count), 1}, p.grid);
  std::vector<hsize_t> start(count.size(), 0);
  start[0] = static_cast<hsize_t>(member_begin), start[1] = static_cast<hsize_t>(image);
  auto write = [&](const h5::Id& dataset, const void* data, const char* name) {
    write_whole_images(
        dataset, start, count, !access_.shared(), p, data,
        "write image " + std::to_string(image) + " of " + name + " to " + path_.string());
  };
  if (meta_.fields.v) write(h_->v, v, "v");
  if (meta_.fields.u) write(h_->u, u, "u");
}

void SweepFileWriter::write_statistics(std::int64_t member_begin, std::int64_t member_count,
                                       std::int64_t image,
                                       const analysis::ImageStatistics* statistics) {
  if (h_->histogram.get() < 0) throw std::logic_error("a sweep file without statistics");
  const auto count = static_cast<std::size_t>(member_count);
  const auto bins = static_cast<hsize_t>(meta_.analysis.statistics->bins);
  const auto write = [&](hid_t dataset, int rank, hid_t value_type, const void* values,
                         const std::string& name) {
    const hsize_t start[3] = {static_cast<hsize_t>(member_begin), static_cast<hsize_t>(image), 0};
    const hsize_t block[3] = {count, 1, bins};
    const auto axes = static_cast<std::size_t>(rank);
    h5::write_block(
        dataset, std::span<const hsize_t>(start, axes), std::span<const hsize_t>(block, axes),
        value_type, values,
        "write " + name + " of image " + std::to_string(image) + " to " + path_.string());
  };
  std::vector<double> values(count);
  for (std::size_t i = 0; i < h_->statistics.size(); ++i) {
    for (std::size_t m = 0; m < count; ++m)
      values[m] = analysis::statistics_values(statistics[m])[i];
    write(h_->statistics[i], 2, H5T_NATIVE_DOUBLE, values.data(),
          std::string("stats/") + analysis::statistics_names[i]);
  }
  std::vector<std::uint64_t> counts;
  counts.reserve(count * bins);
  for (std::size_t m = 0; m < count; ++m)
    counts.insert(counts.end(), statistics[m].histogram.begin(), statistics[m].histogram.end());
  write(h_->histogram, 3, H5T_NATIVE_UINT64, counts.data(), "stats/v_histogram");
  if (h_->pattern_class.get() < 0) return;
  for (std::size_t i = 0; i < h_->features.size(); ++i) {
    for (std::size_t m = 0; m < count; ++m)
      values[m] = analysis::classification_values(statistics[m])[i];
    write(h_->features[i], 2, H5T_NATIVE_DOUBLE, values.data(),
          std::string("stats/") + analysis::classification_names[i]);
  }
  std::vector<std::int64_t> classes(count);
  for (std::size_t m = 0; m < count; ++m) classes[m] = statistics[m].pattern_class;
  write(h_->pattern_class, 2, H5T_NATIVE_INT64, classes.data(), "stats/class");
}

void SweepFileWriter::record_settled(std::int64_t member, std::int64_t image) {
  if (h_->settled.get() < 0) throw std::logic_error("a sweep file without statistics");
  const hsize_t start[1] = {static_cast<hsize_t>(member)}, one[1] = {1};
  h5::write_block(h_->settled, start, one, H5T_NATIVE_INT64, &image,
                  "write stats/settled_image to " + path_.string());
}

void SweepFileWriter::finish(const std::string& status,
                             const std::vector<std::int64_t>& nonfinite_image) {
  if (h_->file.get() < 0) return;
  // Whatever fails, the file is closed (over MPI ranks closing is collective: every rank must get
  // there, and a file left open is closed by HDF5 as the process exits, which a failed flush can
  // crash), how the sweep ended recorded where the disk lets it; the first failure is reported
  // then.
  std::exception_ptr failure;
  const auto attempt = [&](auto&& step) {
    try {
      step();
    } catch (...) {
      H5Eclear2(H5E_DEFAULT);
      if (!failure) failure = std::current_exception();
    }
  };
  // The images written since the last flush counted; where they cannot be flushed (a full disk,
  // which the sweep has reported already) the count stays at the images flushed before.
  try {
    flush();
  } catch (const std::exception&) {
    H5Eclear2(H5E_DEFAULT);
  }
  std::vector<std::int64_t> first(static_cast<std::size_t>(meta_.members()), -1);
  std::copy_n(nonfinite_image.begin(), std::min(nonfinite_image.size(), first.size()),
              first.begin());
  if (access_.writes_shared_data) {
    attempt([&] {
      h5::check(
          H5Dwrite(h_->nonfinite, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, first.data()),
          "write /nonfinite_image to " + path_.string());
    });
  }
  // Every process asks where the images lie (metadata reads are collective over MPI).
  std::vector<ImagePlaces> places;
  attempt([&] {
    places = sweep_image_places(h_->u.get(), h_->v.get(), meta_.members(), meta_.images,
                                meta_.problem.grid.volume());
  });
  // The companion before the file says its writer has gone: once it says so, another process
  // may replace the file (--force), and a companion written after that would land beside the
  // new file.
  if (access_.writes_shared_data && !places.empty()) {
    attempt([&] {
      try {
        write_sweep_xdmf(path_, meta_, places);
      } catch (const std::exception& e) {
        // The sweep's file is whole (its status is recorded next); only its companion is missing.
        throw std::runtime_error(path_.string() + ": its XDMF companion: " + e.what() +
                                 companion_remedy(path_, "sweep"));
      }
    });
  }
  // In place, in blocks the file was given at its start (reserve_metadata_blocks).
  attempt([&] { h5::rewrite_string_attribute(h_->file, "status", status); });
  attempt([&] { record_no_writer(h_->file); });  // collective over MPI ranks, the same values
  h_->close_datasets();
  h_->writing = WritingHere{};  // closed or not, this process writes it no more
  attempt([&] {
    if (H5Fclose(h_->file.release()) < 0) h5::fail("close " + path_.string());
  });
  if (failure) std::rethrow_exception(failure);
}

void place_unwritten_chunks(const fs::path& path) {
  h5::place_unwritten_chunks(path.string(), chunked_datasets);
}

}  // namespace grayscott::io
