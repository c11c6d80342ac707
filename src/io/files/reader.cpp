#include "io/files/reader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "io/files/hdf5.hpp"
#include "io/files/output_path.hpp"
#include "model/model.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

hid_t open_for_reading(const fs::path& path) {
  check_readable_file(path);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file >= 0) return file;
  H5Eclear2(H5E_DEFAULT);
  // A metadata block whose checksum fails is read again, the wait doubling from a nanosecond
  // each time: HDF5's 100 attempts would wait for ever on a damaged file (a killed writer's file
  // cut short by a copy), where a writer's flush in progress needs a few milliseconds. 30
  // attempts wait about two seconds in all.
  // Made once and kept: closing it after a failed open would clear the error stack, whose
  // reason the caller reads ("truncated file").
  static const hid_t access = [] {
    const hid_t made = H5Pcreate(H5P_FILE_ACCESS);
    if (made >= 0) H5Pset_metadata_read_attempts(made, 30);
    return made;
  }();
  return H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ,
                 access >= 0 ? access : H5P_DEFAULT);
}

namespace {
FileIdentity identity_of_status(const struct stat& status) {
  return {static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino)};
}
}  // namespace

FileIdentity identity_of(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return {};
  return identity_of_status(status);
}

bool marked_open_without_swmr() {
  // HDF5's word for it, when a reader that asks for SWMR finds a writer's mark without it.
  return h5::system_reason().find("not already open for SWMR writing") != std::string::npos;
}

struct RunFileReader::Handles {
  h5::Id file;
};

