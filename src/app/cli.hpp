// Shared pieces of the command line: the model's options (with the course's names as aliases),
// TOML configuration files, and one-line errors.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"

namespace grayscott::app {

// The raw option values, checked and converted by to_problem().
struct ProblemOptions {
  std::int64_t rows = 1080, cols = 1920;
  double feed = 0.014, kill = 0.054, du = 0.1, dv = 0.05, dt = 1.0;
  std::string stencil = "oono-puri", boundary = "zero-flux", precision = "single";
  Problem to_problem() const;
};

// The most --threads a command takes: more than any one machine's cores (oversubscribing only
// slows a run down), and few enough for the OpenMP runtime to start on an ordinary machine; far
// beyond (100000) it fails inside the runtime and the process dies without a message.
inline constexpr int max_threads = 4096;

struct EngineCliOptions {
  std::string backend = "auto";
  int threads = 0, fuse = 0, device = 0;
  EngineOptions to_engine_options() const;
};

// --init rectangle|noise and --seed S (S only with noise).
struct InitialCliOptions {
  std::string init = "rectangle", seed;
  InitialState to_initial_state() const;
};

// "--fields u,v": which fields to write.
FieldSet parse_fields(const std::string& text);

// The images a command writes and where they go: shared by run and sweep.
struct OutputCliOptions {
  std::int64_t images = 1000, steps = 32;
  std::string output, fields = "v";
  bool force = false, quiet = false;

  // Copies the options into a RunRequest or a SweepRequest (their members share these names).
  template <class Request>
  void apply_to(Request& request) const {
    request.images = images;
    request.steps_per_image = steps;
    request.fields = parse_fields(fields);
    request.output = output;
    request.overwrite = force;
    request.quiet = quiet;
  }
};

void add_problem_options(CLI::App& app, ProblemOptions& o);
// --images and --steps-per-image (with the course's aliases).
void add_image_options(CLI::App& app, OutputCliOptions& o, const std::string& images_help);
// -o/--output, --fields, --force, --quiet.
void add_output_options(CLI::App& app, OutputCliOptions& o);
void add_initial_options(CLI::App& app, InitialCliOptions& o);
// A noise seed: a whole number from 0 to 2^63-1 (files store it as int64). Throws InvalidInput.
std::uint64_t parse_seed(std::string_view text);
void add_engine_options(CLI::App& app, EngineCliOptions& o);

// Adds --config FILE to `app`. Call apply_config() after parsing: each TOML key names a long
// option of `app`; options given on the command line win. Throws InvalidInput naming the file,
// the line and the key for a malformed file or an unknown key.
// A file may hold sections [run], [sweep], [render], [bench]: a section applies to its command
// only and wins over the top-level keys; a top-level key applies to each command that has the
// option (one that no command has is an error). A value of the wrong type (rows = "128") is an
// error. With --print-config (added too), apply_config prints the command's effective options as
// a TOML section that --config reads back, and throws ConfigPrinted: the command does nothing
// else.
void add_config_option(CLI::App& app, std::string& path);
void apply_config(CLI::App& app, const std::string& path);
struct ConfigPrinted {};

// Every command of `app` (CLI11's get_subcommands() lists only those given on the command line).
std::vector<CLI::App*> commands_of(CLI::App& app);

// The help footers' last line: where the documentation is.
std::string docs_pointer();

// Gives every option of `app` and its commands a metavar that says what it takes (FILE, DIR,
// LO:HI, single|double, ...) in place of CLI11's TEXT, INT and FLOAT where those say too little.
void name_metavars(CLI::App& app);

}  // namespace grayscott::app
