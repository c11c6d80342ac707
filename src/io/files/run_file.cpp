#include "io/files/run_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "io/files/direct_writes.hpp"
#include "io/files/hdf5.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) value /= 1024.0, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

namespace {

std::size_t element_size(Precision p) { return p == Precision::Single ? 4 : 8; }

}  // namespace

std::uint64_t run_output_bytes(const RunMetadata& meta) {
  const double fields = (meta.fields.u ? 1 : 0) + (meta.fields.v ? 1 : 0);
  const double image = static_cast<double>(meta.problem.grid.rows) *
                       static_cast<double>(meta.problem.grid.cols) *
                       static_cast<double>(element_size(meta.problem.precision));
  // In floating point: the product of absurd requests must not wrap around to a small number.
  // Images, the two checkpoint slots of the fields not written, and per image its /step value
  // and about 700 bytes of XDMF; plus the file's own metadata.
  const double images = static_cast<double>(meta.images);
  const double bytes =
      fields * images * image + 2 * (2 - fields) * image + images * (8 + 700) + 65536;
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

void check_replaceable(const fs::path& path, const std::string& what) {
  std::error_code ec;
  // symlink_status: a link is judged as a link (the rename that puts the new file in place
  // replaces the link itself), except that a link to a directory names a directory.
  const fs::file_status status = fs::symlink_status(path, ec);
  const char* kind = nullptr;
  switch (status.type()) {
    case fs::file_type::not_found:
    case fs::file_type::regular:
      return;
    case fs::file_type::symlink:
      if (fs::is_directory(path, ec)) kind = "a directory";
      if (!kind) return;
      break;
    case fs::file_type::directory:
      kind = "a directory";
      break;
    case fs::file_type::character:
      kind = "a character device";
      break;
    case fs::file_type::block:
      kind = "a block device";
      break;
    case fs::file_type::fifo:
      kind = "a FIFO";
      break;
    case fs::file_type::socket:
      kind = "a socket";
      break;
    default:
      if (ec) return;  // cannot be looked at: the creation reports why
      kind = "not a regular file";
  }
  throw InvalidInput(what + " " + path.string() + " is " + kind +
                     ", not a regular file: never replaced, even with --force");
}

void check_output_path(const fs::path& path, bool overwrite, std::uint64_t bytes) {
  // What is wrong with the name itself comes first: --force cannot make a folder a file, nor a
  // device node, a FIFO or a socket.
  if (path.empty()) throw InvalidInput("output: the file name is empty");
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw InvalidInput("output " + path.string() + " is a directory, not a file");
  }
  check_replaceable(path, "output");
  if (path.extension() == ".xmf" || path.extension() == ".xdmf") {
    throw InvalidInput("output " + path.string() +
                       " names an XDMF file: name the HDF5 file (e.g. run.h5); its .xmf "
                       "companion is written beside it");
  }
  // symlink_status: a link there (even a dangling one) is somebody's file too.
  if (fs::exists(fs::symlink_status(path, ec)) && !overwrite) {
    throw PathExists("output " + path.string() + " already exists (use --force to overwrite)");
  }
  const fs::path xmf = xdmf_path_for(path);
  if (!fs::is_directory(xmf, ec)) check_replaceable(xmf, "output companion");
  if (fs::exists(fs::symlink_status(xmf, ec)) && !overwrite) {
    throw InvalidInput("output companion " + xmf.string() +
                       " already exists (use --force to overwrite it with the run's)");
  }
  if (fs::is_directory(xmf, ec)) {
    throw InvalidInput("output companion " + xmf.string() + " is a directory");
  }
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw PathNotFound("output folder " + folder.string() + " does not exist");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw PathDenied("output folder " + folder.string() + " is not writable");
  }
  const fs::space_info space = fs::space(folder, ec);
  // The new file is created beside the old one before it replaces it: nothing is reclaimed.
  if (!ec && static_cast<double>(space.available) < 1.01 * static_cast<double>(bytes)) {
    throw InvalidInput("output needs " + format_bytes(bytes) + " but " + folder.string() +
                       " has only " + format_bytes(space.available) + " free");
  }
}

fs::path partial_name(const fs::path& path, const std::string& tag) {
  return path.string() + ".partial-" + tag;
}

void move_into_place(const fs::path& partial, const fs::path& path, bool overwrite) {
  if (overwrite) {
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("cannot move " + partial.string() + " to " + path.string() + ": " +
                               std::strerror(errno));
    }
    return;
  }
  // A hard link fails if anything appeared at `path` since the check: never replaced unasked.
  if (::link(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    if (error == EEXIST) {
      throw std::runtime_error("output " + path.string() +
                               " appeared while the run was starting (use --force to overwrite)");
    }
    throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(error));
  }
  ::unlink(partial.c_str());
}

Problem read_problem_attributes(const RunFileReader& file) {
  Problem p;
  p.grid = {file.attribute_int64("rows"), file.attribute_int64("cols")};
  p.params.du = file.attribute_double("du");
  p.params.dv = file.attribute_double("dv");
  p.params.dt = file.attribute_double("dt");
  const std::string stencil_name = file.attribute_string("stencil_name");
  if (stencil_name == "custom") {
    const auto w = file.attribute_doubles("stencil");
    if (w.size() != 9) throw InvalidInput("the file's stencil does not have 9 weights");
    std::array<double, 9> weights{};
    std::copy(w.begin(), w.end(), weights.begin());
    p.stencil = Stencil::custom(weights);
  } else {
    p.stencil = Stencil::parse(stencil_name);
  }
  p.boundary = parse_boundary(file.attribute_string("boundary"));
  p.precision = parse_precision(file.attribute_string("precision"));
  // Files written before the outside values could be chosen held u = 1, v = 0 there.
  if (file.has_attribute("outside")) {
    const auto outside = file.attribute_doubles("outside");
    if (outside.size() != 2) throw InvalidInput("the file's outside values are not 2 numbers");
    p.outside = {outside[0], outside[1]};
  }
  return p;
}

