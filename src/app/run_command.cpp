#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "io/pictures/render.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/decomposition.hpp"
#include "pipeline/distributed_run.hpp"
#include "pipeline/under_mpi.hpp"
#endif

namespace grayscott::app {

namespace {

using pipeline::format_duration;
using pipeline::format_rate;
using pipeline::RunRequest;
using pipeline::RunSummary;

struct RunCliState {
  requests::RunSettings settings;
  std::string config, resume;
#if GRAYSCOTT_WITH_MPI
  requests::OverRanksSettings over_ranks;
#endif
};

// "0.25,0.5,0.25,...": a plane's stencil by its weights, row by row.
std::string weights_text(const Stencil& stencil) {
  std::string text;
  for (double w : stencil.weights) {
    if (!text.empty()) text += ',';
    text += shortest_text(w);
  }
  return text;
}

// The parameters a continued run takes from its file, by option: `value` compares them with
// an option given, `shown` (where not the value) is how a message or --print-config writes them.
struct ContinuedSetting {
  const char* option;
  std::string (*value)(const RunRequest&);            // compared
  std::string (*shown)(const RunRequest&) = nullptr;  // in the message, where not the value
  std::string shown_of(const RunRequest& r) const { return (shown != nullptr ? shown : value)(r); }
};
const ContinuedSetting continued_settings[] = {
    {"--rows", [](const RunRequest& r) { return std::to_string(r.problem.grid.rows); }},
    {"--cols", [](const RunRequest& r) { return std::to_string(r.problem.grid.cols); }},
    {"--depth", [](const RunRequest& r) { return std::to_string(r.problem.grid.depth); }},
    {"--feed", [](const RunRequest& r) { return shortest_text(r.problem.params.feed); }},
    {"--kill", [](const RunRequest& r) { return shortest_text(r.problem.params.kill); }},
    {"--du", [](const RunRequest& r) { return shortest_text(r.problem.params.du); }},
    {"--dv", [](const RunRequest& r) { return shortest_text(r.problem.params.dv); }},
    {"--dt", [](const RunRequest& r) { return shortest_text(r.problem.params.dt); }},
    {"--stencil",
     [](const RunRequest& r) {
       // A volume's stencils have no weight table: their names tell them apart.
       if (r.problem.stencil.three_dimensional()) return r.problem.stencil.name();
       return weights_text(r.problem.stencil);
     },
     // Named as it was given: "five-point", not its nine weights.
     [](const RunRequest& r) {
       return r.problem.stencil.kind == StencilKind::Custom ? weights_text(r.problem.stencil)
                                                            : r.problem.stencil.name();
     }},
    {"--boundary", [](const RunRequest& r) { return std::string(to_string(r.problem.boundary)); }},
    {"--precision",
     [](const RunRequest& r) { return std::string(to_string(r.problem.precision)); }},
    {"--outside", [](const RunRequest& r) { return to_string(r.problem.outside); }},
    {"--images", [](const RunRequest& r) { return std::to_string(r.images); }},
    {"--steps-per-image", [](const RunRequest& r) { return std::to_string(r.steps_per_image); }},
    {"--fields", [](const RunRequest& r) { return r.fields.text(); }},
    {"--init", [](const RunRequest& r) { return std::string(to_string(r.initial.kind)); }},
    {"--init-values",
     [](const RunRequest& r) {
       const ShapeValues values = shape_values(r.initial);
       return to_string(Outside{values.u, values.v});
     }},
    {"--seed", [](const RunRequest& r) { return std::to_string(r.initial.seed); }},
};

// What --print-config shows of a continued run: its file's parameters, by option name.
ChosenValues continued_values(const RunRequest& file) {
  ChosenValues values;
  for (const ContinuedSetting& s : continued_settings) {
    values[std::string(s.option).substr(2)] = s.shown_of(file);
  }
  values["output"] = file.output.string();
  return values;
}

// The parameters of a continued run come from its file: an option given on the command line (or
// in --config) must say the same, or the request is refused.
void refuse_contradictions(const CLI::App& run, const RunRequest& given,
                           const requests::OutputSettings& out, const RunRequest& file) {
  for (const ContinuedSetting& s : continued_settings) {
    if (!app::given(run, s.option)) continue;
    if (s.value(given) != s.value(file)) {
      throw InvalidInput(std::string(s.option) + " " + s.shown_of(given) + " contradicts " +
                         file.output.string() + ", whose run has " + s.shown_of(file) +
                         " (a continued run keeps its parameters)");
    }
  }
  // What it measures, and when it stops, are its file's too.
  const auto refuse = [&](const std::string& what, const std::string& whose_run) {
    throw InvalidInput(what + " contradicts " + file.output.string() + ", whose run " + whose_run +
                       " (a continued run keeps its parameters)");
  };
  const pipeline::AnalysisRequest& measured = file.analysis;
  const std::string no_statistics = "measured no statistics";
  if (app::given(run, "--stats") && !measured.statistics) refuse("--stats", no_statistics);
  if (app::given(run, "--classify") && !measured.classify)
    refuse("--classify", "classified nothing");
  if (app::given(run, "--histogram-bins")) {
    const std::string bins = std::to_string(out.histogram_bins);
    if (!measured.statistics) refuse("--histogram-bins " + bins, no_statistics);
    if (out.histogram_bins != measured.statistics->bins)
      refuse("--histogram-bins " + bins, "has " + std::to_string(measured.statistics->bins));
  }
  if (app::given(run, "--histogram-range")) {
    const Outside range = parse_outside(out.histogram_range, "histogram-range");
    const std::string text = "--histogram-range " + to_string(range);
    if (!measured.statistics) refuse(text, no_statistics);
    const Outside file_range{measured.statistics->low, measured.statistics->high};
    if (to_string(range) != to_string(file_range)) refuse(text, "has " + to_string(file_range));
  }
  const std::string criterion =
      measured.steady.enabled() ? "has --until-steady " + shortest_text(measured.steady.tolerance) +
                                      " over " + std::to_string(measured.steady.images) + " images"
                                : "has no --until-steady";
  if (app::given(run, "--until-steady") && out.until_steady != measured.steady.tolerance)
    refuse("--until-steady " + shortest_text(out.until_steady), criterion);
  if (app::given(run, "--steady-images") &&
      (!measured.steady.enabled() || out.steady_images != measured.steady.images))
    refuse("--steady-images " + std::to_string(out.steady_images), criterion);
  // A preset's or a pattern's parameters would replace the file's.
  for (const char* option : {"--preset", "--pattern"}) {
    if (app::given(run, option)) {
      throw InvalidInput(std::string(option) +
                         " with --resume: a continued run keeps the parameters of its file");
    }
  }
  std::error_code unreadable;  // a name that does not exist is another file
  if (app::given(run, "--output") &&
      !std::filesystem::equivalent(given.output, file.output, unreadable)) {
    throw InvalidInput("--output " + given.output.string() + " contradicts --resume " +
                       file.output.string() + " (a continued run writes into its own file)");
  }
  requests::check_force_with_resume(given.overwrite, given.render_dir.has_value());
}

// The summary line and the optional pictures, from the one process that reports.
void report(const RunRequest& request, const RunSummary& summary) {
  const Grid& g = request.problem.grid;
  // What this invocation wrote: a continued run's earlier images are the file's, not its own.
  const std::int64_t written = summary.images_written - summary.first_image;
  if (!request.quiet && written == 0 && summary.completed) {
    // Killed after its last image: the resume only closed the file as a complete run's.
    std::fprintf(stderr, "%s: all %lld images were written before; completed its file\n",
                 request.output.c_str(), static_cast<long long>(request.images));
  } else if (!request.quiet) {
    const std::string count = std::to_string(written) + (written == 1 ? " image" : " images");
    const std::string continued = summary.first_image > 0
                                      ? " (images " + std::to_string(summary.first_image + 1) +
                                            " to " + std::to_string(summary.images_written) +
                                            " of " + std::to_string(request.images) + ")"
                                      : "";
    std::fprintf(stderr, "%s %s of %s (%s, %s) to %s%s in %s: %s\n",
                 summary.completed || summary.settled ? "wrote" : "wrote only", count.c_str(),
                 g.text().c_str(), std::string(to_string(request.problem.precision)).c_str(),
                 summary.backend.c_str(), request.output.c_str(), continued.c_str(),
                 format_duration(summary.seconds).c_str(),
                 format_rate(summary.cell_updates_per_s).c_str());
    if (summary.settled) std::fprintf(stderr, "%s\n", summary.status.c_str());
    const pipeline::SteadyCriterion& steady = request.analysis.steady;
    if (steady.enabled() && summary.completed && !summary.settled && written > 0) {
      // Asked to stop once settled, it ran to its end: said, not left to be guessed.
      std::fprintf(stderr,
                   "note: it did not settle: the change of v per step did not stay below %s for "
                   "%lld images (grayscott info %s shows the last image's change)\n",
                   shortest_text(steady.tolerance).c_str(), static_cast<long long>(steady.images),
                   request.output.c_str());
    }
  }
  if (request.render_dir && summary.images_written > 0 && summary.signal == 0) {
    pipeline::say_at_second_interrupt("the run in " + request.output.string() +
                                      " is whole; the pictures written stay in " +
                                      request.render_dir->string());
    io::RenderOptions render;
    render.out_dir = *request.render_dir;
    render.field = request.rendered_field();
    render.overwrite = request.overwrite;
    render.scale = 0;  // auto_scale: small grids enlarged, as render does by default
    render.stop_requested = [] { return pipeline::stop_requested() != 0; };
    const auto pictures = io::render_run(request.output, render);
    if (const int signal = pipeline::stop_requested(); signal != 0) {
      throw pipeline::RunInterrupted(
          "interrupted by " + pipeline::signal_name(signal) + " while rendering: " +
              io::count_pictures(pictures.size()) + " into " + request.render_dir->string() +
              "; the run in " + request.output.string() + " is complete",
          signal);
    }
    if (!request.quiet) {
      std::fprintf(stderr, "rendered %s into %s\n", io::count_pictures(pictures.size()).c_str(),
                   request.render_dir->c_str());
      print_note(io::earlier_pictures_note(*request.render_dir, render.field, pictures));
    }
  }
  if (summary.signal != 0 && !summary.completed) {
    throw pipeline::RunInterrupted(pipeline::interruption_message(request, summary),
                                   summary.signal);
  }
  if (!summary.completed && !summary.settled)
    throw std::runtime_error(request.output.string() + ": " + summary.status);
}

#if GRAYSCOTT_WITH_MPI
// Under an MPI launcher. One rank: exactly the serial program. Several: the distributed run;
// every rank gets the same outcome and rank 0 reports it.
void run_under_mpi(const std::function<RunRequest()>& make_request,
                   const requests::OverRanksSettings& over_ranks) {
  pipeline::run_on_every_rank([&](const mpi::Session& session) {
    const RunRequest request = make_request();  // reads --config, which may set over_ranks
    const pipeline::DistributedRunOptions options = over_ranks.options();
    if (session.size() == 1) {
      mpi::check_one_process_decomposition(options.decomposition, request.problem.grid, true);
      report(request, pipeline::execute_run(request));
      return;
    }
    const RunSummary summary = pipeline::execute_distributed_run(request, options, session);
    if (session.rank() == 0)
      report(request, summary);
    else if (summary.signal != 0 && !summary.completed)
      throw pipeline::RunInterrupted(summary.status, summary.signal);
    else if (!summary.completed && !summary.settled)
      throw std::runtime_error(summary.status);
  });
}
#endif
}  // namespace

bool secondary_mpi_process() {
#if GRAYSCOTT_WITH_MPI
  // The launchers' rank variables: known before (and without) MPI_Init.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* rank = std::getenv(name)) return std::atoi(rank) != 0;
  }
#endif
  return false;
}

