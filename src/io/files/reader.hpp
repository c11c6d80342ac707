// Reading a run file or a sweep file, whether finished, still being written (SWMR) or left by a
// writer that was killed.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace grayscott::io {

// Opens a file for reading: as a finished file, or, when a writer has it open in SWMR mode (or
// was killed while it had), as an SWMR reader, which sees every image flushed so far. For code
// that reads datasets through HDF5 itself; the caller closes it.
hid_t open_for_reading(const std::filesystem::path& path);
// After open_for_reading failed: whether the file is marked open for writing by a writer that did
// not ask for SWMR (one at work, or one stopped before it closed the file, such as a repair or a
// resume cut short), which no reader opens, not even an SWMR one.
bool marked_open_without_swmr();

// Which file a path names: its device and inode ({} where it cannot be told). A file read, then
// opened again by its name, is the same file only where the two agree.
struct FileIdentity {
  std::uint64_t device = 0, inode = 0;
  bool operator==(const FileIdentity&) const = default;
};
FileIdentity identity_of(const std::filesystem::path& path);

// Before an HDF5 file is opened to be read: check_readable_file, then InvalidInput where it cannot
// be read ("Permission denied"), or is no HDF5 file ("run.avi is not an HDF5 file"; an .xmf given
// for its run file names the file that holds the images).
void check_hdf5_file(const std::filesystem::path& path);

// Reads a run file (or a sweep file's member) for rendering and for tests.
// Opens files that are still being written (SWMR) and files whose writer was killed as well.
class RunFileReader {
 public:
  explicit RunFileReader(const std::filesystem::path& path);
  ~RunFileReader();
  // The file it opened (not whatever its path names now).
  FileIdentity identity() const { return identity_; }
  const std::filesystem::path& path() const { return path_; }
  RunFileReader(const RunFileReader&) = delete;
  RunFileReader& operator=(const RunFileReader&) = delete;

  bool has_field(const std::string& field) const;
  // The fields whose images the file holds (/u, /v); neither is refused, naming the file.
  FieldSet image_fields() const;
  // Shape of a field dataset: [images, rows, cols], or [members, images, rows, cols] for sweeps;
  // a volume's run: [images, depth, rows, cols], a sweep's [members, images, depth, rows, cols].
  std::vector<std::int64_t> shape(const std::string& field) const;
  // The grid's planes: the attribute depth of a volume's file, 1 for a plane's (which has none).
  std::int64_t depth() const;
  // Whether the file is a sweep's (the attribute kind = "sweep").
  bool sweep() const;
  // One image as float64, whatever the stored precision: rows*cols values, a volume's
  // depth*rows*cols (plane after plane). `member` is ignored for a run file's datasets.
  std::vector<double> read_image(const std::string& field, std::int64_t image,
                                 std::int64_t member = 0) const;
  // One plane through image `image` of a run file's volume (or of member `member` of a sweep's),
  // as float64: across the axis `axis` (0: z, a plane of rows x cols; 1: y, of depth x cols; 2:
  // x, of depth x rows) at `index`.
  std::vector<double> read_slice(const std::string& field, std::int64_t image, int axis,
                                 std::int64_t index, std::int64_t member = 0) const;
  std::vector<std::int64_t> read_int64(const std::string& dataset) const;
  std::vector<double> read_doubles(const std::string& dataset) const;
  double attribute_double(const std::string& name) const;
  std::int64_t attribute_int64(const std::string& name) const;
  std::string attribute_string(const std::string& name) const;
  // A string attribute of one of the file's datasets.
  std::string dataset_attribute_string(const std::string& dataset, const std::string& name) const;
  std::vector<double> attribute_doubles(const std::string& name) const;
  bool has_attribute(const std::string& name) const;
  // Whether a dataset's chunks are placed in the file when it grows (true for one not chunked).
  bool places_chunks_as_it_grows(const std::string& dataset) const;
  // How many of a chunked dataset's chunks are not yet placed in the file (0 if not chunked).
  std::int64_t unplaced_chunks(const std::string& dataset) const;

 private:
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::filesystem::path path_;
  FileIdentity identity_;
};

}  // namespace grayscott::io
