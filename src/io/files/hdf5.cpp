#include "io/files/hdf5.hpp"

#include <hdf5_hl.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "model/model.hpp"

namespace grayscott::io::h5 {

std::string library_description() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::string text =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
#ifdef H5_HAVE_PARALLEL
  return text + ", parallel (MPI-IO: one file written by every MPI rank)";
#else
  return text + ", serial";
#endif
}

void silence_library_errors() {
  if (!std::getenv("GRAYSCOTT_HDF5_ERRORS")) H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Id writer_access(hid_t shared) {
  if (shared != H5P_DEFAULT) return Id(H5Pcopy(shared), H5Pclose, "copy file access properties");
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  check(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "choose the file format");
  // The gaps before large objects are at most `alignment` bytes each.
  check(H5Pset_alignment(fapl, aligned_from, alignment), "align large objects in the file");
  return fapl;
}

void clear_writer_marks_on_open(hid_t fapl) {
  hbool_t clear = 1;
  if (H5Pexist(fapl, "clear_status_flags") > 0) {
    check(H5Pset(fapl, "clear_status_flags", &clear), "ask to clear the file's write marks");
  }
}

namespace {
// The file drivers describe a failed system call as "..., errno = 28, error message = 'No space
// left on device', ...": the part after "error message = '" is the reason a user needs. The MPI-IO
// driver quotes the MPI library's reason instead ("MPI_File_write_at_all failed: MPI error string
// is 'MPI_ERR_IO: input/output error'").
herr_t find_system_reason(unsigned, const H5E_error2_t* error, void* found) {
  auto& reason = *static_cast<std::string*>(found);
  if (!reason.empty() || error->desc == nullptr) return 0;
  const std::string_view desc = error->desc;
  for (const std::string_view marker : {"error message = '", "MPI error string is '"}) {
    const auto at = desc.find(marker);
    if (at == std::string_view::npos) continue;
    const auto start = at + marker.size();
    reason = desc.substr(start, desc.find('\'', start) - start);  // npos - start: to the end
    return 0;
  }
  return 0;
}

// The innermost description of the error stack: what HDF5 found wrong ("truncated file: eof =
// ...", "incorrect metadata checksum after all read attempts").
herr_t find_innermost(unsigned, const H5E_error2_t* error, void* found) {
  auto& reason = *static_cast<std::string*>(found);
  if (reason.empty() && error->desc != nullptr) reason = error->desc;
  return 0;
}
}  // namespace

std::string system_reason() {
  std::string reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_system_reason, &reason);
  if (reason.empty()) H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_innermost, &reason);
  return reason;
}

void fail(const std::string& what) {
  const std::string reason = system_reason();
  const std::string message = "HDF5: cannot " + what + (reason.empty() ? "" : ": " + reason);
  // HDF5 locks a file it opens (flock): a lock refused means another open of it, in another
  // program or through another HDF5 library in this one (h5py's).
  if (reason == std::strerror(EWOULDBLOCK)) {
    throw FileLocked(message +
                     " (the file is open elsewhere: another grayscott starting on it, or a reader "
                     "such as h5py, xarray, gs.open or ParaView that holds it; close it there and "
                     "try again)");
  }
  // A file the user may not open as asked (read-only, another's): Python's PermissionError.
  if (reason == std::strerror(EACCES) || reason == std::strerror(EPERM)) throw FileDenied(message);
  throw std::runtime_error(message);
}

Id simple_space(std::span<const hsize_t> dims, std::span<const hsize_t> max_dims) {
  return Id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                             max_dims.empty() ? nullptr : max_dims.data()),
            H5Sclose, "create a dataspace");
}

void read_block(hid_t dataset, std::span<const hsize_t> start, std::span<const hsize_t> count,
                hid_t mem_type, void* out, const std::string& what) {
  Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "select " + what);
  Id mem = simple_space(count);
  check(H5Dread(dataset, mem_type, mem, space, H5P_DEFAULT, out), "read " + what);
}

void write_block(hid_t dataset, std::span<const hsize_t> start, std::span<const hsize_t> count,
                 hid_t mem_type, const void* data, const std::string& what, hid_t transfer) {
  Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "select the block to " + what);
  Id mem = simple_space(count);
  check(H5Dwrite(dataset, mem_type, mem, space, transfer, data), what);
}