void write_initial_attributes(hid_t root, const InitialState& initial) {
  h5::write_attribute(root, "init", std::string(to_string(initial.kind)));
  const ShapeValues values = shape_values(initial);
  const double pair[2] = {values.u, values.v};
  h5::write_attribute(root, "init_values", std::span<const double>(pair));
}

InitialState read_initial_attributes(const RunFileReader& file) {
  InitialState initial;
  initial.kind = parse_initial_kind(file.attribute_string("init"));
  if (file.has_attribute("init_values")) {
    const auto values = file.attribute_doubles("init_values");
    if (values.size() != 2) throw InvalidInput("the file's init_values are not 2 numbers");
    initial.values = ShapeValues{values[0], values[1]};
  }
  return initial;
}

void write_problem_attributes(hid_t root, const Problem& p, std::int64_t images,
                              std::int64_t steps_per_image) {
  h5::write_attribute(root, "rows", p.grid.rows);
  h5::write_attribute(root, "cols", p.grid.cols);
  h5::write_attribute(root, "du", p.params.du);
  h5::write_attribute(root, "dv", p.params.dv);
  h5::write_attribute(root, "dt", p.params.dt);
  h5::write_attribute(root, "steps_per_image", steps_per_image);
  h5::write_attribute(root, "images", images);
  h5::write_attribute(root, "stencil", std::span<const double>(p.stencil.weights));
  h5::write_attribute(root, "stencil_name", p.stencil.name());
  h5::write_attribute(root, "boundary", std::string(to_string(p.boundary)));
  h5::write_attribute(root, "precision", std::string(to_string(p.precision)));
  if (p.boundary == Boundary::Fixed) {
    const double outside[2] = {p.outside.u, p.outside.v};
    h5::write_attribute(root, "outside", std::span<const double>(outside));
  }
}

// ---------------------------------------------------------------------------------------------
// Writer

namespace {

// The root attributes writer_pid and writer_host: this process. Before SWMR writing starts
// (attributes are created then); a continued file's are written over.
// Records that no process writes the file any more (at a clean close): pid 0, no host, so that
// two runs' finished files hold the same attributes.
void record_no_writer(hid_t root) {
  if (H5Aexists(root, "writer_pid") <= 0) return;
  const std::int64_t none = 0;
  h5::Id attr(H5Aopen(root, "writer_pid", H5P_DEFAULT), H5Aclose, "open attribute writer_pid");
  h5::check(H5Awrite(attr, H5T_NATIVE_INT64, &none), "write attribute writer_pid");
  if (H5Aexists(root, "writer_host") > 0) h5::rewrite_string_attribute(root, "writer_host", "");
}

void record_writer(hid_t root) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::int64_t pid = ::getpid();
  if (H5Aexists(root, "writer_pid") > 0) {
    h5::Id attr(H5Aopen(root, "writer_pid", H5P_DEFAULT), H5Aclose, "open attribute writer_pid");
    h5::check(H5Awrite(attr, H5T_NATIVE_INT64, &pid), "write attribute writer_pid");
  } else {
    h5::write_attribute(root, "writer_pid", pid);
  }
  if (H5Aexists(root, "writer_host") > 0) {
    h5::rewrite_string_attribute(root, "writer_host", host);
  } else {
    h5::write_attribute(root, "writer_host", std::string(host));
  }
}


// The run file's chunked datasets.
constexpr const char* run_chunked_datasets[] = {"v", "u", "step", "time", "checkpoint/u",
                                                "checkpoint/v"};

// Opens a file for reading: as a finished file, or, when a writer has it open in SWMR mode (or
// was killed while it had), as an SWMR reader, which sees every image flushed so far.
hid_t open_for_reading(const fs::path& path) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file >= 0) return file;
  H5Eclear2(H5E_DEFAULT);
  return H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
}

// Writes the raw bytes out of the operating system's cache (a node that loses power keeps the
// checkpoint). Only for a file this process writes alone through the POSIX driver.
void sync_to_disk(hid_t file) {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
    ::fsync(*static_cast<int*>(handle));
  }
}

// Asks the operating system to start writing the file's new pages to the disk now, without
// waiting for it: the disk works while the next images are computed, and the checkpoint's fsync
// (at the end of every run) then has little left to wait for (it took 0.17 s of the quick
// workload's 1.2 s when the whole file was left to it). Linux only; elsewhere the fsync does it
// all.
void start_writeback(hid_t file) {
#ifdef SYNC_FILE_RANGE_WRITE
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
    ::sync_file_range(*static_cast<int*>(handle), 0, 0, SYNC_FILE_RANGE_WRITE);
  }
#else
  (void)file;
#endif
}

// Dataset access without a chunk cache: each write goes to the file at once, so that a write the
// disk has no room for fails in that call (and is not counted), instead of at a later flush that
// may already have recorded the larger extent.
h5::Id uncached_access() {
  h5::Id dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "create dataset access properties");
  h5::check(H5Pset_chunk_cache(dapl, 0, 0, 1.0), "turn the chunk cache off");
  return dapl;
}

