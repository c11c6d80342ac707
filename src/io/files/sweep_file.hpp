// The sweep's HDF5 file: every member's images in one file (see docs/sweeps.md).
//   /v, /u          [members, images, rows, cols], one image per chunk (NaN where never computed);
//                   a volume's [members, images, depth, rows, cols], one plane per chunk
//   /feed, /kill    [members] float64, each member's rates
//   /seed           [members] int64, each member's noise seed (0 for the rectangle)
//   /step           [images] int64, steps done at each image
//   /nonfinite_image [members] int64, the first image holding a non-finite value, or -1
//   /images_written [members] int64, each member's images complete in the file (its first ones)
//   root attributes: the shared parameters (rows, cols, a volume's depth, du, dv, dt, stencil,
//   ...), init, members, kind = "sweep", status.
// and NAME.xmf beside it (write_sweep_xdmf).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/statistics.hpp"
#include "io/files/checkpoint_slots.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/problem_attributes.hpp"
#include "io/files/reader.hpp"  // FileIdentity
#include "io/files/xdmf.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::io {

struct SweepMetadata {
  Problem problem;  // the shared grid, stencil, boundary, precision, du, dv, dt
  std::vector<double> feed, kill;
  std::vector<std::uint64_t> seed;
  InitialState init;  // its seed unused: each member has its own
  std::int64_t images = 0;
  std::int64_t steps_per_image = 0;
  FieldSet fields;
  std::string backend;
  std::string version;
  // What the sweep measures of every member's images (/stats) and when a member settles.
  AnalysisAttributes analysis;
  std::int64_t members() const { return static_cast<std::int64_t>(feed.size()); }
};

// The XDMF companion (NAME.xmf, written by finish()): a temporal collection of images, each a
// spatial collection of one grid per member, member m at z = m (a volume's member m from
// z = m * (depth + 1), one empty plane apart), so that ParaView and VisIt open the whole sweep.
// `places[i * members + m]` is where image i of member m lies in the file (none: left out); the
// time steps listed end at the last some member reached. False where the companion there already
// listed exactly these (left unwritten).
bool write_sweep_xdmf(const std::filesystem::path& h5_path, const SweepMetadata& meta,
                      const std::vector<ImagePlaces>& places);
// Where every image of every member lies in an open sweep file (image-major), for its companion;
// every process calls it where metadata reads are collective. `volume`: images of
// (depth, rows, cols). An image past its member's count (/images_written) has no place: it is not
// the sweep's (a stopped sweep leaves it unwritten), and the companion leaves it out.
std::vector<ImagePlaces> sweep_image_places(hid_t u, hid_t v, std::int64_t members,
                                            std::int64_t images, bool volume);

// Bytes of image data the sweep writes, for the free-space check.
std::uint64_t sweep_output_bytes(const SweepMetadata& meta);

// How a process opens the sweep file: alone (the default), or as one of the MPI ranks that share
// the members (file_access from H5Pset_fapl_mpio). With MPI every rank creates the file and calls
// finish() together (HDF5's metadata operations are collective), each writes its own members'
// images independently, and one rank writes the small shared datasets.
struct SweepFileAccess {
  hid_t file_access = H5P_DEFAULT;
  bool writes_shared_data = true;  // /feed, /kill, /seed, /step, /nonfinite_image, the move
  std::string partial_tag;         // temporary name's tag, the same on every rank; "": the pid
  bool shared() const { return file_access != H5P_DEFAULT; }  // through MPI-IO, with other ranks
};

// Creates the whole file up front (the member and image counts are known); images arrive in
// blocks of consecutive members, in any order.
class SweepFileWriter {
 public:
  // Created under a temporary name and moved into place once it holds its layout (replacing a
  // file there only when `overwrite`). Alone, written in SWMR mode: readers see it grow.
  SweepFileWriter(const std::filesystem::path& path, const SweepMetadata& meta, bool overwrite,
                  const SweepFileAccess& access = {});
  ~SweepFileWriter();
  SweepFileWriter(const SweepFileWriter&) = delete;
  SweepFileWriter& operator=(const SweepFileWriter&) = delete;