hid_t native_type(Precision precision) {
  return precision == Precision::Single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

void read_checkpoint_block(hid_t u_dataset, hid_t v_dataset, std::span<const hsize_t> start,
                           std::span<const hsize_t> count, hid_t mem_type, void* u, void* v,
                           const std::string& file) {
  if (u_dataset >= 0) read_block(u_dataset, start, count, mem_type, u, "checkpoint/u of " + file);
  if (v_dataset >= 0) read_block(v_dataset, start, count, mem_type, v, "checkpoint/v of " + file);
}

namespace {
void write_numeric(hid_t obj, const std::string& name, hid_t type, std::span<const hsize_t> dims,
                   const void* data) {
  Id space =
      dims.empty() ? Id(H5Screate(H5S_SCALAR), H5Sclose, "create a dataspace") : simple_space(dims);
  if (H5Aexists(obj, name.c_str()) > 0) check(H5Adelete(obj, name.c_str()), "replace " + name);
  Id attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
          "create attribute " + name);
  check(H5Awrite(attr, type, data), "write attribute " + name);
}
}  // namespace

void write_attribute(hid_t obj, const std::string& name, std::int64_t value) {
  write_numeric(obj, name, H5T_NATIVE_INT64, {}, &value);
}

void write_attribute(hid_t obj, const std::string& name, double value) {
  write_numeric(obj, name, H5T_NATIVE_DOUBLE, {}, &value);
}

void write_attribute(hid_t obj, const std::string& name, std::span<const double> values) {
  const hsize_t dims[1] = {values.size()};
  write_numeric(obj, name, H5T_NATIVE_DOUBLE, dims, values.data());
}

void write_attribute(hid_t obj, const std::string& name, std::span<const std::int64_t> values) {
  const hsize_t dims[1] = {values.size()};
  write_numeric(obj, name, H5T_NATIVE_INT64, dims, values.data());
}

void write_attribute(hid_t obj, const std::string& name, const std::string& value) {
  // Variable-length UTF-8: h5py reads it as str, ParaView and h5dump as text.
  Id type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type, H5T_VARIABLE), "size a string type");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "set a string's character set");
  Id space(H5Screate(H5S_SCALAR), H5Sclose, "create a dataspace");
  if (H5Aexists(obj, name.c_str()) > 0) check(H5Adelete(obj, name.c_str()), "replace " + name);
  Id attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
          "create attribute " + name);
  const char* text = value.c_str();
  check(H5Awrite(attr, type, &text), "write attribute " + name);
}

void rewrite_string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  Id attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "open attribute " + name);
  Id type(H5Aget_type(attr), H5Tclose, "get a type");
  if (H5Tis_variable_str(type) <= 0) throw std::logic_error(name + " is not a variable string");
  const char* text = value.c_str();
  check(H5Awrite(attr, type, &text), "write attribute " + name);
}

void make_scale(hid_t dataset, const std::string& name) {
  check(H5DSset_scale(dataset, name.c_str()), "make " + name + " a dimension scale");
}

void attach_scales(hid_t dataset, std::span<const hid_t> scales) {
  for (std::size_t k = 0; k < scales.size(); ++k) {
    check(H5DSattach_scale(dataset, scales[k], static_cast<unsigned>(k)),
          "attach a dimension scale");
  }
}