hsize_t chunk_rows_for(std::int64_t rows, std::int64_t cols, Precision precision) {
  // One image per chunk, split by rows only where an image exceeds HDF5's 4 GiB chunk limit.
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
  // Where the datasets' reserved room lies: [first byte, end) each.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rooms;
  // Notes the room of a chunked dataset whose first chunk is within its extent.
  void note_room(hid_t dataset) {
    h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
    std::vector<hsize_t> origin(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)), 0);
    unsigned filters = 0;
    haddr_t address = HADDR_UNDEF;
    hsize_t bytes = 0;
    if (H5Dget_chunk_info_by_coord(dataset, origin.data(), &filters, &address, &bytes) < 0 ||
        address == HADDR_UNDEF) {
      H5Eclear2(H5E_DEFAULT);
      return;
    }
    // The room of every chunk up to the dataset's largest extent (one block: early allocation).
    const int rank = H5Sget_simple_extent_ndims(space);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), max_dims(dims.size()),
        chunk(dims.size());
    H5Sget_simple_extent_dims(space, dims.data(), max_dims.data());
    h5::Id props(H5Dget_create_plist(dataset), H5Pclose, "read dataset properties");
    if (H5Pget_chunk(props, rank, chunk.data()) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return;
    }
    std::uint64_t chunks = 1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const hsize_t extent = max_dims[k] == H5S_UNLIMITED ? dims[k] : max_dims[k];
      chunks *= (extent + chunk[k] - 1) / chunk[k];
    }
    rooms.emplace_back(address, address + chunks * bytes);
  }
  // Where the images of each dataset written image by image (the fields, the checkpoint slots)
  // lie, made at its first image.
  std::vector<std::pair<hid_t, std::unique_ptr<h5::ImageLocator>>> locators;
  h5::ImageLocator& places_of(hid_t dataset) {
    for (auto& [id, locator] : locators) {
      if (id == dataset) return *locator;
    }
    locators.emplace_back(dataset, std::make_unique<h5::ImageLocator>(dataset));
    return *locators.back().second;
  }
  std::int64_t slot_images[2] = {0, 0};  // images done at each checkpoint slot; 0: empty
  DirectWrites direct;  // a single process's images, straight to the disk where it can
};

namespace {
// The default block is the whole image.
RunFileAccess with_block(RunFileAccess access, const Grid& grid) {
  if (access.rows <= 0 || access.cols <= 0) {
    access.row_begin = access.col_begin = 0;
    access.rows = grid.rows, access.cols = grid.cols;
  }
  return access;
}
}  // namespace

RunFileWriter::RunFileWriter(const fs::path& path, const RunMetadata& meta, bool overwrite,
                             const RunFileAccess& access)
    : h_(std::make_unique<Handles>()),
      path_(path),
      meta_(meta),
      access_(with_block(access, meta.problem.grid)) {
  h5::silence_library_errors();
  const Problem& p = meta.problem;
  const fs::path partial = partial_name(
      path, access_.partial_tag.empty() ? std::to_string(::getpid()) : access_.partial_tag);
  try {
    h5::Id fapl = h5::writer_access(access_.file_access);
    h_->file = h5::Id(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose,
                      "create " + partial.string());
    if (!access_.shared()) h_->direct = DirectWrites(partial);  // the name moves; the file stays

    const auto rows = static_cast<hsize_t>(p.grid.rows), cols = static_cast<hsize_t>(p.grid.cols);
    const hsize_t chunk_rows = chunk_rows_for(p.grid.rows, p.grid.cols, p.precision);
    const hid_t type = p.precision == Precision::Single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    const h5::Id uncached = uncached_access();
    auto make_field = [&](hid_t where, const char* name, hsize_t first, hsize_t first_max) {
      const hsize_t dims[3] = {first, rows, cols};
      const hsize_t max_dims[3] = {first_max, rows, cols};
      const hsize_t chunk[3] = {1, chunk_rows, cols};
      h5::Id space = h5::simple_space(dims, max_dims);
      h5::Id props = growing_dataset_properties(3, chunk);
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
      // The axes' names and coordinates, as dimension scales: /v and /u are (time, y, x), /step
      // is (time); xarray and netCDF-4 readers read them (see docs/file-format.md).
      h5::make_time_scale(h_->time);
      const h5::GridScales grid = h5::create_grid_scales(
          h_->file, p.grid.rows, p.grid.cols, access_.writes_companions, access_.transfer);
      const hid_t image_axes[3] = {h_->time, grid.y, grid.x};
      for (const h5::Id* field : {&h_->v, &h_->u}) {
        if (field->get() < 0) continue;
        h5::attach_scales(*field, image_axes);
        h5::write_attribute(*field, "coordinates", std::string("step"));
      }
      h5::attach_scales(h_->step, std::span<const hid_t>(image_axes, 1));
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
                         access_.transfer, h_->slot_images),
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
        hsize_t dims[3] = {0, 0, 0};
        H5Sget_simple_extent_dims(space, dims, nullptr);
        dims[0] = 1;
        h5::check(H5Dset_extent(*dataset, dims), "reserve room for the images");
        h_->note_room(*dataset);
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
    h5::write_attribute(root, "backend", meta.backend);
    h5::write_attribute(root, "version", meta.version);
    h5::write_attribute(root, "status", std::string("running"));
    // Who writes it, so that `grayscott repair` and `info` tell a running file from one whose
    // writer was killed. Over MPI the ranks are many: none is recorded (every rank creates the
    // same attributes, as a closed file holds them).
    if (!access_.shared()) {
      record_writer(root);
    } else {
      h5::write_attribute(root, "writer_pid", std::int64_t{0});
      h5::write_attribute(root, "writer_host", std::string());
    }
    h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + partial.string());
    // From here on readers may open the file while it grows; no new object may be created. The
    // file takes its name only then, so that a reader never finds it in another state.
    if (!access_.shared()) swmr_ = H5Fstart_swmr_write(h_->file) >= 0;
    // After SWMR's start, which cuts the file at its end (and any blocks past it).
    if (!access_.shared()) give_metadata_its_blocks();
    if (access_.writes_companions) {
      move_into_place(partial, path, overwrite);
      write_companion();  // no image yet: replaces any stale companion
    }
  } catch (...) {
    h_->u.reset(), h_->v.reset(), h_->step.reset(), h_->time.reset(), h_->checkpoint_u.reset(),
        h_->checkpoint_v.reset(), h_->checkpoint_images.reset(), h_->file.reset();
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
  h5::Id fapl = h5::writer_access(access_.file_access);
  h5::clear_writer_marks_on_open(fapl);
  h_->file = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose,
                    "open " + path.string() + " to continue it");
  // A killed writer may leave the superblock's end of file behind what it flushed.
  if (!access_.shared()) H5Fincrement_filesize(h_->file, 0);
  if (!access_.shared()) h_->direct = DirectWrites(path);
  open_datasets();
  written_ = durable_ = from.images_done;
  for (std::int64_t i = 0; i < from.images_done; ++i) {
    places_.push_back(image_places(static_cast<hsize_t>(i)));
  }
  h5::rewrite_string_attribute(h_->file, "status", "running");
  if (!access_.shared()) record_writer(h_->file);
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path.string());
  // Files of earlier versions written over MPI use the older format, which SWMR cannot use:
  // flushes still make the images durable, readers just cannot open the file while it is written.
  if (!access_.shared()) {
    swmr_ = H5Fstart_swmr_write(h_->file) >= 0;
    if (!swmr_) H5Eclear2(H5E_DEFAULT);
    give_metadata_its_blocks();
  }
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
  if (!meta_.fields.u) h_->checkpoint_u = open("checkpoint/u");
  if (!meta_.fields.v) h_->checkpoint_v = open("checkpoint/v");
  h_->checkpoint_images = open("checkpoint/images");
  h5::check(H5Dread(h_->checkpoint_images, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, access_.transfer,
                    h_->slot_images),
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

// Writes this process's block into [index, block] of a 3-D dataset of images.
void write_block(hid_t dataset, hsize_t index, const RunFileAccess& access, hid_t mem_type,
                 const void* data, const std::string& what) {
  h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const hsize_t start[3] = {index, static_cast<hsize_t>(access.row_begin),
                            static_cast<hsize_t>(access.col_begin)};
  const hsize_t count[3] = {1, static_cast<hsize_t>(access.rows),
                            static_cast<hsize_t>(access.cols)};
  h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
            "select an image");
  h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, 3));
  h5::check(H5Dwrite(dataset, mem_type, mem_space, file_space, access.transfer, data), what);
}

