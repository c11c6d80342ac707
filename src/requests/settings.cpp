#include "requests/settings.hpp"

#include <charconv>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include "engine/registry.hpp"
#include "io/files/output_path.hpp"
#include "io/files/run_file.hpp"
#include "io/pictures/render.hpp"
#include "requests/names.hpp"
#include "requests/value_sets.hpp"

namespace grayscott::requests {

namespace {

// Names joined for a message: "a, b, c".
template <class Table>
std::string names_of(const Table& table) {
  std::string names;
  for (const auto& entry : table) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

// The entry of `table` called `name`; InvalidInput listing the known names otherwise.
template <class Entry>
const Entry& find_named(std::span<const Entry> table, std::string_view name,
                        const std::string& what) {
  std::vector<std::string> names;
  for (const Entry& entry : table) {
    if (entry.name == name) return entry;
    names.emplace_back(entry.name);
  }
  const std::string near = nearest_name(name, names);
  throw InvalidInput(what + ": unknown " + what + " '" + std::string(name) + "' (" +
                     (near.empty() ? "" : "did you mean " + near + "? ") +
                     "known: " + names_of(table) + ")");
}

}  // namespace

std::span<const Pattern> patterns() {
  // The Python course's names (compute/common.py, grayscott_pars), then Karl Sims's.
  static constexpr Pattern table[] = {
      {"spots", 0.014, 0.054, "Python course (also the C++ course's default)"},
      {"labyrinthine", 0.037, 0.06, "Python course"},
      {"pulsating-spots", 0.025, 0.06, "Python course"},
      {"worms", 0.078, 0.061, "Python course"},
      {"holes", 0.039, 0.058, "Python course"},
      {"intermittent-chaos-holes", 0.034, 0.056, "Python course ('Intermittent chaos/holes')"},
      // The course's list for this name has a fifth number, so its code reads F = 0.05,
      // k = 0.026; these are the rates the entry means (its last two numbers).
      {"spatiotemporal-chaos", 0.026, 0.051, "Python course"},
      {"mitosis", 0.0367, 0.0649, "Karl Sims, Reaction-Diffusion Tutorial"},
      {"coral", 0.0545, 0.062, "Karl Sims, Reaction-Diffusion Tutorial ('coral growth')"},
  };
  return table;
}

const Pattern& find_pattern(std::string_view name) {
  return find_named(patterns(), name, "pattern");
}

std::span<const Preset> presets() {
  // The Python course: luckyjim/pyGrayScott, grayscott_init and grayscott_pars of
  // compute/common.py (the box, F = 0.0565, k = 0.062, 34 steps per frame), float32.
  static constexpr Preset table[] = {
      {"course-numpy", "five-point", "periodic", "1,0", "box-bordered", "single", 0.0565, 0.062,
       0.1, 0.05, 1.0, 34, "compute/numpy/grayscott_numpy.py"},
      {"course-numba", "five-point", "fixed", "1,0", "box-bordered", "single", 0.0565, 0.062, 0.1,
       0.05, 1.0, 34, "compute/numba/grayscott_numba.py"},
      {"course-cupy", "five-point", "fixed", "0,0", "box", "single", 0.0565, 0.062, 0.1, 0.05, 1.0,
       34, "compute/cupy/grayscott_cupy.py"},
      {"course-jax", "five-point", "fixed", "0,0", "box", "single", 0.0565, 0.062, 0.1, 0.05, 1.0,
       34, "compute/jax/grayscott_jax_cpu.py"},
      // The Gray-Scott School's Kokkos code: Maison-de-la-Simulation/gray-scott-kokkos.
      {"course-kokkos", "pretty", "fixed", "1,0", "drop", "double", 0.014, 0.054, 0.1, 0.05, 1.0,
       10, "exercises/gray_scott/gray_scott.cpp"},
      // The Gray-Scott School's C++ reference: grayscott's own defaults.
      {"course-cpp", "oono-puri", "zero-flux", "1,0", "rectangle", "single", 0.014, 0.054, 0.1,
       0.05, 1.0, 32, "the C++ course's reference"},
      // ADIOS2's Gray-Scott example (ornladios/ADIOS2-Examples, source/cpp/gray-scott), as its
      // settings-files.json runs it: L = 64, plotgap 10, periodic, in double. Its noise (1e-7 of
      // uniform random forcing added to u at every step) is not modelled: a run here is
      // deterministic, and that forcing is below float64's use in any figure compared.
      {"adios2", "seven-point", "periodic", "1,0", "cube", "double", 0.01, 0.05, 0.2, 0.1, 2.0, 10,
       "ADIOS2-Examples source/cpp/gray-scott, settings-files.json", 64},
  };
  return table;
}

const Preset& find_preset(std::string_view name) { return find_named(presets(), name, "preset"); }

ProblemSettings ProblemSettings::resolved() const {
  ProblemSettings s = *this;
  const auto set = [&](std::string_view option, auto& field, const auto& value) {
    if (!is_given(option)) field = value;
  };
  if (!preset.empty()) {
    const Preset& p = find_preset(preset);
    if (p.side > 0) {
      set("depth", s.depth, p.side);
      set("rows", s.rows, p.side);
      set("cols", s.cols, p.side);
    }
    set("stencil", s.stencil, std::string(p.stencil));
    set("boundary", s.boundary, std::string(p.boundary));
    set("outside", s.outside, std::string(p.outside));
    set("init", s.init, std::string(p.init));
    set("precision", s.precision, std::string(p.precision));
    set("feed", s.feed, p.feed);
    set("kill", s.kill, p.kill);
    set("du", s.du, p.du);
    set("dv", s.dv, p.dv);
    set("dt", s.dt, p.dt);
  }
  if (!pattern.empty()) {
    const Pattern& p = find_pattern(pattern);
    set("feed", s.feed, p.feed);
    set("kill", s.kill, p.kill);
  }
  if (!is_given("stencil")) {
    const bool volume_stencil = Stencil::parse(s.stencil).three_dimensional();
    if (preset.empty()) {
      // A volume's stencil by default on a volume; one given explicitly is checked as it is.
      if (s.depth > 1 && !volume_stencil) s.stencil = "seven-point";
    } else if (s.depth > 1 && !volume_stencil) {
      // The preset's stencil is a plane's or a volume's: a grid of the other kind is refused
      // naming the preset, not the stencil the user never gave, nor given another silently.
      throw InvalidInput("preset " + preset + " steps a plane (stencil " + s.stencil +
                         "): --depth " + std::to_string(s.depth) +
                         " makes a volume, which needs --stencil seven-point or nineteen-point "
                         "given with it");
    } else if (s.depth <= 1 && volume_stencil) {
      throw InvalidInput("preset " + preset + " steps a volume (stencil " + s.stencil +
                         "): --depth " + std::to_string(s.depth) +
                         " makes a plane, which needs a plane's --stencil given with it");
    }
  }
  s.preset.clear();
  s.pattern.clear();
  return s;
}

std::optional<std::int64_t> ProblemSettings::preset_steps_per_image() const {
  if (preset.empty() || is_given("steps-per-image")) return std::nullopt;
  return find_preset(preset).steps_per_image;
}

std::map<std::string, std::string, std::less<>> ProblemSettings::resolved_choices() const {
  ProblemSettings plain, chosen = resolved();
  std::map<std::string, std::string, std::less<>> texts;
  // Every problem setting by its table (problem_settings()): its value as resolved, where it is
  // not given and differs from the plain default.
  for (const Setting<ProblemSettings>& setting : problem_settings()) {
    if (is_given(setting.option)) continue;
    std::visit(
        [&](auto field) {
          const auto& value = field(chosen);
          if (value == field(plain)) return;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, double>) {
            texts.emplace(setting.option, shortest_text(value));
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            texts.emplace(setting.option, std::to_string(value));
          } else if constexpr (std::is_same_v<T, std::string>) {
            texts.emplace(setting.option, value);
          }
        },
        setting.value);
  }
  if (const auto steps = preset_steps_per_image();
      steps && *steps != OutputSettings{}.steps_per_image)
    texts.emplace("steps-per-image", std::to_string(*steps));
  return texts;
}

Problem ProblemSettings::problem() const {
  const ProblemSettings s = resolved();
  Problem p;
  p.grid = {s.rows, s.cols, s.depth};
  p.params = {s.feed, s.kill, s.du, s.dv, s.dt};
  p.stencil = Stencil::parse(s.stencil);
  p.boundary = parse_boundary(s.boundary);
  p.precision = parse_precision(s.precision);
  p.outside = parse_outside(s.outside);
  p.validate();
  // Given by the user for a boundary that reads no cell beyond the edge: not silently dropped.
  // (A continued run's boundary is its file's, which run --resume compares --outside with.)
  if (is_given("outside") && !is_given("resume") && p.boundary != Boundary::Fixed) {
    throw InvalidInput(
        "outside: the values beyond the edge are the fixed boundary's, and this "
        "grid's boundary is " +
        std::string(to_string(p.boundary)) + " (give --boundary fixed)");
  }
  return p;
}

InitialState ProblemSettings::initial_state() const {
  const ProblemSettings s = resolved();
  InitialState state;
  state.kind = parse_initial_kind(s.init);
  if (!s.init_values.empty()) state.values = parse_shape_values(s.init_values);
  if (!s.seed.empty()) {
    if (state.kind != InitialKind::Noise) throw InvalidInput("seed: a seed needs --init noise");
    state.seed = parse_seed(s.seed);
  }
  check_initial_state({s.rows, s.cols, s.depth}, state);
  return state;
}

EngineOptions EngineSettings::engine_options() const {
  if (threads < 0 || threads > max_threads) {
    throw InvalidInput("threads must be 0 (all cores) or a whole number from 1 to " +
                       std::to_string(max_threads) + ", got " + std::to_string(threads));
  }
  if (fuse < 0) {
    throw InvalidInput("fuse must be 0 (the backend's best) or a positive whole number, got " +
                       std::to_string(fuse));
  }
  if (fuse > max_fuse) {
    throw InvalidInput("fuse must be 0 (the backend's best) or a whole number from 1 to " +
                       std::to_string(max_fuse) + ", got " + std::to_string(fuse));
  }
  if (device < 0 || device > std::numeric_limits<int>::max()) {
    throw InvalidInput("device must be a whole number from 0 to " +
                       std::to_string(std::numeric_limits<int>::max()) + ", got " +
                       std::to_string(device));
  }
  check_backend_name(backend);
  // Not silently dropped: the CPU backend has no device to pick.
  if (device != 0 && backend == "cpu") {
    throw InvalidInput("device " + std::to_string(device) +
                       ": the cpu backend runs on this machine's cores (a device is a GPU's, with "
                       "--backend cuda or auto)");
  }
  return {backend, static_cast<int>(threads), static_cast<int>(fuse), static_cast<int>(device)};
}

namespace {

// --gpu-aware-mpi, --overlap-writes.
pipeline::Toggle toggle(std::string_view option, const std::string& value) {
  if (value == "auto") return pipeline::Toggle::Auto;
  if (value == "on") return pipeline::Toggle::On;
  if (value == "off") return pipeline::Toggle::Off;
  throw InvalidInput(std::string(option) + ": expected auto, on or off, got '" + value + "'");
}

}  // namespace

pipeline::DistributedRunOptions OverRanksSettings::options() const {
  // As deep as the steps fused per pass may be: a halo is that many steps between exchanges.
  if (halo_depth < 0 || halo_depth > max_fuse) {
    throw InvalidInput("halo-depth must be 0 (automatic) or a whole number from 1 to " +
                       std::to_string(max_fuse) + ", got " + std::to_string(halo_depth));
  }
  return {decomposition, static_cast<int>(halo_depth), toggle("gpu-aware-mpi", gpu_aware_mpi),
          toggle("overlap-writes", overlap_writes)};
}

std::vector<std::string> OverRanksSettings::tuned() const {
  OverRanksSettings given = *this, defaults;
  std::vector<std::string> names;
  for (const Setting<OverRanksSettings>& setting : over_ranks_settings()) {
    if (setting.option == "decomposition") continue;  // one process checks its own (1x1)
    const bool at_default =
        std::visit([&](auto field) { return field(given) == field(defaults); }, setting.value);
    if (!at_default) names.emplace_back(setting.option);
  }
  return names;
}

namespace {

pipeline::AnalysisRequest analysis_request(const OutputSettings& out, const Problem& problem,
                                           std::int64_t steps_per_image) {
  pipeline::AnalysisRequest analysis;
  analysis.steady.tolerance = out.until_steady;
  analysis.steady.images = out.steady_images;
  analysis.classify = out.classify;
  // Checked even where nothing uses them (no --stats, no --until-steady): a bad value is refused,
  // not ignored.
  const Outside range = parse_outside(out.histogram_range, "histogram-range");
  const auto histogram = analysis::HistogramSpec::checked(
      out.histogram_bins, range.u, range.v, "histogram-bins", "histogram-range", problem.precision);
  analysis.steady.check_images();
  // Settling and classes are decided from the statistics: asking for them asks for those.
  if (out.stats || out.until_steady != 0 || out.classify) analysis.statistics = histogram;
  analysis.validate(problem, steps_per_image);
  return analysis;
}

template <class Request>
void apply_output(const OutputSettings& out, Request& request) {
  request.images = out.images;
  request.steps_per_image = out.steps_per_image;
  request.fields = parse_fields(out.fields);
  request.output = out.output;
  request.overwrite = out.overwrite;
  request.quiet = out.quiet;
  if (!out.checkpoint_every.empty())
    pipeline::parse_checkpoint_every(out.checkpoint_every, request.save);
  request.analysis = analysis_request(out, request.problem, request.steps_per_image);
}

// The output settings with the preset's steps between images, unless steps-per-image is given:
// before the statistics are checked against those steps (--until-steady's resolution).
OutputSettings out_with_preset_steps(OutputSettings out, const ProblemSettings& problem) {
  if (const auto steps = problem.preset_steps_per_image()) out.steps_per_image = *steps;
  return out;
}

}  // namespace

void apply(const OutputSettings& out, pipeline::RunRequest& request) { apply_output(out, request); }
void apply(const OutputSettings& out, pipeline::SweepRequest& request) {
  apply_output(out, request);
}

void check_force_with_resume(bool overwrite, bool renders) {
  if (overwrite && !renders) {
    throw InvalidInput(
        "--force with --resume replaces only the pictures of --render DIR (a continued run's file "
        "is continued, never replaced)");
  }
}

void refuse_unmeasured_settings(const OutputSettings& out,
                                const pipeline::AnalysisRequest& analysis,
                                const std::function<bool(std::string_view option)>& given) {
  const OutputSettings defaults;
  const auto range_of = [](const OutputSettings& s) {
    const Outside range = parse_outside(s.histogram_range, "histogram-range");
    return std::pair{range.u, range.v};
  };
  const auto asks = [&](std::string_view option) {
    if (!given(option)) return false;
    if (option == "steady-images") return out.steady_images != defaults.steady_images;
    if (option == "histogram-bins") return out.histogram_bins != defaults.histogram_bins;
    if (option == "histogram-range") return range_of(out) != range_of(defaults);
    return true;
  };
  // Measured or not, the images a run waits for while settling mean nothing without a tolerance.
  if (asks("steady-images") && !analysis.steady.enabled()) {
    throw InvalidInput(
        "steady-images: the images in a row that --until-steady waits for; without it, this run "
        "does not settle");
  }
  if (analysis.statistics) return;
  for (const char* option : {"histogram-bins", "histogram-range"}) {
    if (asks(option)) {
      throw InvalidInput(std::string(option) +
                         ": a setting of the statistics, which this run does not measure: give "
                         "--stats (or --until-steady, --classify) too");
    }
  }
}

pipeline::RunRequest RunSettings::request() const {
  pipeline::RunRequest request;
  request.problem = problem.problem();
  request.initial = problem.initial_state();
  apply_output(out_with_preset_steps(out, problem), request);
  if (!problem.is_given("resume")) {  // a continued run compares them with its file
    refuse_unmeasured_settings(out, request.analysis, [this](std::string_view option) {
      return problem.is_given(option);
    });
  }
  request.engine = engine.engine_options();
  if (!render.empty()) request.render_dir = render;
  pipeline::validate_run_request(request);
  return request;
}

ProblemSettings SweepSettings::seeded_problem() const {
  ProblemSettings seeded = problem;
  if (!seeds.empty() && !problem.is_given("init") && problem.preset.empty()) seeded.init = "noise";
  return seeded;
}

std::vector<pipeline::SweepMember> SweepSettings::members() const {
  const InitialState initial = seeded_problem().initial_state();
  std::vector<std::uint64_t> seed_list{initial.seed};
  // An empty list given (a script's empty variable, seeds = []) is not the default seed.
  if (seeds.empty() && problem.is_given("seeds")) throw InvalidInput("seeds: no value given");
  if (!seeds.empty()) {
    if (!problem.seed.empty()) throw InvalidInput("seeds: give --seed or --seeds, not both");
    if (initial.kind != InitialKind::Noise) {
      throw InvalidInput("seeds: seeds draw the noise of --init noise; the start here is " +
                         std::string(to_string(initial.kind)));
    }
    seed_list = parse_seed_list(seeds);
  }
  // A preset's or a pattern's rates, unless the sets are given.
  const ProblemSettings rates = problem.resolved();
  const bool named = !problem.preset.empty() || !problem.pattern.empty();
  const std::string feed_set =
      named && !problem.is_given("feed") ? shortest_text(rates.feed) : feeds;
  const std::string kill_set =
      named && !problem.is_given("kill") ? shortest_text(rates.kill) : kills;
  return pipeline::cross_members(parse_value_set(feed_set, "feed"),
                                 parse_value_set(kill_set, "kill"), seed_list);
}

Problem SweepSettings::shared_problem(const std::vector<pipeline::SweepMember>& members) const {
  ProblemSettings shared = problem;
  shared.feed = members.front().feed;
  shared.kill = members.front().kill;
  shared.given.insert({"feed", "kill"});  // the members' rates, not a preset's
  return shared.problem();
}

pipeline::SweepRequest SweepSettings::continuing(const std::string& file) const {
  pipeline::SweepRequest request = pipeline::resume_sweep_request(file);
  request.engine = engine.engine_options();
  request.quiet = out.quiet;
  if (!out.checkpoint_every.empty())
    pipeline::parse_checkpoint_every(out.checkpoint_every, request.save);
  if (!max_batch_memory.empty())
    request.max_batch_bytes = parse_bytes(max_batch_memory, "max-batch-memory");
  return request;
}

pipeline::SweepRequest SweepSettings::request() const {
  pipeline::SweepRequest request;
  request.members = members();
  request.problem = shared_problem(request.members);
  request.init = seeded_problem().initial_state();
  apply_output(out_with_preset_steps(out, problem), request);
  refuse_unmeasured_settings(out, request.analysis,
                             [this](std::string_view option) { return problem.is_given(option); });
  request.engine = engine.engine_options();
  if (!max_batch_memory.empty())
    request.max_batch_bytes = parse_bytes(max_batch_memory, "max-batch-memory");
  pipeline::sweep_metadata(request);  // the sweep's own checks (every member's rates, images)
  return request;
}

// The tables. A lambda without captures converts to the function pointer a Setting holds.
#define GRAYSCOTT_FIELD(S, member) \
  +[](S & s) -> auto& {            \
    return s.member;               \
  }

std::span<const Setting<ProblemSettings>> problem_settings() {
  using S = ProblemSettings;
  static const std::string pattern_help = [] {
    std::string help = "F and k by name (explicit --feed, --kill win):";
    for (const Pattern& p : patterns()) {
      // Appended piece by piece: GCC 12 reports a false overlap in a chain of + on strings.
      help.append(" ").append(p.name).append(" ").append(shortest_text(p.feed)).append("/");
      help.append(shortest_text(p.kill)).append(" (").append(p.source).append(");");
    }
    help.back() = '.';
    return help;
  }();
  static const std::string preset_help = [] {
    std::string help =
        "One of the courses' programs or a code compared with: its stencil, boundary, outside "
        "values, start, precision, rates, steps per image and, where it has one, its grid "
        "(explicit options win):";
    for (const Preset& p : presets()) {
      help += std::string(" ") + std::string(p.name) + " (" + std::string(p.source) + ");";
    }
    help.back() = '.';
    return help;
  }();
  static const Setting<S> table[] = {
      {"rows", "rows", "nbrow", "Grid rows", GRAYSCOTT_FIELD(S, rows)},
      {"cols", "cols", "nbcol", "Grid columns", GRAYSCOTT_FIELD(S, cols)},
      {"depth", "depth", "",
       "Grid planes: 1 is a plane (2D); 2 or more a volume (3D), stepped with a volume's stencil",
       GRAYSCOTT_FIELD(S, depth)},
      {"feed", "feed", "feedrate", "Feed rate F", GRAYSCOTT_FIELD(S, feed)},
      {"kill", "kill", "killrate", "Kill rate k", GRAYSCOTT_FIELD(S, kill)},
      {"du", "du", "", "Diffusion rate of u", GRAYSCOTT_FIELD(S, du)},
      {"dv", "dv", "", "Diffusion rate of v", GRAYSCOTT_FIELD(S, dv)},
      {"dt", "dt", "deltat", "Time step", GRAYSCOTT_FIELD(S, dt)},
      {"stencil", "stencil", "",
       "A plane's: oono-puri, pretty, five-point, or 9 comma-separated weights (row-major); a "
       "volume's: seven-point (the default with --depth), nineteen-point",
       GRAYSCOTT_FIELD(S, stencil), Form::Name, "NAME|9 WEIGHTS"},
      {"boundary", "boundary", "", "zero-flux, periodic or fixed", GRAYSCOTT_FIELD(S, boundary),
       Form::Name, "zero-flux|periodic|fixed"},
      {"precision", "precision", "", "single (float32) or double", GRAYSCOTT_FIELD(S, precision),
       Form::Name, "single|double"},
      {"outside", "outside", "",
       "The values u,v that cells outside the grid hold with boundary fixed (0,0: the zero "
       "padding of the Python course's CuPy and JAX versions)",
       GRAYSCOTT_FIELD(S, outside), Form::Pair, "U,V"},
      {"init", "init", "",
       "Initial state: rectangle (the C++ course's), noise (the rectangle with small random "
       "perturbations, reproducible from the seed), box (the Python course's, on the grid), "
       "box-bordered (the same on the grid with a one-cell border, as its NumPy and Numba "
       "versions hold it), drop (the Kokkos course's 2x2 drop), cube (ADIOS2's example's 12-cell "
       "cube, u 0.25 and v 0.33); on a volume each shape spans its middle planes",
       GRAYSCOTT_FIELD(S, init), Form::Name, "rectangle|noise|box|box-bordered|drop|cube"},
      {"init-values", "init_values", "",
       "The values u,v inside the initial state's shape (default: the start's own: box 0.7,0.25, "
       "cube 0.25,0.33, the others 0,1)",
       GRAYSCOTT_FIELD(S, init_values), Form::Pair, "U,V"},
      {"seed", "seed", "", "Seed of the noise initial state, 0 to 2^63-1 (default 0)",
       GRAYSCOTT_FIELD(S, seed), Form::Seed, "UINT"},
      {"pattern", "pattern", "", pattern_help, GRAYSCOTT_FIELD(S, pattern), Form::Name, "NAME"},
      {"preset", "preset", "", preset_help, GRAYSCOTT_FIELD(S, preset), Form::Name, "NAME"},
  };
  return table;
}

std::span<const Setting<EngineSettings>> engine_settings() {
  using S = EngineSettings;
  static const std::string threads_help =
      "CPU threads (0: all cores; at most " + std::to_string(max_threads) + ")";
  static const std::string backends = [] {
    std::string names = "auto";
    for (const Backend* backend : registered_backends()) names.append("|").append(backend->name());
    return names;
  }();
  static const std::string backend_help = backend_choices();
  static const Setting<S> table[] = {
      {"backend", "backend", "", backend_help, GRAYSCOTT_FIELD(S, backend), Form::Name, backends},
      {"threads", "threads", "", threads_help, GRAYSCOTT_FIELD(S, threads)},
      {"fuse", "fuse_steps", "", "Steps fused per pass over the grid (0: the backend's best)",
       GRAYSCOTT_FIELD(S, fuse)},
      {"device", "device", "", "Device ordinal (device backends)", GRAYSCOTT_FIELD(S, device)},
  };
  return table;
}

std::span<const Setting<OutputSettings>> output_settings() {
  using S = OutputSettings;
  static const Setting<S> table[] = {
      {"images", "images", "nbimage", "Images to write", GRAYSCOTT_FIELD(S, images)},
      {"steps-per-image", "steps_per_image", "nbextrastep", "Steps between images",
       GRAYSCOTT_FIELD(S, steps_per_image)},
      {"output", "output", "", "HDF5 output file", GRAYSCOTT_FIELD(S, output), Form::Path,
       "FILE.h5"},
      {"fields", "fields", "", "Fields to write: v, u or u,v", GRAYSCOTT_FIELD(S, fields),
       Form::Fields, "v|u|u,v"},
      {"force", "overwrite", "", "Overwrite an existing output file",
       GRAYSCOTT_FIELD(S, overwrite)},
      {"quiet", "quiet", "",
       "No progress bar, no summary, no notice or warning before the run (errors still said)",
       GRAYSCOTT_FIELD(S, quiet)},
      {"checkpoint-every", "checkpoint_every", "",
       "Save the state to continue from (--resume): every N images, or every 90s, 10m, 1h of "
       "wall time (default 5m; also at every stop signal)",
       GRAYSCOTT_FIELD(S, checkpoint_every), Form::Every, "N|TIME"},
      {"stats", "stats", "",
       "Measure every image as it is made (range, mean and standard deviation of u and v, a "
       "histogram of v, the change of v since the previous image) and write it under /stats",
       GRAYSCOTT_FIELD(S, stats)},
      {"histogram-bins", "histogram_bins", "", "Bins of the statistics' histogram of v",
       GRAYSCOTT_FIELD(S, histogram_bins)},
      {"histogram-range", "histogram_range", "",
       "The range of the histogram of v, LOW,HIGH or LOW:HIGH (values outside it count in the "
       "end bins)",
       GRAYSCOTT_FIELD(S, histogram_range), Form::Pair, "LOW,HIGH"},
      {"until-steady", "until_steady", "",
       "Stop once the change of v per step (RMS over the cells) stays below this tolerance for "
       "--steady-images images in a row; a sweep stops stepping each member that settles "
       "(0: never; implies --stats)",
       GRAYSCOTT_FIELD(S, until_steady)},
      {"steady-images", "steady_images", "",
       "Images in a row the change must stay below --until-steady's tolerance",
       GRAYSCOTT_FIELD(S, steady_images)},
      {"classify", "classify", "",
       "Label every image with its pattern class (decayed, uniform, spots, stripes, holes, "
       "mixed, waves: docs/classification.md) and the features that made it, under /stats "
       "(implies --stats)",
       GRAYSCOTT_FIELD(S, classify)},
  };
  return table;
}

std::span<const Setting<RunSettings>> run_settings() {
  using S = RunSettings;
  static const Setting<S> table[] = {
      {"render", "render", "",
       "Also write PNG pictures of v (of u where only u is written) into this folder once the run "
       "ends (with --resume, --force replaces those there)",
       GRAYSCOTT_FIELD(S, render), Form::Path, "DIR"},
  };
  return table;
}

std::span<const Setting<SweepSettings>> sweep_settings() {
  using S = SweepSettings;
  static const Setting<S> table[] = {
      {"feed", "feed", "feedrate",
       "Feed rates: START:STOP:COUNT (both ends included) or a list 0.014,0.022",
       GRAYSCOTT_FIELD(S, feeds), Form::NumberSet, "F1,F2,...|FROM:TO:N"},
      {"kill", "kill", "killrate",
       "Kill rates: START:STOP:COUNT (both ends included) or a list 0.045,0.06",
       GRAYSCOTT_FIELD(S, kills), Form::NumberSet, "K1,K2,...|FROM:TO:N"},
      {"seeds", "seeds", "",
       "Noise seeds, a list such as 1,2,3, crossed with the rates (with init noise)",
       GRAYSCOTT_FIELD(S, seeds), Form::SeedSet, "S1,S2,..."},
      {"max-batch-memory", "max_batch_memory", "",
       "Memory for members advanced together, e.g. 8G; larger sweeps run in successive batches "
       "(default: half the machine's memory)",
       GRAYSCOTT_FIELD(S, max_batch_memory), Form::Bytes, "BYTES"},
  };
  return table;
}

std::span<const Setting<OverRanksSettings>> over_ranks_settings() {
  using S = OverRanksSettings;
  static const Setting<S> table[] = {
      {"decomposition", "decomposition", "",
       "Under mpirun/srun: ROWSxCOLS ranks, a volume's PLANESxROWSxCOLS (default: "
       "MPI_Dims_create's choice; a volume's, the fewest halo cells)",
       GRAYSCOTT_FIELD(S, decomposition), Form::Plain, "ROWSxCOLS"},
      {"halo-depth", "halo_depth", "",
       "Under mpirun/srun: halo cells = steps per halo exchange (0: automatic; the CPU fuses the "
       "steps between exchanges)",
       GRAYSCOTT_FIELD(S, halo_depth)},
      // cuda-aware-mpi: its earlier name, still read (scripts that name it keep working).
      {"gpu-aware-mpi", "gpu_aware_mpi", "cuda-aware-mpi",
       "Under mpirun/srun, on a device backend: pass halo messages to MPI in device memory "
       "(auto: when the MPI library says it can)",
       GRAYSCOTT_FIELD(S, gpu_aware_mpi), Form::Name, "auto|on|off"},
      {"overlap-writes", "overlap_writes", "",
       "Under mpirun/srun: write each image while the next is computed (auto: when each rank "
       "leaves a core free for its writer thread)",
       GRAYSCOTT_FIELD(S, overlap_writes), Form::Name, "auto|on|off"},
  };
  return table;
}

#undef GRAYSCOTT_FIELD

std::vector<std::pair<std::string, std::string>> setting_names() {
  std::vector<std::pair<std::string, std::string>> names;
  const auto add = [&](const auto& table) {
    for (const auto& s : table) names.emplace_back(s.option, s.keyword);
  };
  add(problem_settings());
  add(engine_settings());
  add(output_settings());
  add(run_settings());
  add(sweep_settings());
  add(over_ranks_settings());
  return names;
}

std::string keyword_of(std::string_view option) {
  for (const auto& [name, keyword] : setting_names()) {
    if (name == option) return keyword;
  }
  return std::string(option);
}

}  // namespace grayscott::requests