Id create_index_scale(hid_t where, const std::string& name, std::int64_t count, bool write_values,
                      hid_t transfer) {
  const hsize_t dims[1] = {static_cast<hsize_t>(count)};
  Id space = simple_space(dims);
  Id dataset(
      H5Dcreate2(where, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "create dataset " + name);
  if (count > 0 && (write_values || transfer != H5P_DEFAULT)) {
    std::vector<std::int64_t> values(write_values ? static_cast<std::size_t>(count) : 0);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(i);
    Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
    Id mem_space = simple_space(dims);
    if (!write_values) {
      check(H5Sselect_none(file_space), "select nothing");
      check(H5Sselect_none(mem_space), "select nothing");
    }
    check(H5Dwrite(dataset, H5T_NATIVE_INT64, mem_space, file_space, transfer,
                   values.empty() ? nullptr : values.data()),
          "write dataset " + name);
  }
  make_scale(dataset, name);
  return dataset;
}

GridScales create_grid_scales(hid_t where, std::int64_t rows, std::int64_t cols, bool write_values,
                              hid_t transfer, std::int64_t depth) {
  GridScales scales;
  if (depth > 1) {
    scales.z = create_index_scale(where, "z", depth, write_values, transfer);
    write_attribute(scales.z, "long_name", std::string("plane of the volume"));
  }
  scales.y = create_index_scale(where, "y", rows, write_values, transfer);
  scales.x = create_index_scale(where, "x", cols, write_values, transfer);
  write_attribute(scales.y, "long_name", std::string("row (0 at the top of the pictures)"));
  write_attribute(scales.x, "long_name", std::string("column"));
  return scales;
}

void write_class_attributes(hid_t dataset, std::span<const std::string_view> names) {
  std::vector<std::int64_t> values;
  std::string meanings;
  for (std::size_t i = 0; i < names.size(); ++i) {
    values.push_back(static_cast<std::int64_t>(i));
    if (i > 0) meanings += ' ';
    meanings += names[i];
  }
  write_attribute(dataset, "flag_values", std::span<const std::int64_t>(values));
  write_attribute(dataset, "flag_meanings", meanings);
  write_attribute(dataset, "long_name", std::string("pattern class (-1: not classified)"));
}

std::vector<hsize_t> with_image_axes(std::initializer_list<hsize_t> leading, const Grid& grid) {
  std::vector<hsize_t> dims(leading);
  if (grid.volume()) dims.push_back(static_cast<hsize_t>(grid.depth));
  dims.push_back(static_cast<hsize_t>(grid.rows));
  dims.push_back(static_cast<hsize_t>(grid.cols));
  return dims;
}

void make_time_scale(hid_t dataset) {
  make_scale(dataset, "time");
  write_attribute(dataset, "long_name", std::string("model time: step x dt"));
}

bool mend_file_view_after_failure([[maybe_unused]] hid_t file, bool failed_here) {
#ifdef GRAYSCOTT_WITH_MPI
  Id fapl(H5Fget_access_plist(file), H5Pclose, "read the file's access properties");
  if (H5Pget_driver(fapl) != H5FD_MPIO) return failed_here;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  check(H5Pget_fapl_mpio(fapl, &comm, &info), "read the file's MPI communicator");
  int failed = failed_here ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  void* handle = nullptr;
  const bool mend = failed != 0 && H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle;
  if (mend) {
    // The view HDF5 keeps between its writes (H5FDmpio.c: displacement 0, bytes, "native").
    char native[] = "native";
    MPI_File_set_view(*static_cast<MPI_File*>(handle), 0, MPI_BYTE, MPI_BYTE, native,
                      MPI_INFO_NULL);
  }
  MPI_Comm_free(&comm);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return failed != 0;
#else
  return failed_here;
#endif
}

struct WriteAgreement::Comm {
#ifdef GRAYSCOTT_WITH_MPI
  MPI_Comm comm = MPI_COMM_NULL;
#endif
};

WriteAgreement::WriteAgreement([[maybe_unused]] hid_t file_or_access)
    : comm_(std::make_unique<Comm>()) {
#ifdef GRAYSCOTT_WITH_MPI
  const hid_t given = file_or_access;
  Id fapl(H5Iget_type(given) == H5I_FILE ? H5Fget_access_plist(given) : H5Pcopy(given), H5Pclose,
          "read the file's access properties");
  if (H5Pget_driver(fapl) != H5FD_MPIO) return;
  MPI_Info info = MPI_INFO_NULL;
  check(H5Pget_fapl_mpio(fapl, &comm_->comm, &info), "read the file's MPI communicator");
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
#endif
}

WriteAgreement::~WriteAgreement() {
#ifdef GRAYSCOTT_WITH_MPI
  if (comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
#endif
}

bool WriteAgreement::any(bool failed_here) {
#ifdef GRAYSCOTT_WITH_MPI
  if (comm_->comm == MPI_COMM_NULL) return failed_here;
  int failed = failed_here ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm_->comm);
  return failed != 0;
#else
  return failed_here;
#endif
}

void place_unwritten_chunks(const std::string& path, std::span<const char* const> datasets) {
  silence_library_errors();
  // This process alone, before the ranks open it; the file's own format (no new objects).
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  clear_writer_marks_on_open(fapl);
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), H5Fclose,
          "open " + path + " to ready it for MPI");
  H5Fincrement_filesize(file, 0);  // a killed writer may leave the end of file behind
  for (const char* name : datasets) {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) continue;  // negative: no such group either
    Id dataset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, std::string("open /") + name);
    Id props(H5Dget_create_plist(dataset), H5Pclose, std::string("read /") + name);
    if (H5Pget_layout(props) != H5D_CHUNKED) continue;
    Id type(H5Dget_type(dataset), H5Tclose, std::string("read the type of /") + name);
    Id space(H5Dget_space(dataset), H5Sclose, std::string("read the shape of /") + name);
    const int rank = H5Sget_simple_extent_ndims(space);
    // The most axes a grayscott dataset has: a sweep of volumes' [member, time, z, y, x].
    constexpr int max_rank = 5;
    std::array<hsize_t, max_rank> dims{}, chunk{};
    if (rank < 1 || rank > max_rank || H5Pget_chunk(props, rank, chunk.data()) != rank) {
      throw std::runtime_error("unexpected chunking of /" + std::string(name) + " in " + path);
    }
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    hsize_t chunk_values = 1;
    for (int d = 0; d < rank; ++d) chunk_values *= chunk[d];
    const std::size_t value_size = H5Tget_size(type);
    std::vector<unsigned char> fill(value_size), values(chunk_values * value_size);
    check(H5Pget_fill_value(props, type, fill.data()),
          std::string("read the fill value of /") + name);
    for (hsize_t i = 0; i < chunk_values; ++i) {
      std::copy(fill.begin(), fill.end(),
                values.begin() + static_cast<std::ptrdiff_t>(i * value_size));
    }
    // Every chunk in row-major order of the chunk grid.
    std::array<hsize_t, max_rank> at{};
    for (;;) {
      haddr_t address = HADDR_UNDEF;
      unsigned filters = 0;
      hsize_t bytes = 0;
      check(H5Dget_chunk_info_by_coord(dataset, at.data(), &filters, &address, &bytes),
            std::string("look up a chunk of /") + name);
      if (address == HADDR_UNDEF) {
        std::array<hsize_t, max_rank> count{};
        for (int d = 0; d < rank; ++d) count[d] = std::min(chunk[d], dims[d] - at[d]);
        Id part(H5Scopy(space), H5Sclose, "copy a dataspace");
        check(H5Sselect_hyperslab(part, H5S_SELECT_SET, at.data(), nullptr, count.data(), nullptr),
              "select a chunk");
        Id memory = simple_space(std::span<const hsize_t>(count.data(), rank));
        check(H5Dwrite(dataset, type, memory, part, H5P_DEFAULT, values.data()),
              std::string("write the fill value into /") + name + " of " + path);
      }
      int d = rank - 1;
      for (; d >= 0; --d) {
        at[d] += chunk[d];
        if (at[d] < dims[d]) break;
        at[d] = 0;
      }
      if (d < 0) break;
    }
  }
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush " + path);
}