// Writes image `index` of a 3-D dataset of whole images (of `grid`, `element` bytes a value, in
// chunks of `chunk_rows` rows) straight to the disk, chunk by chunk at the places HDF5 gave them
// in the file. Returns false where a chunk cannot be written so (not aligned as the disk asks, or
// the file system declines): the caller then writes the image through HDF5, which writes the same
// bytes to the same places. HDF5 keeps no copy of these chunks (no chunk cache, nothing written
// at placement), so nothing of it goes stale.
bool write_image_directly(DirectWrites& direct, h5::ImageLocator& places, hsize_t index,
                          const Grid& grid, std::size_t element, const void* data,
                          const std::string& what) {
  // The file holds little-endian values: the memory's bytes are the file's only on such a CPU.
  if (!direct.usable() || std::endian::native != std::endian::little) return false;
  const auto rows = static_cast<hsize_t>(grid.rows), cols = static_cast<hsize_t>(grid.cols);
  const hsize_t chunk_rows = places.chunk_rows();
  if (chunk_rows == 0) return false;
  struct Chunk {
    const char* data;
    std::size_t bytes;
    haddr_t address;
  };
  std::vector<Chunk> chunks;
  const hsize_t leading[1] = {index};
  for (hsize_t row = 0; row < rows; row += chunk_rows) {
    const auto address = places.chunk_address(leading, row);
    if (!address) return false;
    const Chunk chunk{static_cast<const char*>(data) + row * cols * element,
                      static_cast<std::size_t>(std::min(chunk_rows, rows - row) * cols * element),
                      *address};
    if (!direct.accepts(chunk.data, chunk.bytes, chunk.address)) return false;
    chunks.push_back(chunk);
  }
  for (const Chunk& chunk : chunks) {
    if (!direct.write(chunk.data, chunk.bytes, chunk.address, what)) return false;
  }
  return true;
}

hsize_t first_extent(hid_t dataset) {
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  return dims[0];
}

}  // namespace

namespace {
bool out_of_space(const std::exception& e) {
  const std::string what = e.what();
  return what.find("No space left on device") != std::string::npos ||
         what.find("Disk quota exceeded") != std::string::npos;
}
}  // namespace

void RunFileWriter::append(std::int64_t step, const void* u, const void* v) {
  try {
    append_image(step, u, v);
  } catch (const std::exception& e) {
    after_write_error(e);
    throw;
  }
}

