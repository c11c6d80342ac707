// The run pipeline's C++ API: one simulation from its initial state (or from a file's checkpoint)
// to an HDF5 file, image by image, through the one image loop (pipeline/image_loop.hpp). The
// command line's `run`, the MPI launcher and the Python module are front ends of this.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/image_loop.hpp"

namespace grayscott::pipeline {

// Where one process's block lies in a grid (the whole grid for a single process).
struct BlockPlace {
  std::int64_t row_begin = 0, rows = 0, col_begin = 0, cols = 0;
};

struct RunRequest {
  Problem problem;
  InitialState initial;  // the rectangle unless --init noise
  std::int64_t images = 1000;
  std::int64_t steps_per_image = 32;
  FieldSet fields;
  EngineOptions engine;
  std::filesystem::path output = "output.h5";
  bool overwrite = false;
  bool quiet = false;
  std::optional<std::filesystem::path> render_dir;
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
};

// Where a run's time went, in seconds (see LoopTimes for the loop's share).
struct RunTimes {
  double engine = 0;         // making the engine: allocation and first touch of its state
  double initial_state = 0;  // the initial state or the checkpoint into the engine
  double file_open = 0;      // creating (or reopening) the file
  double loop = 0;           // the image loop, wall time
  LoopTimes in_loop;
  double file_close = 0;  // the final status, the companion .xmf, closing the file
};

struct RunSummary {
  RunTimes times;
  std::string backend;
  std::int64_t first_image = 0;     // images the file held already (a continued run)
  std::int64_t images_written = 0;  // images in the file at the end
  double seconds = 0;
  double cell_updates_per_s = 0;  // of this invocation's images
  bool completed = false;
  int signal = 0;                      // the stop signal that ended the run, if any
  std::int64_t checkpoint_images = 0;  // images done at the file's newest checkpoint
  std::string status;                  // "complete", or why the run stopped (the file's status)
  bool settled = false;  // ended early by design: --until-steady found it settled (status says where)
};

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

// The request's own checks (not the output path): throws InvalidInput. Shared with the
// distributed run.
void validate_run_request(const RunRequest& request);

// The request that continues the run in `path`: its parameters come from the file. Throws
// InvalidInput when the file is not a run file or holds a complete run ("nothing to resume").
RunRequest resume_request(const std::filesystem::path& path);

// The image loop's plan for `request`, continuing after `first_image` images, with
// `slot_values` values per field in one image (this process's cells).
LoopPlan run_loop_plan(const RunRequest& request, std::int64_t first_image,
                       std::size_t slot_values);

// Whether a file's status says the run ended as asked ("complete", or "settled at image ..."
// under --until-steady): nothing to resume.
bool run_is_finished(std::string_view status);

// The file's status for a run that stopped: "interrupted by SIGTERM after image N" and the like.
std::string interrupted_status(int signal, std::int64_t images_done);
// The file's status for a run an error stopped, naming the error and the images kept: "stopped
// after image 4 by an error: write image 4 of v to run.h5: No space left on device".
std::string error_status(std::exception_ptr error, std::int64_t images_done);

// One line for the user about how a run ended early; also the RunInterrupted message.
std::string interruption_message(const RunRequest& request, const RunSummary& summary);

}  // namespace grayscott::pipeline
