// The run loop: step on the engine, hand each image to a writer thread that writes HDF5 while the
// engine computes the next one, stop cleanly on non-finite values or a write error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::app {

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
};

struct RunSummary {
  std::string backend;
  std::int64_t images_written = 0;
  double seconds = 0;
  double cell_updates_per_s = 0;
  bool completed = false;
  std::string status;  // "complete", or why the run stopped
};

// Validates the request and the output path before any computing (throws InvalidInput), then runs.
RunSummary execute_run(const RunRequest& request);

// The request's own checks (not the output path): throws InvalidInput. Shared with the
// distributed run.
void validate_run_request(const RunRequest& request);

}  // namespace grayscott::app