void RunFileWriter::after_write_error(const std::exception& e) {
  disk_full_ = disk_full_ || out_of_space(e);
  write_failed_ = true;
  // Shrinking is collective under MPI, and a failure need not reach every rank alike.
  if (access_.shared()) return;
  const auto rows = static_cast<hsize_t>(meta_.problem.grid.rows);
  const auto cols = static_cast<hsize_t>(meta_.problem.grid.cols);
  // Shrinking changes metadata in place, which needs no new room.
  const auto keep = [&](std::int64_t images) {
    const auto n = static_cast<hsize_t>(images);
    const hsize_t extent[3] = {n, rows, cols}, steps[1] = {n};
    if (meta_.fields.v && first_extent(h_->v) > n) H5Dset_extent(h_->v, extent);
    if (meta_.fields.u && first_extent(h_->u) > n) H5Dset_extent(h_->u, extent);
    if (first_extent(h_->step) > n) H5Dset_extent(h_->step, steps);
    if (h_->time.get() >= 0 && first_extent(h_->time) > n) H5Dset_extent(h_->time, steps);
    written_ = images;
    uncounted_steps_.clear();
    if (places_.size() > static_cast<std::size_t>(images)) {
      places_.resize(static_cast<std::size_t>(images));
    }
    return H5Fflush(h_->file, H5F_SCOPE_GLOBAL) >= 0;
  };
  // Every image whose writes completed is counted in /step (each append counts its image; a
  // failed one took its own back): keep them all, made durable by one more flush. Only if that
  // flush fails too, keep what the last flush that succeeded made durable.
  const std::int64_t complete = written_ - static_cast<std::int64_t>(uncounted_steps_.size());
  if (keep(complete)) {
    durable_ = complete;
    return;
  }
  H5Eclear2(H5E_DEFAULT);
  if (!keep(durable_)) H5Eclear2(H5E_DEFAULT);
}

void RunFileWriter::write_image(hid_t dataset, hsize_t index, const void* data,
                                const std::string& what) {
  const Problem& p = meta_.problem;
  if (!access_.shared() && h_->direct.usable() &&
      write_image_directly(h_->direct, h_->places_of(dataset), index, p.grid,
                           element_size(p.precision), data, what)) {
    return;
  }
  const hid_t mem_type = p.precision == Precision::Single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  write_block(dataset, index, access_, mem_type, data, what);
}

void RunFileWriter::append_image(std::int64_t step, const void* u, const void* v) {
  const Problem& p = meta_.problem;
  const auto n = static_cast<hsize_t>(written_);
  auto append_image = [&](const h5::Id& dataset, const void* data, const char* name) {
    // A continued run writes over the images it recomputes: the dataset never shrinks.
    const hsize_t before = first_extent(dataset);
    const hsize_t extent[3] = {std::max(before, n + 1), static_cast<hsize_t>(p.grid.rows),
                               static_cast<hsize_t>(p.grid.cols)};
    h5::check(H5Dset_extent(dataset, extent), std::string("grow dataset ") + name);
    try {
      write_image(dataset, n, data,
                  "write image " + std::to_string(n) + " of " + name + " to " + path_.string());
    } catch (...) {
      // Count no image that is not in the file.
      const hsize_t back[3] = {before, extent[1], extent[2]};
      H5Dset_extent(dataset, back);
      throw;
    }
  };
  if (meta_.fields.v) append_image(h_->v, v, "v");
  if (meta_.fields.u) append_image(h_->u, u, "u");
  ++written_;
  // /step counts the images, so it is written after them. Over MPI, where nothing orders the
  // metadata a flush writes, it grows only once the images are flushed (see count_images).
  uncounted_steps_.push_back(step);
  if (!access_.shared()) {
    count_images();
    start_writeback(h_->file);
  }
}

void RunFileWriter::count_images() {
  if (uncounted_steps_.empty()) return;
  const Problem& p = meta_.problem;
  const auto first = static_cast<hsize_t>(written_) - uncounted_steps_.size();
  const hsize_t count[1] = {uncounted_steps_.size()};
  std::vector<double> times(uncounted_steps_.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    times[i] = static_cast<double>(uncounted_steps_[i]) * p.params.dt;
  }
  auto write_values = [&](const h5::Id& dataset, hid_t value_type, const void* values,
                          const char* name) {
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
  };
  // The images' times, then their steps: /step, written last, never counts an image whose values
  // are not all there.
  if (h_->time.get() >= 0) write_values(h_->time, H5T_NATIVE_DOUBLE, times.data(), "time");
  write_values(h_->step, H5T_NATIVE_INT64, uncounted_steps_.data(), "step");
  uncounted_steps_.clear();
  // Every process asks (metadata reads are collective over MPI); a continued run recounts the
  // images it writes over, which stay where they were.
  places_.resize(std::min<std::size_t>(places_.size(), first));
  for (hsize_t i = places_.size(); i < first + count[0]; ++i) places_.push_back(image_places(i));
}

void RunFileWriter::make_images_durable() {
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
  if (uncounted_steps_.empty()) return;
  // The images are in the file; now /step counts them, in a flush of its own.
  count_images();
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path_.string());
}

void RunFileWriter::save_checkpoint(std::int64_t images_done, const void* u, const void* v) {
  try {
    // The final state goes into both slots, so that a complete file's checkpoint does not depend
    // on when the run saved the ones before it (a continued run's file is the uninterrupted one's).
    const bool final_state = images_done == meta_.images;
    if (final_state && h_->slot_images[0] == 0 && h_->slot_images[1] == 0) {
      // No valid checkpoint to keep meanwhile (a run shorter than its checkpoint interval): both
      // slots written, then made durable and marked valid together, in half the syncs.
      write_slot_state(0, u, v);
      write_slot_state(1, u, v);
      mark_slots_valid(0, 2, images_done);
      return;
    }
    save_into_older_slot(images_done, u, v);
    if (final_state && h_->slot_images[0] != h_->slot_images[1]) {
      save_into_older_slot(images_done, u, v);
    }
  } catch (const std::exception& e) {
    after_write_error(e);
    throw;
  }
}

void RunFileWriter::save_into_older_slot(std::int64_t images_done, const void* u, const void* v) {
  const int slot = h_->slot_images[0] <= h_->slot_images[1] ? 0 : 1;
  write_slot_state(slot, u, v);
  mark_slots_valid(slot, 1, images_done);
}

