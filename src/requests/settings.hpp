// The settings every front end takes, defined once: their names (the command line's long option,
// the course's alias, Python's keyword), their defaults, their help, and how they become the
// pipeline's requests with every limit checked. The command line (src/app) and the Python module
// (python/src) both fill these structures through the tables below and call the same
// conversions, so a value one front end refuses the other refuses too, with the same message.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/distributed_options.hpp"
#include "pipeline/run.hpp"
#include "pipeline/sweep.hpp"

namespace grayscott::requests {

// The most CPU threads a request takes: more than any one machine's cores (oversubscribing only
// slows a run down), and few enough for the OpenMP runtime to start on an ordinary machine; far
// beyond (100000) it fails inside the runtime and the process dies without a message.
inline constexpr std::int64_t max_threads = 4096;
// The most steps fused per pass that a request takes (the CPU engine caps its depth lower).
inline constexpr std::int64_t max_fuse = 1 << 20;

// A named pair of rates (--pattern), and where the name comes from.
struct Pattern {
  std::string_view name;
  double feed, kill;
  std::string_view source;
};
std::span<const Pattern> patterns();
const Pattern& find_pattern(std::string_view name);  // throws InvalidInput listing the names

// One of the courses' programs, or a code this one is compared with (--preset): every setting of
// the problem as that program has it, and its steps between images; the grid too where the
// program fixes one (a cube of `side` cells a side), else the grid stays the request's.
struct Preset {
  std::string_view name;
  std::string_view stencil, boundary, outside, init, precision;
  double feed, kill, du, dv, dt;
  std::int64_t steps_per_image;
  std::string_view source;
  std::int64_t side = 0;  // 0: no grid of its own
};
std::span<const Preset> presets();
const Preset& find_preset(std::string_view name);  // throws InvalidInput listing the names

// The model, its initial state: `grayscott run`'s problem options, `gs.Simulation`'s arguments.
struct ProblemSettings {
  std::int64_t rows = 1080, cols = 1920, depth = 1;
  double feed = 0.014, kill = 0.054, du = 0.1, dv = 0.05, dt = 1.0;
  std::string stencil = "oono-puri", boundary = "zero-flux", precision = "single";
  std::string outside = "1,0";  // U,V outside the grid, with boundary fixed
  std::string init = "rectangle";
  std::string init_values;  // U,V inside the start's shape; empty: the start's own
  std::string seed;         // empty: not given (0); a whole number, only with init noise
  std::string pattern;      // empty: none; else F and k by name
  std::string preset;       // empty: none; else one of the courses' programs

  // The settings given explicitly, by their command-line names ("boundary", "steps-per-image"):
  // a preset, then a pattern, sets only the others, so an explicit value always wins. The
  // command line records what it parsed (or read from --config); Python the keywords a call
  // names.
  std::set<std::string, std::less<>> given;
  bool is_given(std::string_view option) const { return given.count(option) > 0; }

  // These settings with the preset, then the pattern, applied (both then empty), and a volume's
  // stencil (seven-point) where the grid has depth and no stencil is given; throws InvalidInput
  // for an unknown name.
  ProblemSettings resolved() const;
  // The preset's steps between images, unless none is named or steps-per-image is given.
  std::optional<std::int64_t> preset_steps_per_image() const;
  // The settings that the preset, the pattern or the grid's depth choose here, as option texts by
  // their command-line names ("stencil": "five-point", "feed": "0.0565"): those not given that
  // resolve to a value other than the default. --print-config shows them in place of the
  // defaults. Throws InvalidInput as resolved() does.
  std::map<std::string, std::string, std::less<>> resolved_choices() const;

  // Both resolve first. Validated: throw InvalidInput naming the setting.
  Problem problem() const;
  InitialState initial_state() const;
};

// Where and how the steps run.
struct EngineSettings {
  std::string backend = "auto";
  std::int64_t threads = 0;  // 0: all cores
  std::int64_t fuse = 0;     // 0: the backend's best
  std::int64_t device = 0;
  EngineOptions engine_options() const;  // throws InvalidInput naming the setting
};

// The images a run or a sweep writes, and where.
struct OutputSettings {
  std::int64_t images = 1000, steps_per_image = 32;
  std::string output;  // each command's default (output.h5, sweep.h5)
  std::string fields = "v";
  bool overwrite = false, quiet = false;
  std::string checkpoint_every;  // empty: the default (every 5 minutes of wall time)
  // What is measured of every image (see pipeline::AnalysisRequest).
  bool stats = false;
  std::int64_t histogram_bins = 50;
  std::string histogram_range = "0,1";
  double until_steady = 0;  // 0: never
  std::int64_t steady_images = 5;
  bool classify = false;

  static OutputSettings writing_to(std::string file) {
    OutputSettings settings;
    settings.output = std::move(file);
    return settings;
  }
};

// The output settings into a request (run or sweep: their members share these names).
void apply(const OutputSettings& out, pipeline::RunRequest& request);
void apply(const OutputSettings& out, pipeline::SweepRequest& request);

// `grayscott run`, `Simulation.run`.
struct RunSettings {
  ProblemSettings problem;
  EngineSettings engine;
  OutputSettings out = OutputSettings::writing_to("output.h5");
  std::string render;  // a folder for PNG pictures, or empty