  // Writes image `image` of members [member_begin, member_begin + member_count): u and v hold
  // member_count*cells values (cells: rows*cols, a volume's depth*rows*cols) of the sweep's
  // precision, member after member (a field not written may be null).
  void write_images(std::int64_t member_begin, std::int64_t member_count, std::int64_t image,
                    const void* u, const void* v);
  // Writes the statistics of image `image` of members [member_begin, member_begin +
  // member_count), one per member, into /stats (a sweep made with statistics).
  void write_statistics(std::int64_t member_begin, std::int64_t member_count, std::int64_t image,
                        const analysis::ImageStatistics* statistics);
  // Records that `member` settled at `image` (/stats/settled_image; -1 where none did).
  void record_settled(std::int64_t member, std::int64_t image);
  // Reopens a sweep file to continue it (see read_sweep_state): images are written over what is
  // there, checkpoints into the slots.
  struct Continue {
    FileIdentity read;  // the file whose state was read (SweepFileState::identity)
  };
  SweepFileWriter(const std::filesystem::path& path, const SweepMetadata& meta, Continue,
                  const SweepFileAccess& access = {});
  // Saves members [member_begin, member_begin + count)'s state after `images_done` images (u and
  // v, member after member) and their first non-finite images so far, into the older slot,
  // marking it valid only once it is on the disk. The final state goes into both slots.
  void save_checkpoint(std::int64_t member_begin, std::int64_t member_count,
                       std::int64_t images_done, const void* u, const void* v,
                       const std::int64_t* nonfinite_image);
  // Makes the images written so far survive a crash of this process, and then counts them in
  // /images_written. With shared access each rank's images are raw writes into chunks allocated
  // at creation, durable once written.
  void flush();
  // Records each member's first non-finite image (-1: none) and how the sweep ended, and closes
  // the file. The destructor records an interruption if not called.
  void finish(const std::string& status, const std::vector<std::int64_t>& nonfinite_image);

 private:
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::filesystem::path path_;
  SweepMetadata meta_;
  SweepFileAccess access_;
  // Per member, the images written (its first ones) and those /images_written counts.
  std::vector<std::int64_t> written_, counted_;
  void write_image_block(std::int64_t member_begin, std::int64_t member_count, std::int64_t image,
                         const void* u, const void* v);
  // Writes the counts of the members whose images written grew; false when none did.
  bool count_written_images();
  void complete_final_checkpoints();
  // Gives every byte of the file but the images' room its blocks on the disk (see
  // reserve_metadata_blocks). `where`: the file's name now. Over MPI every process calls it (it
  // reads metadata), one gives the blocks.
  void give_metadata_its_blocks(const std::filesystem::path& where);
  void write_slot_images(int slot, std::int64_t member_begin, std::int64_t member_count);
  // How this file writes a checkpoint of members [member_begin, member_begin + member_count)'s
  // state u, v (see CheckpointSlots).
  SlotWrites slot_writes(std::int64_t member_begin, std::int64_t member_count, const void* u,
                         const void* v);
  CheckpointSlots slots_;
};

// Refuses (InvalidInput) a sweep file whose members' rates, seeds or images are not as many as its
// attribute `members` says: changed by another program, it would be continued or described past
// its datasets' ends.
void check_members_of(const RunFileReader& file);

// What a sweep file says, for `grayscott sweep --resume`: its metadata, status, and per member the
// images done at its newest checkpoint and its first non-finite image so far.
struct SweepFileState {
  SweepMetadata meta;
  std::string status;
  std::vector<std::int64_t> checkpoint_images, nonfinite_image;
  // Every chunk of the images and checkpoints is placed in the file (a file processes shared over
  // MPI); one process places each at its first write, and parallel HDF5 writes into placed ones.
  bool every_chunk_placed = true;
  // Per member, where the file was made with --until-steady (else empty).
  std::vector<SteadyHistory> steady;
  FileIdentity identity;  // the file read
};
SweepFileState read_sweep_state(const std::filesystem::path& path);
// Makes a sweep file whose writer was killed (or stopped by a full disk) read as what it holds,
// for `grayscott repair`; `file` is open for writing, by this process alone, not in SWMR mode.
// Per member, /images_written counts the images complete in the file: those its writer counted
// once they were flushed, and at least those of its checkpoint (a file of an earlier grayscott,
// which has no count, is given one from its checkpoints). Past each member's count, its images
// (NaN), their statistics (NaN, class -1, no histogram counts) and a settling or first non-finite
// image recorded there (-1) then read as never written, as in a sweep stopped by a signal; in a
// file of an earlier grayscott, whose count is only a lower bound, they are left as they are.
// Returns each member's count.
std::vector<std::int64_t> cut_sweep_to_complete_images(hid_t file);
// Readies a sweep file one process wrote for processes sharing it over MPI: writes the fill value
// (NaN) into every chunk not yet placed, so that the file reads the same and every chunk is
// placed. Costs one write of what the sweep has not yet written.
void place_unwritten_chunks(const std::filesystem::path& path);
// Members [member_begin, member_begin + count)'s newest checkpoint (all at the same image).
template <class Real>
void read_sweep_checkpoint(const std::filesystem::path& path, std::int64_t member_begin,
                           std::int64_t member_count, std::vector<Real>& u, std::vector<Real>& v);

}  // namespace grayscott::io
