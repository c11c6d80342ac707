// Thin RAII and error handling over the HDF5 C API, shared by every file this program writes.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace grayscott {
struct Grid;
enum class Precision;
}  // namespace grayscott

namespace grayscott::io::h5 {

// "1.10.8, parallel (MPI-IO)" or "1.10.8, serial": the library this program runs with.
std::string library_description();

// HDF5 prints its own error stack by default; we report one line instead.
void silence_library_errors();

// The reason for the library's last failure, read from HDF5's error stack: the operating
// system's where it was the system's ("No space left on device"), else what HDF5 found wrong
// first ("truncated file: eof = ..."); "" when the stack holds nothing.
std::string system_reason();

// Throws std::runtime_error("HDF5: cannot WHAT"), ending with system_reason() where there is one.
[[noreturn]] void fail(const std::string& what);

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer close, const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) fail(what);
  }
  // Gives up ownership (for an identifier closed by hand).
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  Id(Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  Id& operator=(Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      close_ = o.close_;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

inline void check(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
}

Id simple_space(std::span<const hsize_t> dims, std::span<const hsize_t> max_dims = {});

// Reads the block of `dataset` at `start` of extent `count` (all of the dataset's axes) into
// `out`, as `mem_type`; `what` names it in the error ("the checkpoint of run.h5").
void read_block(hid_t dataset, std::span<const hsize_t> start, std::span<const hsize_t> count,
                hid_t mem_type, void* out, const std::string& what);
// Writes `data`, as `mem_type`, into the block of `dataset` at `start` of extent `count` (all of
// the dataset's axes), through `transfer` (collective MPI-IO where processes share the file);
// `what` names the write in its error ("write image 3 of v to run.h5").
void write_block(hid_t dataset, std::span<const hsize_t> start, std::span<const hsize_t> count,
                 hid_t mem_type, const void* data, const std::string& what,
                 hid_t transfer = H5P_DEFAULT);
// The same block of a checkpoint's /checkpoint/u and /checkpoint/v of `file` into `u` and `v`,
// each where its dataset is open (a negative id: the file's images hold that field instead).
void read_checkpoint_block(hid_t u_dataset, hid_t v_dataset, std::span<const hsize_t> start,
                           std::span<const hsize_t> count, hid_t mem_type, void* u, void* v,
                           const std::string& file);

// The file access properties to write a file with: a copy of `shared` (the processes' MPI-IO
// access), or for one process alone (`shared` = H5P_DEFAULT) the newest file format, which SWMR
// needs, and objects of `aligned_from` bytes and more (an image's chunks) starting on a
// boundary of `alignment` bytes, as direct writes to the disk need (io/direct_writes.hpp).
inline constexpr hsize_t aligned_from = 64 * 1024, alignment = 4096;
Id writer_access(hid_t shared);
// A writer that was killed leaves the file marked as open for writing, and HDF5 then refuses to
// open it again; h5clear's way of clearing the mark is this property of the file access list.
void clear_writer_marks_on_open(hid_t fapl);
// Readies a file one process wrote, or one a killed job left, for processes that share it over
// MPI: parallel HDF5 writes only into chunks already placed in the file, so this process writes
// the fill value into every chunk of `datasets` (those that exist and are chunked) not placed
// yet, within their current extent. The file reads as before. Costs one write of those chunks.
void place_unwritten_chunks(const std::string& path, std::span<const char* const> datasets);

// HDF5 1.10's MPI-IO driver gives the file a view for each collective write and sets the default
// view back after it, but not when the write fails: every later write of that process then lands
// at the failed write's offset plus its own (the file's metadata written into an image's room,
// where no reader finds it). Once a write failed on any process of a file shared over MPI, every
// process sets the default view back. Collective: every process of the file calls it, saying
// whether a write failed on it; nothing is done for a file of one process. Returns whether a
// write failed on any process (`failed_here` for a file of one process), the same on all.
bool mend_file_view_after_failure(hid_t file, bool failed_here);

// For a file that processes write together through MPI-IO: after each collective write, whether
// any process's part failed, agreed on by all of them (a failure need not reach every process:
// one that went on to the next collective write would wait there for ever for one that
// stopped). Alone (any other driver) it answers for this process only. Made from the file, or
// from the file access properties it is (or will be) opened with.
class WriteAgreement {
 public:
  explicit WriteAgreement(hid_t file_or_access);
  ~WriteAgreement();
  WriteAgreement(const WriteAgreement&) = delete;
  WriteAgreement& operator=(const WriteAgreement&) = delete;
  // Collective: whether `failed_here` holds on any process.
  bool any(bool failed_here);

 private:
  struct Comm;
  std::unique_ptr<Comm> comm_;
};

void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
void write_attribute(hid_t obj, const std::string& name, double value);
void write_attribute(hid_t obj, const std::string& name, std::span<const double> values);
void write_attribute(hid_t obj, const std::string& name, std::span<const std::int64_t> values);
void write_attribute(hid_t obj, const std::string& name, const std::string& value);
// Writes a new value into an existing variable-length string attribute, in place: allowed while
// the file is written in SWMR mode, where attributes cannot be created or deleted.
void rewrite_string_attribute(hid_t obj, const std::string& name, const std::string& value);

// HDF5 dimension scales, which xarray (h5netcdf) and netCDF-4 readers take as the names and
// coordinates of a dataset's axes. Attaching writes attributes: done at creation, before SWMR
// writing starts; under MPI every process makes the same calls (they are collective).
// Makes `dataset` (one-dimensional) the dimension scale `name`.
void make_scale(hid_t dataset, const std::string& name);
// Attaches scales[k] to dimension k of `dataset`, for each k.
void attach_scales(hid_t dataset, std::span<const hid_t> scales);
// Creates the one-dimensional int64 dataset `name` holding 0, 1, ..., count - 1 and makes it a
// dimension scale. The values are written by the process with `write_values`; with a collective
// `transfer` every other process takes part in the write with an empty selection.
Id create_index_scale(hid_t where, const std::string& name, std::int64_t count, bool write_values,
                      hid_t transfer = H5P_DEFAULT);
// The grid's axes of a run or sweep file: /y (rows, 0 at the top of the pictures) and /x
// (columns), and for a volume (depth > 1) /z (its planes) before them, index scales with their
// long names; written as create_index_scale writes. A plane has no /z.
struct GridScales {
  Id z, y, x;
};
GridScales create_grid_scales(hid_t where, std::int64_t rows, std::int64_t cols, bool write_values,
                              hid_t transfer = H5P_DEFAULT, std::int64_t depth = 1);
// The shape of a dataset of images: the `leading` axes (images; members and images; checkpoint
// slots) and then one image's, (rows, cols) of a plane or (depth, rows, cols) of a volume.
std::vector<hsize_t> with_image_axes(std::initializer_list<hsize_t> leading, const Grid& grid);
// Makes `dataset` (one model time per image, step x dt) the dimension scale "time".
void make_time_scale(hid_t dataset);
// A dataset of class numbers described as CF flags: flag_values 0..n-1 and flag_meanings, the
// names in order, separated by spaces (how netCDF tools label categories).
void write_class_attributes(hid_t dataset, std::span<const std::string_view> names);

// Finds where the images of a chunked dataset of images ([..., rows, cols], one image per chunk
// along the leading axes, whole rows per chunk; a volume's images [..., depth, rows, cols], one
// plane per chunk) lie in the file, and writes an image straight into its chunks. Where HDF5 places
// every chunk at creation in one block (early allocation, fixed largest size, no filter: its
// implicit index), a chunk's place is arithmetic: the block's start plus the chunk's number times
// its size, which costs nothing per image. Elsewhere each chunk is looked up
// (H5Dget_chunk_info_by_coord, whose cost in HDF5 1.10 grows with the chunks of the dataset). Every
// process makes the same calls where metadata reads are collective.
class ImageLocator {
 public:
  // `image_axes`: 2 for images of planes (rows, cols), 3 for volumes (depth, rows, cols).
  explicit ImageLocator(hid_t dataset, int image_axes = 2);
  // The offset of the first byte of the chunk of the plane at `leading` (its indices on the axes
  // before rows and columns, a volume's plane among them) that starts at row `row`; nullopt if
  // not placed.
  std::optional<std::uint64_t> chunk_address(std::span<const hsize_t> leading, hsize_t row);
  // The offset of the image's first byte when its chunks are placed, unfiltered and consecutive,
  // so that its values lie in one piece; nullopt otherwise. `leading`: the image's indices on the
  // axes before the image's own (a volume's planes are the image's).
  std::optional<std::uint64_t> image_offset(std::span<const hsize_t> leading);
  // Writes the whole image at `leading` from `data`, which holds its values as the file does
  // (little-endian, of the dataset's type), chunk by chunk straight into the file
  // (H5Dwrite_chunk). In a file written under SWMR, HDF5 1.10 holds every chunk H5Dwrite gives it
  // in memory until the next flush, whatever the dataset's chunk cache: the images since the
  // last flush wait in memory, and a full disk fails that flush and loses them all, not the
  // write of the image that found no room. Returns false, having written nothing, where the
  // image does not fill whole unfiltered chunks (a plane split into chunks of rows with a
  // shorter last one) or the CPU is big-endian: the caller then writes through H5Dwrite. One
  // process alone: not through MPI-IO.
  bool write_image(std::span<const hsize_t> leading, const void* data, const std::string& what);
  hsize_t chunk_rows() const { return chunk_.empty() ? 0 : chunk_[chunk_.size() - 2]; }
  hsize_t chunk_bytes() const { return chunk_bytes_; }
  bool usable() const { return usable_; }

 private:
  std::optional<std::uint64_t> looked_up(std::span<const hsize_t> at) const;
  hid_t dataset_;
  int image_axes_ = 2;
  bool usable_ = false;      // chunked by whole rows, one image per chunk on the leading axes
  bool unfiltered_ = false;  // its chunks hold the values as they are
  bool arithmetic_ = false;  // every chunk placed at creation, in one block
  bool checked_ = false;     // whether arithmetic_ was settled (needs one image in the extent)
  std::vector<hsize_t> chunk_, chunks_along_;  // chunk shape; chunks along each axis (largest)
  hsize_t chunk_bytes_ = 0, row_bytes_ = 0, rows_ = 0;
  hsize_t planes_ = 1;  // of an image: a volume's depth, 1 for a plane
  std::uint64_t base_ = 0;
};

// Native type of float or double.
template <class Real>
hid_t native_type() {
  return sizeof(Real) == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}
// The native type of a field's values in a run of `precision`.
hid_t native_type(Precision precision);

}  // namespace grayscott::io::h5