void check_hdf5_file(const fs::path& path) {
  h5::silence_library_errors();
  std::error_code ec;
  check_readable_file(path);
  // A file that cannot be read is not "not HDF5": say why it cannot be.
  if (std::FILE* readable = std::fopen(path.c_str(), "rb")) {
    std::fclose(readable);
  } else {
    const int error = errno;
    const std::string why = path.string() + ": " + std::generic_category().message(error);
    if (error == EACCES || error == EPERM) throw PathDenied(why);  // PermissionError in Python
    throw InvalidInput(why);
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    // The companion given for its run file: name the file that holds the images.
    if (names_an_xdmf_file(path)) {
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
}

RunFileReader::RunFileReader(const fs::path& path) : h_(std::make_unique<Handles>()), path_(path) {
  check_hdf5_file(path);
  std::error_code ec;
  const hid_t file = open_for_reading(path);
  if (file < 0) {
    if (marked_open_without_swmr()) {
      throw InvalidInput(path.string() + " is marked open for writing without SWMR, which no " +
                         "reader accepts: a writer has it open, or one stopped before it closed " +
                         "it (a repair or resume cut short); if none runs, grayscott repair " +
                         path.string() + " clears the mark");
    }
    // A file cut short (a copy or a transfer that did not finish): said as such, not in HDF5's
    // words ("truncated file: eof = 5000, sblock->base_addr = 0, stored_eof = 109056").
    const std::string reason = h5::system_reason();
    if (reason.find("truncated file") != std::string::npos) {
      const auto recorded = reason.find("stored_eof = ");
      const std::string expected =
          recorded == std::string::npos ? std::string() : reason.substr(recorded + 13);
      throw InvalidInput(
          path.string() + " is cut short: " + std::to_string(fs::file_size(path, ec)) + " bytes" +
          (expected.empty() ? "" : " of the " + expected + " it records") +
          " (a copy or a transfer that did not finish?); nothing can be read from it");
    }
  }
  h_->file = h5::Id(file, H5Fclose, "open " + path.string());
  void* handle = nullptr;  // the POSIX driver's: its descriptor
  struct stat status {};
  if (H5Fget_vfd_handle(h_->file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr &&
      ::fstat(*static_cast<int*>(handle), &status) == 0) {
    identity_ = identity_of_status(status);
  }
  H5Eclear2(H5E_DEFAULT);
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

FieldSet RunFileReader::image_fields() const {
  const FieldSet fields{has_field("u"), has_field("v")};
  if (!fields.u && !fields.v) {
    throw InvalidInput(path_.string() +
                       " holds no images: it has neither /u nor /v (changed since it was written)");
  }
  return fields;
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

std::int64_t RunFileReader::depth() const {
  return has_attribute("depth") ? std::max<std::int64_t>(1, attribute_int64("depth")) : 1;
}

bool RunFileReader::sweep() const {
  return has_attribute("kind") && attribute_string("kind") == "sweep";
}

std::vector<double> RunFileReader::read_image(const std::string& field, std::int64_t image,
                                              std::int64_t member) const {
  const auto dims = shape(field);
  // The image's own axes: (rows, cols), or a volume's (depth, rows, cols); before them the
  // images, and a sweep's members before those.
  const std::size_t image_axes = depth() > 1 ? 3 : 2;
  if (dims.size() != image_axes + 1 && dims.size() != image_axes + 2) {
    throw InvalidInput("/" + field + " is not a stack of images");
  }
  const bool sweep = dims.size() == image_axes + 2;
  const std::int64_t images = dims[sweep ? 1 : 0];
  if (image < 0 || image >= images) {
    throw InvalidInput("image " + std::to_string(image) + " is out of range (the file holds " +
                       std::to_string(images) + ")");
  }
  if (sweep && (member < 0 || member >= dims[0])) {
    throw InvalidInput("member " + std::to_string(member) + " is out of range");
  }
  h5::Id dataset(H5Dopen2(h_->file, field.c_str(), H5P_DEFAULT), H5Dclose, "open /" + field);
  h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
  if (sweep) start[0] = static_cast<hsize_t>(member), count[0] = 1;
  start[sweep ? 1 : 0] = static_cast<hsize_t>(image), count[sweep ? 1 : 0] = 1;
  h5::check(
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
      "select an image");
  const std::vector<hsize_t> mem_dims(count.end() - static_cast<std::ptrdiff_t>(image_axes),
                                      count.end());
  h5::Id mem_space = h5::simple_space(mem_dims);
  hsize_t values = 1;
  for (hsize_t n : mem_dims) values *= n;
  std::vector<double> out(values);
  h5::check(H5Dread(dataset, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, out.data()),
            "read image " + std::to_string(image) + " of /" + field);
  return out;
}

std::vector<double> RunFileReader::read_slice(const std::string& field, std::int64_t image,
                                              int axis, std::int64_t index,
                                              std::int64_t member) const {
  const auto dims = shape(field);
  if ((dims.size() != 4 && dims.size() != 5) || depth() <= 1) {
    throw InvalidInput("/" + field + " is not a stack of volumes [images, depth, rows, cols]");
  }
  // A sweep's volumes: [members, images, depth, rows, cols].
  const bool sweep = dims.size() == 5;
  const std::size_t first = sweep ? 1 : 0;  // the images' axis
  if (image < 0 || image >= dims[first]) {
    throw InvalidInput("image " + std::to_string(image) + " is out of range (the file holds " +
                       std::to_string(dims[first]) + ")");
  }
  if (sweep && (member < 0 || member >= dims[0])) {
    throw InvalidInput("member " + std::to_string(member) + " is out of range");
  }
  if (axis < 0 || axis > 2) throw std::logic_error("read_slice: axis must be 0, 1 or 2");
  const auto along = static_cast<std::size_t>(axis) + first + 1;
  if (index < 0 || index >= dims[along]) {
    throw InvalidInput(std::string(1, "zyx"[axis]) + "=" + std::to_string(index) +
                       " is out of range: the grid has " + std::to_string(dims[along]) + " along " +
                       std::string(1, "zyx"[axis]) + " (0 to " + std::to_string(dims[along] - 1) +
                       ")");
  }
  h5::Id dataset(H5Dopen2(h_->file, field.c_str(), H5P_DEFAULT), H5Dclose, "open /" + field);
  h5::Id file_space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
  if (sweep) start[0] = static_cast<hsize_t>(member), count[0] = 1;
  start[first] = static_cast<hsize_t>(image), count[first] = 1;
  start[along] = static_cast<hsize_t>(index), count[along] = 1;
  h5::check(
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
      "select a slice");
  std::vector<hsize_t> mem_dims;
  for (std::size_t k = first + 1; k < dims.size(); ++k) {
    if (k != along) mem_dims.push_back(count[k]);
  }
  h5::Id mem_space = h5::simple_space(mem_dims);
  std::vector<double> out(mem_dims[0] * mem_dims[1]);
  h5::check(H5Dread(dataset, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, out.data()),
            "read a slice of image " + std::to_string(image) + " of /" + field);
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
  const htri_t exists = H5Aexists(h_->file, name.c_str());
  // Damaged metadata is not an absent attribute: say what HDF5 found.
  if (exists < 0) h5::fail("read the attributes of " + path_.string());
  return exists > 0;
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

namespace {
std::string read_string_attribute(hid_t object, const std::string& name) {
  h5::Id attr = open_attribute(object, name);
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
}  // namespace

std::string RunFileReader::attribute_string(const std::string& name) const {
  return read_string_attribute(h_->file, name);
}

std::string RunFileReader::dataset_attribute_string(const std::string& dataset,
                                                    const std::string& name) const {
  h5::Id set(H5Dopen2(h_->file, dataset.c_str(), H5P_DEFAULT), H5Dclose, "open /" + dataset);
  return read_string_attribute(set, name);
}

}  // namespace grayscott::io
