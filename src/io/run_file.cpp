#include "io/run_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "io/hdf5.hpp"

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
  // In floating point: the product of absurd requests must not wrap around to a small number.
  const double bytes = fields * static_cast<double>(meta.images) *
                       static_cast<double>(meta.problem.grid.rows) *
                       static_cast<double>(meta.problem.grid.cols) *
                       static_cast<double>(element_size(meta.problem.precision));
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

void check_output_path(const fs::path& path, bool overwrite, std::uint64_t bytes) {
  // What is wrong with the name itself comes first: --force cannot make a folder a file.
  if (path.empty()) throw InvalidInput("output: the file name is empty");
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw InvalidInput("output " + path.string() + " is a directory, not a file");
  }
  if (fs::exists(path, ec) && !overwrite) {
    throw InvalidInput("output " + path.string() + " already exists (use --force to overwrite)");
  }
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw InvalidInput("output folder " + folder.string() + " does not exist");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw InvalidInput("output folder " + folder.string() + " is not writable");
  }
  const fs::space_info space = fs::space(folder, ec);
  // Replacing a file frees its bytes first.
  const std::uint64_t reclaimable = fs::exists(path, ec) ? fs::file_size(path, ec) : 0;
  if (!ec &&
      static_cast<double>(space.available + reclaimable) < 1.01 * static_cast<double>(bytes)) {
    throw InvalidInput("output needs " + format_bytes(bytes) + " but " + folder.string() +
                       " has only " + format_bytes(space.available) + " free");
  }
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
}

// ---------------------------------------------------------------------------------------------
// Writer

struct RunFileWriter::Handles {
  h5::Id file, u, v, step;
};

RunFileWriter::RunFileWriter(const fs::path& path, const RunMetadata& meta,
                             const RunFileAccess& access)
    : h_(std::make_unique<Handles>()), path_(path), meta_(meta), access_(access) {
  h5::silence_library_errors();
  const Problem& p = meta.problem;
  if (access_.rows <= 0 || access_.cols <= 0) {
    access_.row_begin = access_.col_begin = 0;
    access_.rows = p.grid.rows, access_.cols = p.grid.cols;
  }
  h_->file = h5::Id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access_.file_access),
                    H5Fclose, "create " + path.string());

  const auto rows = static_cast<hsize_t>(p.grid.rows), cols = static_cast<hsize_t>(p.grid.cols);
  const hsize_t dims[3] = {0, rows, cols};
  const hsize_t max_dims[3] = {H5S_UNLIMITED, rows, cols};
  // One image per chunk, split by rows only where an image exceeds HDF5's 4 GiB chunk limit.
  const hsize_t max_chunk_rows =
      std::max<hsize_t>(1, (hsize_t{1} << 31) / (cols * element_size(p.precision)));
  const hsize_t chunk[3] = {1, std::min(rows, max_chunk_rows), cols};
  const hid_t type = p.precision == Precision::Single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  auto make_field = [&](const char* name) {
    h5::Id space = h5::simple_space(dims, max_dims);
    h5::Id props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
    h5::check(H5Pset_chunk(props, 3, chunk), "set chunking");
    return h5::Id(H5Dcreate2(h_->file, name, type, space, H5P_DEFAULT, props, H5P_DEFAULT),
                  H5Dclose, std::string("create dataset ") + name);
  };
  if (meta.fields.v) {
    h_->v = make_field("v");
    // The course's tools read the dataset "matrix".
    h5::check(H5Lcreate_hard(h_->file, "v", h_->file, "matrix", H5P_DEFAULT, H5P_DEFAULT),
              "link /matrix to /v");
  }
  if (meta.fields.u) h_->u = make_field("u");
  {
    const hsize_t sdims[1] = {0}, smax[1] = {H5S_UNLIMITED}, schunk[1] = {1024};
    h5::Id space = h5::simple_space(sdims, smax);
    h5::Id props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
    h5::check(H5Pset_chunk(props, 1, schunk), "set chunking");
    h_->step =
        h5::Id(H5Dcreate2(h_->file, "step", H5T_STD_I64LE, space, H5P_DEFAULT, props, H5P_DEFAULT),
               H5Dclose, "create dataset step");
  }

  const hid_t root = h_->file;
  write_problem_attributes(root, p, meta.images, meta.steps_per_image);
  h5::write_attribute(root, "feed", p.params.feed);
  h5::write_attribute(root, "kill", p.params.kill);
  h5::write_attribute(root, "init", std::string(to_string(meta.initial.kind)));
  if (meta.initial.kind == InitialKind::Noise) {
    h5::write_attribute(root, "seed", static_cast<std::int64_t>(meta.initial.seed));
    h5::write_attribute(root, "noise_amplitude", noise_amplitude);
  }
  h5::write_attribute(root, "backend", meta.backend);
  h5::write_attribute(root, "version", meta.version);
  h5::write_attribute(root, "status", std::string("running"));
  h5::check(H5Fflush(h_->file, H5F_SCOPE_GLOBAL), "flush " + path.string());
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

