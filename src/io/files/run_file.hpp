// The run's HDF5 file: the on-disk contract (see docs/file-format.md). Writing never depends on a
// backend; the engine's images arrive as plain host arrays.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/statistics.hpp"
#include "io/files/checkpoint_slots.hpp"
#include "io/files/problem_attributes.hpp"
#include "io/files/reader.hpp"  // FileIdentity
#include "io/files/xdmf.hpp"  // ImagePlaces, XdmfCompanion, XdmfGridInfo: the run's companion
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
  // What the run measures of every image (/stats) and when it stops.
  AnalysisAttributes analysis;
};

// Bytes a run writes: its images (both fields when asked), the two checkpoint slots, /step and
// the XDMF companion, for the free-space check.
std::uint64_t run_output_bytes(const RunMetadata& meta);

// How one process takes part in writing a run file. The default is a single process writing whole
// images, in HDF5's single-writer/multiple-reader (SWMR) mode, so that h5py (swmr=True), ParaView
// and `grayscott render` read the file while it grows and a crash leaves every flushed image
// readable. With MPI, every rank opens the same file through MPI-IO (`file_access`), writes its own
// block of each image collectively (`transfer`), and one rank writes the XDMF companion: the file's
// layout and attributes come from the same code either way (parallel HDF5 has no SWMR: flushes
// are collective instead).
struct RunFileAccess {
  hid_t file_access = H5P_DEFAULT;  // file access property list (e.g. H5Pset_fapl_mpio)
  hid_t transfer = H5P_DEFAULT;     // data transfer property list (e.g. collective MPI-IO)
  // This process's block of every image, in cells; empty (rows = 0): the whole image. A volume's
  // block also has planes [plane_begin, plane_begin + planes); planes = 0: every plane.
  std::int64_t row_begin = 0, rows = 0, col_begin = 0, cols = 0;
  std::int64_t plane_begin = 0, planes = 0;
  bool writes_companions = true;  // the XDMF file, the /step values, the move into place
  std::string partial_tag;        // temporary name's tag, the same on every rank; "": the pid
  bool shared() const { return file_access != H5P_DEFAULT; }
};

// Where a run stood when it last saved its state: enough to continue it bitwise.
struct RunCheckpoint {
  std::int64_t images_done = 0;  // 0: no checkpoint; continue from the initial state
  std::vector<double> u, v;      // unused when images_done = 0; see read_checkpoint
};

// Writes one run, image by image: the datasets grow as images arrive, so a run stopped early
// leaves a valid file holding every image written so far. The state to continue from is kept in
// /checkpoint (two slots, the newer one valid) for the fields the images do not hold (u, by
// default: v is the last image); a complete run's two slots both hold its final state.
class RunFileWriter {
 public:
  // Creates the file (under a temporary name, moved into place once it holds its layout).
  RunFileWriter(const std::filesystem::path& path, const RunMetadata& meta, bool overwrite,
                const RunFileAccess& access = {});
  // Reopens a run file to continue it after `images_done` images: the next append writes image
  // `images_done`, over any image already there (the same values, recomputed).
  struct Continue {
    std::int64_t images_done = 0;
    FileIdentity read;  // the file whose state was read (RunFileState::identity)
  };
  RunFileWriter(const std::filesystem::path& path, const RunMetadata& meta, Continue from,
                const RunFileAccess& access = {});
  ~RunFileWriter();
  RunFileWriter(const RunFileWriter&) = delete;
  RunFileWriter& operator=(const RunFileWriter&) = delete;

  // Appends the next image; u/v point to this process's block (rows*cols values of the run's
  // precision, the whole image by default; a field that is not written may be null). Collective
  // when the access is.
  void append(std::int64_t step, const void* u, const void* v,
              const analysis::ImageStatistics* statistics = nullptr);
  std::int64_t images_written() const { return written_; }
  // Saves the state after `images_done` images (this process's block of u and v; a field the run
  // writes is already its image `images_done - 1`, which must be appended first) into the older
  // checkpoint slot, flushes it to the disk, then marks the slot valid: a crash at any moment
  // leaves one valid checkpoint. Collective when the access is.
  // `final_state`: the run ends there (it settled); its last image is always final. A final
  // state goes into both slots, so that the finished file does not depend on when the run
  // saved before.
  void save_checkpoint(std::int64_t images_done, const void* u, const void* v,
                       bool final_state = false);
  // Stores a custom initial state (InitialKind::Custom; this process's block of u and v, as
  // append takes them) in /initial_state, durable before any image. Collective when the access
  // is.
  void write_initial_state(const void* u, const void* v);
  // Makes every image appended so far survive a crash of this process (and refreshes the XDMF
  // companion now and then). Collective when the access is.
  void flush();
  // Records how the run ended ("complete", or why it stopped), writes the XDMF file beside it and
  // closes the file. Called by the destructor if not before.
  void finish(const std::string& status);
  // Whether finish() recorded the status: false only where a write error left the disk without
  // the room even for that (the file then says "running" and needs `grayscott repair`).
  bool status_recorded() const { return status_recorded_; }