ImageLocator::ImageLocator(hid_t dataset, int image_axes)
    : dataset_(dataset), image_axes_(image_axes) {
  const Id props(H5Dget_create_plist(dataset), H5Pclose, "read dataset properties");
  const Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space);
  if (H5Pget_layout(props) != H5D_CHUNKED || rank < image_axes + 1) return;
  const auto n = static_cast<std::size_t>(rank);
  std::vector<hsize_t> dims(n), max_dims(n);
  H5Sget_simple_extent_dims(space, dims.data(), max_dims.data());
  chunk_.resize(n);
  check(H5Pget_chunk(props, rank, chunk_.data()), "read the chunks");
  const Id type(H5Dget_type(dataset), H5Tclose, "get a type");
  rows_ = dims[n - 2];
  if (image_axes == 3) planes_ = dims[n - 3];
  row_bytes_ = dims[n - 1] * H5Tget_size(type);
  chunk_bytes_ = chunk_[n - 2] * row_bytes_;
  if (chunk_[n - 1] != dims[n - 1]) return;
  for (std::size_t k = 0; k + 2 < n; ++k) {
    if (chunk_[k] != 1) return;
  }
  usable_ = true;
  unfiltered_ = H5Pget_nfilters(props) == 0;
  H5D_alloc_time_t when = H5D_ALLOC_TIME_DEFAULT;
  H5Pget_alloc_time(props, &when);
  bool fixed = true;
  for (std::size_t k = 0; k < n; ++k) fixed = fixed && max_dims[k] != H5S_UNLIMITED;
  if (when != H5D_ALLOC_TIME_EARLY || !unfiltered_ || !fixed) {
    checked_ = true;  // chunks are looked up one by one
    return;
  }
  chunks_along_.resize(n);
  for (std::size_t k = 0; k < n; ++k) chunks_along_[k] = (max_dims[k] + chunk_[k] - 1) / chunk_[k];
}