void RunFileWriter::append(std::int64_t step, const void* u, const void* v) {
  const Problem& p = meta_.problem;
  const auto n = static_cast<hsize_t>(written_);
  const hid_t mem_type = p.precision == Precision::Single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  auto append_image = [&](const h5::Id& dataset, const void* data, const char* name) {
    const hsize_t extent[3] = {n + 1, static_cast<hsize_t>(p.grid.rows),
                               static_cast<hsize_t>(p.grid.cols)};
    h5::check(H5Dset_extent(dataset, extent), std::string("grow dataset ") + name);
    h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
    const hsize_t start[3] = {n, static_cast<hsize_t>(access_.row_begin),
                              static_cast<hsize_t>(access_.col_begin)};
    const hsize_t count[3] = {1, static_cast<hsize_t>(access_.rows),
                              static_cast<hsize_t>(access_.cols)};
    h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select an image");
    h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, 3));
    h5::check(H5Dwrite(dataset, mem_type, mem_space, file_space, access_.transfer, data),
              "write image " + std::to_string(n) + " of " + name + " to " + path_.string());
  };
  if (meta_.fields.v) append_image(h_->v, v, "v");
  if (meta_.fields.u) append_image(h_->u, u, "u");
  {
    const hsize_t extent[1] = {n + 1};
    h5::check(H5Dset_extent(h_->step, extent), "grow dataset step");
    h5::Id file_space(H5Dget_space(h_->step), H5Sclose, "get a dataspace");
    const hsize_t start[1] = {n}, count[1] = {1};
    h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
              "select a step");
    h5::Id mem_space = h5::simple_space(std::span<const hsize_t>(count, 1));
    // Every process takes part in a collective write; one of them brings the value.
    if (!access_.writes_companions) {
      h5::check(H5Sselect_none(file_space), "select no step");
      h5::check(H5Sselect_none(mem_space), "select no step");
    }
    h5::check(H5Dwrite(h_->step, H5T_NATIVE_INT64, mem_space, file_space, access_.transfer, &step),
              "write step");
  }
  ++written_;
}

void RunFileWriter::finish(const std::string& status) {
  if (h_->file.get() < 0) return;
  h5::write_attribute(h_->file, "status", status);
  h_->u.reset();
  h_->v.reset();
  h_->step.reset();
  if (H5Fclose(h_->file.get()) < 0) {
    throw std::runtime_error("HDF5: cannot close " + path_.string());
  }
  h_->file = h5::Id();  // already closed
  if (access_.writes_companions) write_xdmf(path_, meta_, written_);
}

// ---------------------------------------------------------------------------------------------
// XDMF

void write_xdmf(const fs::path& h5_path, const RunMetadata& meta, std::int64_t images_written) {
  const Problem& p = meta.problem;
  write_xdmf_series(h5_path, {"grayscott",
                              {images_written, p.grid.rows, p.grid.cols},
                              0,
                              images_written,
                              meta.steps_per_image,
                              p.params.dt,
                              meta.fields,
                              p.precision});
}

// ---------------------------------------------------------------------------------------------
// Reader

struct RunFileReader::Handles {
  h5::Id file;
};

RunFileReader::RunFileReader(const fs::path& path) : h_(std::make_unique<Handles>()), path_(path) {
  h5::silence_library_errors();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InvalidInput(path.string() + ": no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InvalidInput(path.string() + " is not an HDF5 file");
  h_->file =
      h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path.string());
}

RunFileReader::~RunFileReader() = default;

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