void RunFileWriter::write_slot_state(int slot, const void* u, const void* v) {
  const std::string what = "write the checkpoint to " + path_.string();
  if (!meta_.fields.u) write_image(h_->checkpoint_u, static_cast<hsize_t>(slot), u, what);
  if (!meta_.fields.v) write_image(h_->checkpoint_v, static_cast<hsize_t>(slot), v, what);
}

void RunFileWriter::mark_slots_valid(int first_slot, int slots, std::int64_t images_done) {
  // The state, and the images it follows, reach the disk before the slot says it is valid.
  make_images_durable();
  if (!access_.shared()) sync_to_disk(h_->file);
  const std::int64_t values[2] = {images_done, images_done};
  for (int s = first_slot; s < first_slot + slots; ++s) h_->slot_images[s] = images_done;
  {
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
                       access_.transfer, values),
              "write the checkpoint to " + path_.string());
  }
  flush();
  if (!access_.shared()) sync_to_disk(h_->file);
}

void RunFileWriter::flush() {
  try {
    make_images_durable();
  } catch (const std::exception& e) {
    after_write_error(e);
    throw;
  }
  durable_ = written_;
  // The companion lists exactly the images /step counts; each flush adds the new ones only.
  if (access_.writes_companions) {
    try {
      write_companion();
    } catch (const std::exception& e) {
      after_write_error(e);
      throw;
    }
  }
}

void RunFileWriter::give_metadata_its_blocks() {
  void* handle = nullptr;
  haddr_t end = 0;
  if (H5Fget_vfd_handle(h_->file, H5P_DEFAULT, &handle) < 0 || handle == nullptr ||
      H5Fget_eoa(h_->file, &end) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  const int fd = *static_cast<int*>(handle);
  // The room reserved for the datasets' chunks stays a hole until written (du shows what is
  // written); every other byte of the file is metadata. A continued file's room is found from
  // its chunks; where a field holds no image yet, nothing is done.
  if (h_->rooms.empty()) {
    for (const h5::Id* dataset : {&h_->v, &h_->u}) {
      if (dataset->get() >= 0 && first_extent(*dataset) == 0) return;
    }
    for (const h5::Id* dataset : {&h_->v, &h_->u, &h_->step, &h_->time, &h_->checkpoint_u,
                                  &h_->checkpoint_v}) {
      if (dataset->get() >= 0 && first_extent(*dataset) > 0) h_->note_room(*dataset);
    }
  }
  auto rooms = h_->rooms;
  std::sort(rooms.begin(), rooms.end());
  std::uint64_t from = 0;
  const auto allocate = [&](std::uint64_t begin, std::uint64_t finish) {
    if (finish > begin) {
      ::posix_fallocate(fd, static_cast<off_t>(begin), static_cast<off_t>(finish - begin));
    }
  };
  for (const auto& [begin, finish] : rooms) {
    allocate(from, std::min<std::uint64_t>(begin, end));
    from = std::max(from, finish);
  }
  allocate(from, end);
#ifdef FALLOC_FL_KEEP_SIZE
  // And blocks past the end for what HDF5 may add there (a new heap for a longer status), beyond
  // the file's size, which stays as it is.
  ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(end), 256 << 10);
#endif
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
    h_->u.reset(), h_->v.reset(), h_->step.reset(), h_->time.reset(), h_->checkpoint_u.reset(),
        h_->checkpoint_v.reset(), h_->checkpoint_images.reset();
    if (H5Fclose(h_->file.release()) < 0) {
      H5Eclear2(H5E_DEFAULT);
      status_recorded_ = false;
    }
    swmr_ = false;
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
  // Over MPI, the images appended since the last flush are not counted yet; closing flushes.
  if (!uncounted_steps_.empty()) make_images_durable();
  // In place: a reader never finds the file in any other state than open for SWMR or closed.
  h5::rewrite_string_attribute(h_->file, "status", status);
  // Collective over MPI ranks, each writing the same values.
  record_no_writer(h_->file);
  h_->u.reset(), h_->v.reset(), h_->step.reset(), h_->time.reset(), h_->checkpoint_u.reset(),
      h_->checkpoint_v.reset(), h_->checkpoint_images.reset();
  if (H5Fclose(h_->file.release()) < 0) h5::fail("close " + path_.string());
  swmr_ = false;
  if (access_.writes_companions) write_companion();
}

// ---------------------------------------------------------------------------------------------
// Continuing a run

RunFileState read_run_state(const fs::path& path) {
  RunFileReader file(path);
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
  RunMetadata& m = state.meta;
  Problem& p = m.problem;
  p = read_problem_attributes(file);
  p.params.feed = file.attribute_double("feed");
  p.params.kill = file.attribute_double("kill");
  m.images = file.attribute_int64("images");
  m.steps_per_image = file.attribute_int64("steps_per_image");
  m.fields = {file.has_field("u"), file.has_field("v")};
  m.initial = read_initial_attributes(file);
  if (m.initial.kind == InitialKind::Noise) {
    m.initial.seed = static_cast<std::uint64_t>(file.attribute_int64("seed"));
  }
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
  return state;
}

void place_unwritten_run_chunks(const fs::path& path) {
  h5::place_unwritten_chunks(path.string(), run_chunked_datasets);
}