void add_run_command(CLI::App& root) {
  auto state = std::make_shared<RunCliState>();
  CLI::App* run = root.add_subcommand("run", "Run a simulation and write every image to HDF5");
  run->footer(
      "Examples:\n"
      "  grayscott run                        the course's workload: 1000 images x 32 steps, "
      "1080x1920\n"
      "  grayscott run --rows 512 --cols 512 --images 200 --init noise --seed 3 -o spots.h5 "
      "--render spots/\n"
      "  grayscott run --resume spots.h5      continue a run stopped by a signal or a time limit\n"
      "  mpirun -n 4 grayscott run ...        one grid over four ranks, one file\n\n" +
      docs_pointer());
  requests::RunSettings& settings = state->settings;
  add_settings(*run, settings.problem, requests::problem_settings());
  add_settings(*run, settings.engine, requests::engine_settings());
  add_settings(*run, settings.out, requests::output_settings());
  add_settings(*run, settings, requests::run_settings());
  run->add_option("--resume", state->resume,
                  "Continue the run in this file from its last checkpoint (its parameters come "
                  "from the file)")
      ->type_name("FILE");
  add_config_option(*run, state->config);
#if GRAYSCOTT_WITH_MPI
  add_settings(*run, state->over_ranks, requests::over_ranks_settings());
#endif

  run->callback([run, state] {
    const auto make_request = [run, state] {
      // Nothing is written yet: a stop signal ends the process at once (a config read from a
      // FIFO or stdin may block).
      const pipeline::StopAtOnce reading_options;
      // --print-config of a continued run shows its file's parameters, the ones it runs with.
      apply_config(*run, state->config, [run, state]() -> ChosenValues {
#if GRAYSCOTT_WITH_MPI
        (void)state->over_ranks.options();  // printed only if a run over ranks takes them
#endif
        if (state->resume.empty()) return request_check(*run, state->settings, state->resume)();
        return continued_values(pipeline::resume_request(state->resume));
      });
      record_given(*run, state->settings.problem);
      refuse_empty_name(*run, "--resume", state->resume);
      std::optional<RunRequest> continued;
      if (!state->resume.empty()) {
        continued = pipeline::resume_request(state->resume);
        // The options given are checked against the file's grid: a volume's stencil is not
        // refused as a plane's for want of --depth, nor the memory check made for the file's
        // depth of the default planes (2000 planes of 1080x1920 for a file of 8x8 ones).
        const Grid& grid = continued->problem.grid;
        if (!app::given(*run, "--depth")) state->settings.problem.depth = grid.depth;
        if (!app::given(*run, "--rows")) state->settings.problem.rows = grid.rows;
        if (!app::given(*run, "--cols")) state->settings.problem.cols = grid.cols;
      }
      RunRequest request = state->settings.request();
      if (continued) {
        refuse_contradictions(*run, request, state->settings.out, *continued);
        continued->engine = request.engine;
        continued->quiet = request.quiet;
        continued->save = request.save;
        continued->render_dir = request.render_dir;
        continued->overwrite = request.overwrite;  // its pictures' (refused without --render)
        request = std::move(*continued);
      }
      // The pictures come after the run: refused before it when they cannot be written.
      if (request.render_dir) {
        io::check_pictures_after_run(*request.render_dir, request.output, request.rendered_field(),
                                     request.images, request.overwrite);
      }
      pipeline::announce_stop_signals(!request.quiet && !secondary_mpi_process());
      pipeline::say_at_second_interrupt(
          pipeline::left_unfinished(request.output.string(), pipeline::continue_command(request)));
      return request;
    };
    // From here to the end of the run a stop signal ends it at the next image, consistently.
    const pipeline::StopSignals stop_signals;
#if GRAYSCOTT_WITH_MPI
    if (mpi::launched_by_mpi_launcher()) return run_under_mpi(make_request, state->over_ranks);
#endif
    const RunRequest request = make_request();
#if GRAYSCOTT_WITH_MPI
    mpi::check_one_process_decomposition(state->over_ranks.decomposition, request.problem.grid,
                                         false);
    // The other options of a run over ranks mean nothing to one process: refused, not ignored
    // (given on the command line or in --config, which make_request read), unless at their
    // default, which asks for nothing (as a decomposition of 1x1 does).
    (void)state->over_ranks.options();  // a value no run takes is named as such
    if (const std::vector<std::string> tuned = state->over_ranks.tuned(); !tuned.empty()) {
      throw InvalidInput(tuned.front() +
                         ": an option of a run over MPI ranks; it needs an MPI launcher "
                         "(mpirun -n P, srun)");
    }
#endif
    report(request, pipeline::execute_run(request));
  });
}

}  // namespace grayscott::app
