// The run's HDF5 file: the on-disk contract (see docs/file-format.md). Writing never depends on a
// backend; the engine's images arrive as plain host arrays.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/xdmf.hpp"  // xdmf_path_for, for the run's companion
#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::io {

struct RunMetadata {
  Problem problem;
  std::int64_t images = 0;
  std::int64_t steps_per_image = 0;
  FieldSet fields;
  std::string backend;
  std::string version;
  InitialState initial;
};

std::string format_bytes(std::uint64_t bytes);  // "1.5 GiB"

// The root attributes a run file and a sweep file share: grid, diffusion, time step, images,
// stencil, boundary, precision (feed and kill are per member in a sweep).
void write_problem_attributes(hid_t root, const Problem& problem, std::int64_t images,
                              std::int64_t steps_per_image);

// Bytes of image data a run writes (both fields when asked), for the free-space check.
std::uint64_t run_output_bytes(const RunMetadata& meta);

// Checks, before any computing, that `path` may be written: it does not exist (unless
// `overwrite`), its folder exists and is writable, and the disk has room for `bytes`.
// Throws InvalidInput with a one-line reason.
void check_output_path(const std::filesystem::path& path, bool overwrite, std::uint64_t bytes);

// How one process takes part in writing a run file. The default is a single process writing whole
// images. With MPI, every rank opens the same file through MPI-IO (`file_access`), writes its own
// block of each image collectively (`transfer`), and one rank writes the XDMF companion: the file's
// layout and attributes come from the same code either way.
struct RunFileAccess {
  hid_t file_access = H5P_DEFAULT;  // file access property list (e.g. H5Pset_fapl_mpio)
  hid_t transfer = H5P_DEFAULT;     // data transfer property list (e.g. collective MPI-IO)
  // This process's block of every image, in cells; empty (rows = 0): the whole image.
  std::int64_t row_begin = 0, rows = 0, col_begin = 0, cols = 0;
  bool writes_companions = true;  // the XDMF file and the /step values
};

// Writes one run, image by image: the datasets grow as images arrive, so a run stopped early
// leaves a valid file holding every image written so far.
class RunFileWriter {
 public:
  RunFileWriter(const std::filesystem::path& path, const RunMetadata& meta,
                const RunFileAccess& access = {});
  ~RunFileWriter();
  RunFileWriter(const RunFileWriter&) = delete;
  RunFileWriter& operator=(const RunFileWriter&) = delete;

  // Appends the next image; u/v point to this process's block (rows*cols values of the run's
  // precision, the whole image by default; a field that is not written may be null). Collective
  // when the access is.
  void append(std::int64_t step, const void* u, const void* v);
  std::int64_t images_written() const { return written_; }
  // Records how the run ended ("complete", or why it stopped), writes the XDMF file beside it and
  // closes the file. Called by the destructor if not before.
  void finish(const std::string& status);

 private:
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::filesystem::path path_;
  RunMetadata meta_;
  RunFileAccess access_;
  std::int64_t written_ = 0;
};

// The XDMF companion (NAME.xmf) that lets ParaView and VisIt open the run as a time series.
void write_xdmf(const std::filesystem::path& h5_path, const RunMetadata& meta,
                std::int64_t images_written);

// Reads a run file (or a sweep file's member) for rendering and for tests.
class RunFileReader {
 public:
  explicit RunFileReader(const std::filesystem::path& path);
  ~RunFileReader();
  RunFileReader(const RunFileReader&) = delete;
  RunFileReader& operator=(const RunFileReader&) = delete;

  bool has_field(const std::string& field) const;
  // Shape of a field dataset: [images, rows, cols], or [members, images, rows, cols] for sweeps.
  std::vector<std::int64_t> shape(const std::string& field) const;
  // One image as float64, whatever the stored precision. `member` is ignored for 3-D datasets.
  std::vector<double> read_image(const std::string& field, std::int64_t image,
                                 std::int64_t member = 0) const;
  std::vector<std::int64_t> read_int64(const std::string& dataset) const;
  std::vector<double> read_doubles(const std::string& dataset) const;
  double attribute_double(const std::string& name) const;
  std::int64_t attribute_int64(const std::string& name) const;
  std::string attribute_string(const std::string& name) const;
  std::vector<double> attribute_doubles(const std::string& name) const;
  bool has_attribute(const std::string& name) const;

 private:
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::filesystem::path path_;
};

}  // namespace grayscott::io