template <class Real>
void read_checkpoint(const fs::path& path, std::int64_t row_begin, std::int64_t rows,
                     std::int64_t col_begin, std::int64_t cols, std::vector<Real>& u,
                     std::vector<Real>& v) {
  h5::silence_library_errors();
  h5::Id file(open_for_reading(path), H5Fclose, "open " + path.string());
  h5::Id images_set(H5Dopen2(file, "checkpoint/images", H5P_DEFAULT), H5Dclose,
                    "open /checkpoint/images in " + path.string());
  std::int64_t slots[2] = {0, 0};
  h5::check(H5Dread(images_set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, slots),
            "read /checkpoint/images");
  const int slot = slots[0] >= slots[1] ? 0 : 1;
  if (slots[slot] <= 0) throw std::logic_error("read_checkpoint: the file has no checkpoint");
  // A field the run writes is its last image; the others are in the checkpoint's slot.
  auto read = [&](const char* field, std::vector<Real>& out) {
    const bool written = H5Lexists(file, field, H5P_DEFAULT) > 0;
    const std::string name = written ? std::string(field) : std::string("checkpoint/") + field;
    const hsize_t index =
        written ? static_cast<hsize_t>(slots[slot] - 1) : static_cast<hsize_t>(slot);
    h5::Id dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "open /" + name);
    h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
    hsize_t dims[3] = {0, 0, 0};
    H5Sget_simple_extent_dims(space, dims, nullptr);
    const hsize_t start[3] = {index, static_cast<hsize_t>(row_begin),
                              static_cast<hsize_t>(col_begin)};
    const hsize_t count[3] = {1, rows > 0 ? static_cast<hsize_t>(rows) : dims[1],
                              rows > 0 ? static_cast<hsize_t>(cols) : dims[2]};
    h5::check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select the checkpoint");
    h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, 3));
    out.resize(count[1] * count[2]);
    h5::check(H5Dread(dataset, h5::native_type<Real>(), mem_space, space, H5P_DEFAULT, out.data()),
              "read /" + name + " from " + path.string());
  };
  read("u", u);
  read("v", v);
}

template void read_checkpoint<float>(const fs::path&, std::int64_t, std::int64_t, std::int64_t,
                                     std::int64_t, std::vector<float>&, std::vector<float>&);
template void read_checkpoint<double>(const fs::path&, std::int64_t, std::int64_t, std::int64_t,
                                      std::int64_t, std::vector<double>&, std::vector<double>&);

// ---------------------------------------------------------------------------------------------
// XDMF

XdmfGridInfo xdmf_grid_of(const RunMetadata& meta) {
  const Problem& p = meta.problem;
  return {p.grid.rows, p.grid.cols, meta.steps_per_image, p.params.dt, p.precision};
}

void write_xdmf(const fs::path& h5_path, const RunMetadata& meta, std::int64_t images) {
  h5::silence_library_errors();
  h5::Id file(open_for_reading(h5_path), H5Fclose, "open " + h5_path.string());
  std::vector<ImagePlaces> places;
  h5::Id u, v;
  std::optional<h5::ImageLocator> u_places, v_places;
  if (meta.fields.u) {
    u = h5::Id(H5Dopen2(file, "u", H5P_DEFAULT), H5Dclose, "open /u");
    u_places.emplace(u);
  }
  if (meta.fields.v) {
    v = h5::Id(H5Dopen2(file, "v", H5P_DEFAULT), H5Dclose, "open /v");
    v_places.emplace(v);
  }
  for (std::int64_t i = 0; i < images; ++i) {
    const hsize_t leading[1] = {static_cast<hsize_t>(i)};
    ImagePlaces place;
    if (u_places) place.u = u_places->image_offset(leading);
    if (v_places) place.v = v_places->image_offset(leading);
    places.push_back(place);
  }
  XdmfCompanion companion(h5_path, "grayscott",
                          [&, grid = xdmf_grid_of(meta)](std::int64_t i) {
                            return xdmf_run_step(h5_path, grid, i,
                                                 places[static_cast<std::size_t>(i)]);
                          });
  companion.write(images);
}

// ---------------------------------------------------------------------------------------------
// Reader

struct RunFileReader::Handles {
  h5::Id file;
};

RunFileReader::RunFileReader(const fs::path& path) : h_(std::make_unique<Handles>()), path_(path) {
  h5::silence_library_errors();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw PathNotFound(path.string() + ": no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    // The companion given for its run file: name the file that holds the images.
    if (path.extension() == ".xmf" || path.extension() == ".xdmf") {
      for (const char* extension : {".h5", ".hdf5"}) {
        fs::path run = path;
        run.replace_extension(extension);
        if (fs::exists(run, ec)) {
          throw InvalidInput(path.string() + " is the XDMF companion of " + run.string() +
                             ", which holds the images: give " + run.string());
        }
      }
    }
    throw InvalidInput(path.string() + " is not an HDF5 file");
  }
  h_->file = h5::Id(open_for_reading(path), H5Fclose, "open " + path.string());
}

RunFileReader::~RunFileReader() = default;

bool RunFileReader::places_chunks_as_it_grows(const std::string& dataset) const {
  h5::Id d(H5Dopen2(h_->file, dataset.c_str(), H5P_DEFAULT), H5Dclose,
           "open /" + dataset + " in " + path_.string());
  h5::Id props(H5Dget_create_plist(d), H5Pclose, "read the properties of /" + dataset);
  if (H5Pget_layout(props) != H5D_CHUNKED) return true;
  H5D_alloc_time_t when = H5D_ALLOC_TIME_DEFAULT;
  h5::check(H5Pget_alloc_time(props, &when), "read the allocation time of /" + dataset);
  return when == H5D_ALLOC_TIME_EARLY;
}

