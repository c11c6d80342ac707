// The run pipeline's C++ API: one simulation from its initial state (or from a file's checkpoint)
// to an HDF5 file, image by image: a job of one member for the one driver (pipeline/job.hpp). The
// command line's `run`, the MPI launcher and the Python module are front ends of this.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/image_loop.hpp"
#include "pipeline/job.hpp"

namespace grayscott::io {
struct RunFileState;  // io/files/run_file.hpp
}

namespace grayscott::pipeline {

struct RunRequest {
  Problem problem;
  InitialState initial;  // the rectangle unless --init noise
  // Where `initial` is custom (InitialKind::Custom, a Python simulation's own state) and a new
  // file starts from it over MPI ranks: fills this rank's block of u and v, in the run's
  // precision. A single process's given engine holds it already; a continued run reads it from
  // its file.
  std::function<void(void* u, void* v)> custom_initial;
  std::int64_t images = 1000;
  std::int64_t steps_per_image = 32;
  FieldSet fields;
  EngineOptions engine;
  std::filesystem::path output = "output.h5";
  bool overwrite = false;
  bool quiet = false;
  // Where the notices before it starts go (pipeline/progress.hpp's NoticeSink; none: stderr).
  std::function<void(const std::string&)> notices;
  std::optional<std::filesystem::path> render_dir;
  // The field render_dir's pictures show: v, or u where the run writes only u.
  std::string rendered_field() const { return fields.v ? "v" : "u"; }
  SavePolicy save;
  // Continue the run in `output` from its newest checkpoint (see resume_request).
  bool resume = false;
  // Called after each image with (images done, images in the run); none: the terminal's progress
  // bar on stderr unless quiet.
  std::function<void(std::int64_t, std::int64_t)> on_progress;
  // Called on the stepping thread with each image before it is written, while the engine holds
  // that image's state (the run then never steps ahead of the image it reads: a device engine
  // loses its overlap of steps and copies). Returns why to stop after this image ("" to go on):
  // the image is written, the state saved as a checkpoint beside it, and the file's status is
  // the reason. The Python module's per-image callbacks.
  std::function<std::string(const LoopImage&)> on_image;
  AnalysisRequest analysis;  // statistics of every image, settling
  // The state of the file a resumed request continues, as resume_request read it (none: read
  // when the run starts).
  std::shared_ptr<const io::RunFileState> continued;
};

// How a run ended (pipeline/job.hpp).
using RunSummary = JobSummary;

// A run that a stop signal ended, its file consistent and its checkpoint saved: front ends exit
// with 128 + signal after printing what().
struct RunInterrupted : std::runtime_error {
  RunInterrupted(const std::string& message, int stop_signal)
      : std::runtime_error(message), signal(stop_signal) {}
  int signal;
};

// Validates the request and the output path before any computing (throws InvalidInput), then runs.
// A run stopped by a signal returns with summary.signal set.
RunSummary execute_run(const RunRequest& request);

// The same run on an engine the caller made for request.problem (one member, the request's
// precision), from the state the engine holds now, which must be the request's initial state; a
// resumed request loads the file's checkpoint into it first. The engine holds the last state
// stepped when this returns: the Python module's Simulation.run.
template <class Real>
RunSummary execute_run_on(Engine<Real>& engine, const RunRequest& request);

// The request's own checks (not the output path): throws InvalidInput.
void validate_run_request(const RunRequest& request);

// Throws InvalidInput where a run would continue from a custom initial state that its file does
// not hold whole (killed, or out of room, while storing it).
void refuse_an_unstored_start(const io::RunFileState& state, const std::filesystem::path& path);

// The request that continues the run in `path`: its parameters come from the file. Throws
// InvalidInput when the file is not a run file or holds a complete run ("nothing to resume").
RunRequest resume_request(const std::filesystem::path& path);

// Whether a file's status says the run ended for good: as asked ("complete", or "settled after
// image ..." under --until-steady), or diverged (run_diverged): nothing to resume.
bool run_is_finished(std::string_view status);
// Whether its values became non-finite: continuing with the same parameters would repeat it.
bool run_diverged(std::string_view status);

// One line for the user about how a run ended early; also the RunInterrupted message.
std::string interruption_message(const RunRequest& request, const RunSummary& summary);
// The command that continues the run `request` writes: "grayscott run --resume FILE", with
// "--render DIR" where the run was to draw its pictures once it ended (they are drawn only then),
// and "--force" where it was to replace pictures there.
std::string continue_command(const RunRequest& request);

}  // namespace grayscott::pipeline
