// `grayscott sweep`: many independent simulations that share a grid, stencil, boundary and
// precision, each with its own feed, kill and noise seed, advanced together in one engine (a
// batch) and written to one HDF5 file. Sweeps larger than the memory limit run as successive
// batches; the file is the same whatever the batching.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.hpp"
#include "io/files/sweep_file.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/image_loop.hpp"
#include "pipeline/job.hpp"

namespace grayscott {
class Backend;  // engine/registry.hpp
}

namespace grayscott::pipeline {

struct SweepMember {
  double feed = 0, kill = 0;
  std::uint64_t seed = 0;
};

// Refuses (InvalidInput) a sweep without members, and a member whose rates are not valid or whose
// time step exceeds its stability limit (which feed and kill move): the one check of every front
// end's sweep (grayscott sweep, gs.sweep, gs.Sweep). `problem` is validated already.
void validate_members(const Problem& problem, const std::vector<SweepMember>& members);

// Every (seed, feed, kill) combination, kill varying fastest, then feed, then seed.
std::vector<SweepMember> cross_members(const std::vector<double>& feeds,
                                       const std::vector<double>& kills,
                                       const std::vector<std::uint64_t>& seeds);

struct SweepRequest {
  Problem problem;  // the shared part; problem.params' feed and kill are replaced per member
  std::vector<SweepMember> members;
  InitialState init;  // its seed unused: each member has its own
  std::int64_t images = 1000;
  std::int64_t steps_per_image = 32;
  FieldSet fields;
  EngineOptions engine;
  std::filesystem::path output = "sweep.h5";
  bool overwrite = false;
  bool quiet = false;
  // Where the notices before it starts go (pipeline/progress.hpp's NoticeSink; none: stderr).
  std::function<void(const std::string&)> notices;
  std::uint64_t max_batch_bytes = 0;  // 0: default_batch_memory()
  SavePolicy save;                    // how often the file is flushed and checkpoints saved
  // Continue the sweep in `output` (see resume_sweep_request): each member from its checkpoint.
  bool resume = false;
  std::vector<std::int64_t> start_images;     // per member: images done already (empty: none)
  std::vector<std::int64_t> nonfinite_image;  // per member, as the file records it
  bool every_chunk_placed = true;  // the file's chunks are all in place (see io::SweepFileState)
  // Per member, where it stood towards settling at its checkpoint (see io::SteadyHistory).
  std::vector<io::SteadyHistory> steady_history;
  io::FileIdentity continued_file;  // the file resume_sweep_request read
  AnalysisRequest analysis;  // statistics of every member's images, settling
  // Called after each image of a batch with (member-images done, member-images in the sweep),
  // counting those the file held already; none: the terminal's progress bar unless quiet.
  std::function<void(std::int64_t, std::int64_t)> on_progress;
};

// The request that continues the sweep in `path`; its parameters come from the file. Throws
// InvalidInput when the file is not a sweep file or holds a complete sweep.
SweepRequest resume_sweep_request(const std::filesystem::path& path);
// The command that continues the sweep `request` writes: "grayscott sweep --resume FILE".
std::string continue_command(const SweepRequest& request);

// Half the machine's memory, and for a device backend at most three quarters of the free memory
// of `device`; shared by `processes_per_node` processes (a sweep over MPI ranks), which take a
// node's devices in turn.
std::uint64_t default_batch_memory(const Backend& backend, int processes_per_node = 1,
                                   int device = 0);

// Memory one member needs while the sweep runs: the engine's state, capture buffers and the
// writer queue's share (an estimate used to size batches).
std::uint64_t sweep_bytes_per_member(const Problem& problem, FieldSet fields);
// Members advanced together: all of them if they fit `max_bytes` and one engine takes that many
// (`max_members`), otherwise the sweep is cut into the fewest batches that fit, of equal size
// (the last possibly smaller).
std::int64_t batch_members(std::int64_t members, std::uint64_t bytes_per_member,
                           std::uint64_t max_bytes, std::uint64_t max_members = UINT64_MAX);

// How a sweep ended (pipeline/job.hpp).
using SweepSummary = JobSummary;

// Validates the request and the output path before any computing (throws InvalidInput), runs.
SweepSummary execute_sweep(const SweepRequest& request);
// What a front end warns of when members became non-finite ("2 members became non-finite (see
// /nonfinite_image in FILE)"), or "" where none did.
std::string nonfinite_members_warning(const SweepSummary& summary,
                                      const std::filesystem::path& output);

// Checks the request (throws InvalidInput naming the problem) and returns the file's metadata,
// its backend left empty.
io::SweepMetadata sweep_metadata(const SweepRequest& request);

}  // namespace grayscott::pipeline