std::optional<std::uint64_t> ImageLocator::looked_up(std::span<const hsize_t> at) const {
  unsigned filters = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t stored = 0;
  if (H5Dget_chunk_info_by_coord(dataset_, at.data(), &filters, &address, &stored) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  if (address == HADDR_UNDEF || filters != 0 || stored != chunk_bytes_) return std::nullopt;
  return address;
}

std::optional<std::uint64_t> ImageLocator::chunk_address(std::span<const hsize_t> leading,
                                                         hsize_t row) {
  if (!usable_ || leading.size() + 2 != chunk_.size()) return std::nullopt;
  std::vector<hsize_t> at(leading.begin(), leading.end());
  at.push_back(row);
  at.push_back(0);
  if (!checked_) {
    // Settled once, at the first image asked for: the block's start is chunk 0's place, and
    // chunk `at` must lie where the arithmetic puts it (else every chunk is looked up).
    checked_ = true;
    const std::vector<hsize_t> origin(chunk_.size(), 0);
    const auto first = looked_up(origin);
    if (first) {
      // The last chunk within the current extent.
      const Id space(H5Dget_space(dataset_), H5Sclose, "get a dataspace");
      std::vector<hsize_t> dims(chunk_.size()), last(chunk_.size());
      H5Sget_simple_extent_dims(space, dims.data(), nullptr);
      for (std::size_t k = 0; k < dims.size(); ++k) {
        last[k] = dims[k] == 0 ? 0 : (dims[k] - 1) / chunk_[k] * chunk_[k];
      }
      last.back() = 0;
      base_ = *first;
      arithmetic_ = true;
      const auto there = looked_up(last);
      arithmetic_ =
          there && *there == *chunk_address(std::span<const hsize_t>(last.data(), last.size() - 2),
                                            last[last.size() - 2]);
    }
  }
  if (!arithmetic_) return looked_up(at);
  // The chunk's number in row-major order over the grid of chunks of the largest extent.
  hsize_t number = 0;
  for (std::size_t k = 0; k < at.size(); ++k)
    number = number * chunks_along_[k] + at[k] / chunk_[k];
  return base_ + number * chunk_bytes_;
}

std::optional<std::uint64_t> ImageLocator::image_offset(std::span<const hsize_t> leading) {
  std::optional<std::uint64_t> first;
  const hsize_t step = chunk_rows();
  if (step == 0) return std::nullopt;
  // A volume's planes follow one another, each one chunk (or consecutive chunks) of rows.
  const bool volume = image_axes_ == 3;
  if (chunk_.size() != leading.size() + static_cast<std::size_t>(image_axes_)) return std::nullopt;
  std::vector<hsize_t> at(leading.begin(), leading.end());
  if (volume) at.push_back(0);
  for (hsize_t plane = 0; plane < (volume ? planes_ : 1); ++plane) {
    if (volume) at.back() = plane;
    for (hsize_t row = 0; row < rows_; row += step) {
      const auto address = chunk_address(at, row);
      if (!address) return std::nullopt;
      if (!first) first = address;
      if (*address != *first + (plane * rows_ + row) * row_bytes_) return std::nullopt;
    }
  }
  return first;
}

bool ImageLocator::write_image(std::span<const hsize_t> leading, const void* data,
                               const std::string& what) {
  const hsize_t step = chunk_rows();
  if (!usable_ || !unfiltered_ || step == 0 || rows_ % step != 0 ||
      std::endian::native != std::endian::little ||
      chunk_.size() != leading.size() + static_cast<std::size_t>(image_axes_)) {
    return false;
  }
  const bool volume = image_axes_ == 3;
  std::vector<hsize_t> at(leading.begin(), leading.end());
  if (volume) at.push_back(0);
  at.push_back(0), at.push_back(0);
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (hsize_t plane = 0; plane < (volume ? planes_ : 1); ++plane) {
    if (volume) at[at.size() - 3] = plane;
    for (hsize_t row = 0; row < rows_; row += step) {
      at[at.size() - 2] = row;
      check(H5Dwrite_chunk(dataset_, H5P_DEFAULT, 0, at.data(),
                           static_cast<std::size_t>(chunk_bytes_),
                           bytes + (plane * rows_ + row) * row_bytes_),
            what);
    }
  }
  return true;
}

}  // namespace grayscott::io::h5
