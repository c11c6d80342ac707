#include <cstdio>
#include <memory>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "app/progress.hpp"
#include "app/run_driver.hpp"
#include "io/render.hpp"

namespace grayscott::app {

namespace {
struct RunCliState {
  ProblemOptions problem;
  EngineCliOptions engine;
  InitialCliOptions initial;
  std::int64_t images = 1000, steps = 32;
  std::string output = "output.h5", fields = "v", config, render_dir;
  bool force = false, quiet = false;
};
}  // namespace

void add_run_command(CLI::App& root) {
  auto state = std::make_shared<RunCliState>();
  CLI::App* run = root.add_subcommand("run", "Run a simulation and write every image to HDF5");
  add_problem_options(*run, state->problem);
  add_initial_options(*run, state->initial);
  run->add_option("--images,--nbimage", state->images, "Images to write")->capture_default_str();
  run->add_option("--steps-per-image,--nbextrastep", state->steps, "Steps between images")
      ->capture_default_str();
  add_engine_options(*run, state->engine);
  run->add_option("-o,--output", state->output, "HDF5 output file")->capture_default_str();
  run->add_option("--fields", state->fields, "Fields to write: v, u or u,v")->capture_default_str();
  run->add_flag("--force", state->force, "Overwrite an existing output file");
  run->add_flag("--quiet", state->quiet, "No progress bar and no summary");
  run->add_option("--render", state->render_dir, "Also write PNG pictures of v into this folder");
  add_config_option(*run, state->config);

  run->callback([run, state] {
    apply_config(*run, state->config);
    RunRequest request;
    request.problem = state->problem.to_problem();
    request.initial = state->initial.to_initial_state();
    request.images = state->images;
    request.steps_per_image = state->steps;
    request.fields = parse_fields(state->fields);
    request.engine = state->engine.to_engine_options();
    request.output = state->output;
    request.overwrite = state->force;
    request.quiet = state->quiet;
    if (!state->render_dir.empty()) request.render_dir = state->render_dir;

    const RunSummary summary = execute_run(request);
    const Grid& g = request.problem.grid;
    if (!state->quiet) {
      std::fprintf(stderr, "%s %lld images of %lldx%lld (%s, %s) to %s in %s: %s\n",
                   summary.completed ? "wrote" : "wrote only",
                   static_cast<long long>(summary.images_written), static_cast<long long>(g.rows),
                   static_cast<long long>(g.cols),
                   std::string(to_string(request.problem.precision)).c_str(),
                   summary.backend.c_str(), request.output.c_str(),
                   format_duration(summary.seconds).c_str(),
                   format_rate(summary.cell_updates_per_s).c_str());
    }
    if (request.render_dir && summary.images_written > 0) {
      io::RenderOptions render;
      render.out_dir = *request.render_dir;
      const auto pictures = io::render_run(request.output, render);
      if (!state->quiet) {
        std::fprintf(stderr, "rendered %zu pictures into %s\n", pictures.size(),
                     request.render_dir->c_str());
      }
    }
    if (!summary.completed) throw std::runtime_error(request.output.string() + ": " + summary.status);
  });
}

}  // namespace grayscott::app
