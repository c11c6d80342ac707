// `grayscott sweep`: many independent simulations that share a grid, stencil, boundary and
// precision, each with its own feed, kill and noise seed, advanced together in one engine (a
// batch) and written to one HDF5 file. Sweeps larger than the memory limit run as successive
// batches; the file is the same whatever the batching.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::app {

// "START:STOP:COUNT" (COUNT values evenly spaced, both ends included) or a comma-separated list
// of distinct values ("0.014,0.022"). `what` names the option in errors. Throws InvalidInput.
std::vector<double> parse_value_set(std::string_view text, std::string_view what);
// A comma-separated list of distinct seeds.
std::vector<std::uint64_t> parse_seed_list(std::string_view text);
// A byte count: "4G", "512M", "64K", "1.5GiB", "1000000" (K, M, G, T are powers of 1024).
std::uint64_t parse_bytes(std::string_view text, std::string_view what);

struct SweepMember {
  double feed = 0, kill = 0;
  std::uint64_t seed = 0;
};

// Every (seed, feed, kill) combination, kill varying fastest, then feed, then seed.
std::vector<SweepMember> cross_members(const std::vector<double>& feeds,
                                       const std::vector<double>& kills,
                                       const std::vector<std::uint64_t>& seeds);

struct SweepRequest {
  Problem problem;  // the shared part; problem.params' feed and kill are replaced per member
  std::vector<SweepMember> members;
  InitialKind init = InitialKind::Rectangle;
  std::int64_t images = 1000;
  std::int64_t steps_per_image = 32;
  FieldSet fields;
  EngineOptions engine;
  std::filesystem::path output = "sweep.h5";
  bool overwrite = false;
  bool quiet = false;
  std::uint64_t max_batch_bytes = 0;  // 0: default_batch_memory()
};

// Memory one member needs while the sweep runs: the engine's state, capture buffers and the
// writer queue's share (an estimate used to size batches).
std::uint64_t sweep_bytes_per_member(const Problem& problem, FieldSet fields);
// Half the machine's memory, and at most three quarters of the CUDA device's when the CUDA
// backend would run.
std::uint64_t default_batch_memory(BackendKind backend);
// Members advanced together: all of them if they fit `max_bytes`, otherwise the sweep is cut
// into the fewest batches that fit, of equal size (the last possibly smaller).
std::int64_t batch_members(std::int64_t members, std::uint64_t bytes_per_member,
                           std::uint64_t max_bytes);

struct SweepSummary {
  std::string backend;
  std::int64_t members = 0, batches = 0, batch_size = 0;
  std::int64_t nonfinite_members = 0;  // members whose values became non-finite
  double seconds = 0;
  double cell_updates_per_s = 0;
  bool completed = false;
  std::string status;
};

// Validates the request and the output path before any computing (throws InvalidInput), runs.
SweepSummary execute_sweep(const SweepRequest& request);

}  // namespace grayscott::app