std::int64_t RunFileReader::unplaced_chunks(const std::string& dataset) const {
  h5::Id d(H5Dopen2(h_->file, dataset.c_str(), H5P_DEFAULT), H5Dclose,
           "open /" + dataset + " in " + path_.string());
  h5::Id props(H5Dget_create_plist(d), H5Pclose, "read the properties of /" + dataset);
  if (H5Pget_layout(props) != H5D_CHUNKED) return 0;
  h5::Id space(H5Dget_space(d), H5Sclose, "read the shape of /" + dataset);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 1))), chunk(dims.size());
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  h5::check(H5Pget_chunk(props, rank, chunk.data()), "read the chunks of /" + dataset);
  hsize_t chunks = 1;
  for (int i = 0; i < rank; ++i) chunks *= (dims[i] + chunk[i] - 1) / chunk[i];
  hsize_t placed = 0;
  h5::check(H5Dget_num_chunks(d, space, &placed), "count the chunks of /" + dataset);
  return static_cast<std::int64_t>(chunks - std::min(chunks, placed));
}

bool RunFileReader::has_field(const std::string& field) const {
  return H5Lexists(h_->file, field.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::int64_t> RunFileReader::shape(const std::string& field) const {
  if (!has_field(field)) throw InvalidInput(path_.string() + " has no dataset /" + field);
  h5::Id dataset(H5Dopen2(h_->file, field.c_str(), H5P_DEFAULT), H5Dclose, "open /" + field);
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

std::vector<double> RunFileReader::read_image(const std::string& field, std::int64_t image,
                                              std::int64_t member) const {
  const auto dims = shape(field);
  if (dims.size() != 3 && dims.size() != 4) {
    throw InvalidInput("/" + field + " is not a stack of images");
  }
  const bool sweep = dims.size() == 4;
  const std::int64_t images = dims[sweep ? 1 : 0];
  if (image < 0 || image >= images) {
    throw InvalidInput("image " + std::to_string(image) + " is out of range (the file holds " +
                       std::to_string(images) + ")");
  }
  if (sweep && (member < 0 || member >= dims[0])) {
    throw InvalidInput("member " + std::to_string(member) + " is out of range");
  }
  const auto rows = static_cast<hsize_t>(dims[dims.size() - 2]);
  const auto cols = static_cast<hsize_t>(dims[dims.size() - 1]);
  h5::Id dataset(H5Dopen2(h_->file, field.c_str(), H5P_DEFAULT), H5Dclose, "open /" + field);
  h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  std::vector<hsize_t> start, count;
  if (sweep)
    start = {static_cast<hsize_t>(member), static_cast<hsize_t>(image), 0, 0},
    count = {1, 1, rows, cols};
  else
    start = {static_cast<hsize_t>(image), 0, 0}, count = {1, rows, cols};
  h5::check(
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
      "select an image");
  const hsize_t mem_dims[2] = {rows, cols};
  h5::Id mem_space = h5::simple_space(mem_dims);
  std::vector<double> out(rows * cols);
  h5::check(H5Dread(dataset, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, out.data()),
            "read image " + std::to_string(image) + " of /" + field);
  return out;
}

namespace {
template <class T>
std::vector<T> read_whole(hid_t file, const std::string& name, hid_t mem_type) {
  h5::Id dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "open /" + name);
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  std::vector<T> out(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
  if (!out.empty()) {
    h5::check(H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
              "read /" + name);
  }
  return out;
}

h5::Id open_attribute(hid_t file, const std::string& name) {
  if (H5Aexists(file, name.c_str()) <= 0) {
    throw InvalidInput("the file has no attribute " + name);
  }
  return h5::Id(H5Aopen(file, name.c_str(), H5P_DEFAULT), H5Aclose, "open attribute " + name);
}
}  // namespace

std::vector<std::int64_t> RunFileReader::read_int64(const std::string& dataset) const {
  return read_whole<std::int64_t>(h_->file, dataset, H5T_NATIVE_INT64);
}

std::vector<double> RunFileReader::read_doubles(const std::string& dataset) const {
  return read_whole<double>(h_->file, dataset, H5T_NATIVE_DOUBLE);
}

bool RunFileReader::has_attribute(const std::string& name) const {
  return H5Aexists(h_->file, name.c_str()) > 0;
}

double RunFileReader::attribute_double(const std::string& name) const {
  h5::Id attr = open_attribute(h_->file, name);
  double value = 0;
  h5::check(H5Aread(attr, H5T_NATIVE_DOUBLE, &value), "read attribute " + name);
  return value;
}

std::int64_t RunFileReader::attribute_int64(const std::string& name) const {
  h5::Id attr = open_attribute(h_->file, name);
  std::int64_t value = 0;
  h5::check(H5Aread(attr, H5T_NATIVE_INT64, &value), "read attribute " + name);
  return value;
}

std::vector<double> RunFileReader::attribute_doubles(const std::string& name) const {
  h5::Id attr = open_attribute(h_->file, name);
  h5::Id space(H5Aget_space(attr), H5Sclose, "get a dataspace");
  std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  h5::check(H5Aread(attr, H5T_NATIVE_DOUBLE, values.data()), "read attribute " + name);
  return values;
}

std::string RunFileReader::attribute_string(const std::string& name) const {
  h5::Id attr = open_attribute(h_->file, name);
  h5::Id type(H5Aget_type(attr), H5Tclose, "get a type");
  if (H5Tis_variable_str(type) > 0) {
    char* text = nullptr;
    h5::check(H5Aread(attr, type, &text), "read attribute " + name);
    std::string value = text ? text : "";
    h5::Id space(H5Aget_space(attr), H5Sclose, "get a dataspace");
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, &text);
    return value;
  }
  std::string value(H5Tget_size(type), '\0');
  h5::check(H5Aread(attr, type, value.data()), "read attribute " + name);
  return value.substr(0, value.find('\0'));
}

}  // namespace grayscott::io
