// XDMF 3 companions (NAME.xmf beside NAME.h5) that let ParaView and VisIt open a run or a sweep
// as a time series: one uniform grid per image (a spatial collection of one grid per member for a
// sweep), on a co-rectilinear mesh in the XY plane, row 0 at the top; a volume's planes stacked
// along z from 0.
//
// Each field of each image is described by where its bytes lie in the HDF5 file (Format="Binary"
// with a Seek offset): ParaView's Xdmf3 readers (its default for .xmf) cannot read an HDF5
// hyperslab (their arrays of a HyperSlab or Function item have no type until read, and are
// dropped: "Skipping unrecognized array type [None]"), and its legacy XDMF reader cannot read the
// Xdmf3-only hyperslab notation; both read raw bytes at an offset. An image of a grayscott file is
// one chunk (or consecutive chunks), never compressed, never moved once placed, so its offset is
// fixed from the moment it is written; the readers then read a running or crashed file too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.hpp"

namespace grayscott::io {

std::filesystem::path xdmf_path_for(const std::filesystem::path& h5_path);
// Before a new file replaces `h5_path` (--force): its old companion removed first, so that a
// process killed between the two never leaves the new file beside a companion describing the old
// one (a file without one is what `grayscott repair` gives one). Throws InvalidInput where the
// companion cannot be removed, before anything is replaced.
void remove_companion_of_replaced(const std::filesystem::path& h5_path);
// Before the companion of an existing file is written over (a repair, a continued run or sweep:
// `who` writes it): NAME.xmf must be a companion (an XDMF document), not someone's notes of that
// name, a link (whose target would be left behind) or a folder, and one that can be replaced
// (not immutable). Throws InvalidInput naming what is there, before anything changes.
void refuse_to_replace_what_is_no_companion(const std::filesystem::path& h5_path,
                                            const std::string& who);
// Said after a companion that could not be written once the file it describes is whole: " (the
// run's file is whole; grayscott repair FILE writes its .xmf once there is room)"; `kind`: "run"
// or "sweep".
std::string companion_remedy(const std::filesystem::path& h5_path, std::string_view kind);

// Where one image of each field lies in the HDF5 file: the offset of its first byte, its bytes
// following contiguously, little-endian; nullopt where the field is not written or the image is
// not in the file in one piece (not yet placed).
struct ImagePlaces {
  std::optional<std::uint64_t> u, v;
};

// What every image of a series shares.
struct XdmfGridInfo {
  std::int64_t rows = 0, cols = 0;
  std::int64_t steps_per_image = 1;  // image i holds the state after (i + 1) * this steps
  double dt = 1;                     // model time per step
  Precision precision = Precision::Single;
  std::int64_t depth = 1;  // a volume's planes (z); 1: a plane, one cell deep at its z
};

// One time step's text: image `image` of a run (one grid), or of a sweep (`members` holds one
// entry per member: a spatial collection of one grid per member, member m at z = m, a volume's
// member m from z = m * (depth + 1)). A field
// whose place is unknown is left out of that grid.
std::string xdmf_run_step(const std::filesystem::path& h5_path, const XdmfGridInfo& grid,
                          std::int64_t image, const ImagePlaces& places);
std::string xdmf_sweep_step(const std::filesystem::path& h5_path, const XdmfGridInfo& grid,
                            std::int64_t image, const std::vector<ImagePlaces>& members);

// Writes NAME.xmf listing time steps 0 .. steps - 1 (the text of step i is `step_text(i)`), and
// keeps it up to date as steps are added, at a cost that does not grow with the steps already
// listed beyond copying the file's bytes: the text of each step is made once; each update copies
// what the file already lists (in the kernel, copy_file_range) and appends the new steps. The
// file is replaced atomically (written beside, then renamed): a reader sees the old list or the
// new one, never half of one, and a symbolic link at its name is replaced, not followed. A file
// that is not the one this object wrote last (removed, edited) is written afresh.
class XdmfCompanion {
 public:
  XdmfCompanion(const std::filesystem::path& h5_path, std::string collection_name,
                std::function<std::string(std::int64_t)> step_text);
  // Replaces NAME.xmf by one listing steps [0, steps); true where it wrote, false where the file
  // there already listed exactly those (this object's first write only). Throws
  // std::runtime_error.
  bool write(std::int64_t steps);
  std::int64_t steps_listed() const { return listed_; }

 private:
  // NAME.xmf is a regular file holding exactly the text of steps [0, steps); its bytes before
  // the footer into `listed_bytes`.
  bool lists_exactly(std::int64_t steps, std::uint64_t& listed_bytes) const;

  std::filesystem::path xmf_;
  std::string header_, footer_;
  std::function<std::string(std::int64_t)> step_text_;
  std::int64_t listed_ = 0;
  std::uint64_t listed_bytes_ = 0;  // of the header and the steps listed, in the file written last
};

}  // namespace grayscott::io