 private:
  void open_datasets();
  void append_image(std::int64_t step, const void* u, const void* v);
  // One whole image (of the run's precision) into [index] of a 3-D dataset: straight to the disk
  // where it can go so (a single process, aligned; see DirectWrites), else through HDF5.
  void write_image(hid_t dataset, hsize_t index, const void* data, const std::string& what);
  // The images appended since the last count: their /time and /stats (once), then /step.
  void describe_uncounted_images();
  void count_images();
  void write_uncounted_values(hid_t dataset, hid_t value_type, const void* values,
                              const char* name);
  void write_statistics(hsize_t first);  // /stats of the images appended since, from `first`
  void make_images_durable();  // flushes the images with their /time and /stats, then /step
  void after_write_error();
  // A continued file whose run ended with its last image: its final state into both slots.
  void complete_final_checkpoint();
  // A single process's file after a failed write: cuts every dataset along time to `images`
  // (counted by /step) and flushes; false where the flush failed.
  bool keep_images(std::int64_t images);
  // How this file writes a checkpoint of the state u, v (see CheckpointSlots).
  SlotWrites slot_writes(const void* u, const void* v);
  void write_companion();
  // Gives every byte of the file but the datasets' reserved room its blocks on the disk, so that
  // rewriting metadata in place (the status, the datasets' sizes) never needs room a full disk
  // does not have. `where`: the file's name now. Over MPI every process calls it (it reads
  // metadata), one gives the blocks.
  void give_metadata_its_blocks(const std::filesystem::path& where);
  // Where image `index` of each written field lies in the file, for the companion.
  ImagePlaces image_places(hsize_t index) const;
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::filesystem::path path_;
  RunMetadata meta_;
  RunFileAccess access_;
  std::int64_t written_ = 0;
  std::int64_t durable_ = 0;                   // images written at the last flush that succeeded
  std::vector<std::int64_t> uncounted_steps_;  // of images appended but not yet in /step
  std::vector<analysis::ImageStatistics> uncounted_statistics_;  // of the same images
  bool swmr_ = false;
  bool uncounted_described_ = false;  // describe_uncounted_images() wrote them since
  bool write_failed_ = false;        // a write or flush failed: the status is written with care
  bool status_recorded_ = true;      // finish() wrote the status it was given
  std::vector<ImagePlaces> places_;  // of the images counted in /step, for the companion
  std::unique_ptr<XdmfCompanion> companion_;
};

// What a run file says about the run that wrote it, for `--resume`: its metadata, status and the
// images it holds. Throws InvalidInput when the file is not a run file.
struct RunFileState {
  RunMetadata meta;
  std::string status;
  std::int64_t images_in_file = 0;
  std::int64_t checkpoint_images = 0;  // images done at the newest valid checkpoint; 0: none
  // Parallel HDF5 can continue it: every chunk of its growing datasets is placed when the dataset
  // grows. Not so in a file one process wrote with an earlier grayscott: one process continues it.
  bool extendable_in_parallel = true;
  // Every chunk within the datasets' extents is placed. Not always so after kill -9 under MPI:
  // HDF5's metadata on disk can then hold an extent whose newest chunks it does not list yet.
  bool every_chunk_placed = true;
  SteadyHistory steady;  // read where the file was made with --until-steady
  // A custom initial state's values are whole in /initial_state (InitialKind::Custom).
  bool initial_state_stored = false;
  FileIdentity identity;  // the file read
};
RunFileState read_run_state(const std::filesystem::path& path);
// Readies a run file for MPI ranks to continue it (h5::place_unwritten_chunks on its datasets).
void place_unwritten_run_chunks(const std::filesystem::path& path);
// This process's block of the newest checkpoint, in the run's precision (Real = float or double),
// rows*cols values each (a volume's: every plane of the block, depth*rows*cols, or its planes
// [plane_begin, plane_begin + planes) where planes > 0); block rows = 0: the whole grid.
template <class Real>
void read_checkpoint(const std::filesystem::path& path, std::int64_t row_begin, std::int64_t rows,
                     std::int64_t col_begin, std::int64_t cols, std::vector<Real>& u,
                     std::vector<Real>& v, std::int64_t plane_begin = 0, std::int64_t planes = 0);

// This process's block of a custom initial state (/initial_state), as read_checkpoint reads a
// checkpoint's.
template <class Real>
void read_initial_state(const std::filesystem::path& path, std::int64_t row_begin,
                        std::int64_t rows, std::int64_t col_begin, std::int64_t cols,
                        std::vector<Real>& u, std::vector<Real>& v, std::int64_t plane_begin = 0,
                        std::int64_t planes = 0);

// Writes the XDMF companion (NAME.xmf) that lets ParaView and VisIt open the run as a time
// series, listing the first `images` images (those /step counts), from where the file holds them.
// False where the companion there already listed exactly these (left unwritten).
bool write_xdmf(const std::filesystem::path& h5_path, const RunMetadata& meta, std::int64_t images);
// What every image of a run shares in its companion.
XdmfGridInfo xdmf_grid_of(const RunMetadata& meta);

}  // namespace grayscott::io