  // The request, validated (the output path is checked when the run claims it).
  pipeline::RunRequest request() const;
};

// How one grid is split over MPI ranks: `grayscott run`'s options under mpirun/srun, a
// Simulation's keywords with comm. Each means nothing to one process, which refuses them (unless
// at their default) in its front end's words.
struct OverRanksSettings {
  std::string decomposition;  // RxC, a volume's PxRxC; empty: the automatic choice
  std::int64_t halo_depth = 0;
  std::string gpu_aware_mpi = "auto", overlap_writes = "auto";

  // The options, validated: throws InvalidInput naming the setting.
  pipeline::DistributedRunOptions options() const;
  // The long names of the exchanges' and writes' settings given a value other than their default
  // ("halo-depth"): what a process alone refuses (it takes a decomposition of one block, checked
  // by mpi::check_one_process_decomposition).
  std::vector<std::string> tuned() const;
};

// A continued run's file is continued, never replaced: --force (overwrite) with --resume can only
// mean the pictures of --render. Throws InvalidInput where it is given without them.
void check_force_with_resume(bool overwrite, bool renders);

// Throws InvalidInput for a setting of the statistics (histogram-bins, histogram-range,
// steady-images) that `given` says was given, with a value other than its default, where it would
// do nothing: where `analysis` measures nothing (no --stats, --until-steady or --classify), and
// steady-images without --until-steady. A default given as such asks for nothing: a wrapper that
// passes every argument on, a configuration file that lists every key.
void refuse_unmeasured_settings(const OutputSettings& out,
                                const pipeline::AnalysisRequest& analysis,
                                const std::function<bool(std::string_view option)>& given);

// `grayscott sweep`, `gs.sweep`, `gs.Sweep`: sets of rates (and seeds) crossed into members.
struct SweepSettings {
  ProblemSettings problem;  // its feed and kill are replaced by the sets below
  EngineSettings engine;
  OutputSettings out = OutputSettings::writing_to("sweep.h5");
  std::string feeds = "0.014", kills = "0.054";  // START:STOP:COUNT or a list
  std::string seeds;                             // a list of seeds, with init noise
  std::string max_batch_memory;                  // e.g. 8G; empty: the default

  // The members' problem: `problem`, its start noise where seeds are given and no start is (the
  // seeds draw that noise; a start given, or a preset's, stands and must be noise).
  ProblemSettings seeded_problem() const;
  std::vector<pipeline::SweepMember> members() const;
  // The problem the members share (grid, diffusion, stencil, boundary, precision), validated with
  // the first member's rates: what a batch engine is made for.
  Problem shared_problem(const std::vector<pipeline::SweepMember>& members) const;
  pipeline::SweepRequest request() const;
  // The request that continues the sweep in `file` (sweep --resume): its parameters from the file,
  // how it is computed (engine, quiet, checkpoint-every, max-batch-memory) from these settings.
  pipeline::SweepRequest continuing(const std::string& file) const;
};

// How a setting's value is written, beyond its C++ type: what the command line shows as its
// metavar and what Python accepts for it.
enum class Form {
  Plain,      // the C++ type says it all
  Name,       // one of the names `choices` lists
  Path,       // a file or folder (Python also takes os.PathLike)
  Seed,       // a whole number from 0 to 2^63-1 (Python: an int)
  NumberSet,  // START:STOP:COUNT or a list (Python: a number or a sequence of numbers)
  SeedSet,    // a list of seeds (Python: an int or a sequence of ints)
  Fields,     // v, u or u,v
  Every,      // N images or a time: 90s, 10m, 1h (Python: an int, seconds, or a timedelta)
  Bytes,      // 8G, 512M (Python: an int of bytes too)
  Pair,       // two numbers U,V (Python: a pair of numbers too)
};

// One setting of a structure S: where its value lives, and its names.
template <class S>
struct Setting {
  std::string_view option;   // the command line's long name (and the TOML key): "steps-per-image"
  std::string_view keyword;  // Python's keyword: "steps_per_image"
  std::string_view alias;    // the course's name ("nbextrastep"), or empty
  std::string_view help;
  std::variant<std::int64_t& (*)(S&), double& (*)(S&), std::string& (*)(S&), bool& (*)(S&)> value;
  Form form = Form::Plain;
  std::string_view choices = {};  // for Form::Name and for the metavar: "single|double"
};

std::span<const Setting<ProblemSettings>> problem_settings();
std::span<const Setting<EngineSettings>> engine_settings();
// images, steps-per-image, output, fields, force (overwrite), quiet, checkpoint-every.
std::span<const Setting<OutputSettings>> output_settings();
std::span<const Setting<RunSettings>> run_settings();      // what run adds: render
std::span<const Setting<SweepSettings>> sweep_settings();  // feed, kill, seeds, max-batch-memory
// decomposition, halo-depth, gpu-aware-mpi, overlap-writes
std::span<const Setting<OverRanksSettings>> over_ranks_settings();

// Python's keyword for a command-line option name ("force" -> "overwrite", "steps-per-image" ->
// "steps_per_image"); the name itself when it is not a setting.
std::string keyword_of(std::string_view option);
// Every setting's (option, keyword) pair, for front ends that rename messages.
std::vector<std::pair<std::string, std::string>> setting_names();

}  // namespace grayscott::requests
