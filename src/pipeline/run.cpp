#include "pipeline/run.hpp"

#include "io/files/run_file.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/job_files.hpp"

namespace grayscott::pipeline {

std::string nonfinite_advice(const Problem& problem) {
  const double stable = problem.dt_stable_everywhere();
  if (!(problem.params.dt > stable)) return {};
  return "; dt " + shortest_text(problem.params.dt) + " is above " + bound_text(stable) +
         ", the largest dt stable at every state u, v >= 0 with u + v <= 1 (docs/model.md)";
}

bool run_is_finished(std::string_view status) {
  // "settled at image I": a file of an earlier grayscott, which counted from 0.
  return status == "complete" || status.starts_with("settled after image ") ||
         status.starts_with("settled at image ") || run_diverged(status);
}

bool run_diverged(std::string_view status) {
  return status.starts_with("stopped: values became non-finite");
}

std::string continue_command(const RunRequest& request) {
  if (!request.render_dir) return "grayscott run --resume " + request.output.string();
  return "grayscott run --resume " + request.output.string() + " --render " +
         request.render_dir->string() + (request.overwrite ? " --force" : "");
}

std::string interruption_message(const RunRequest& request, const RunSummary& summary) {
  return summary.status + " of " + std::to_string(request.images) + "; " +
         (summary.checkpoint_images > 0
              ? "checkpoint at image " + std::to_string(summary.checkpoint_images)
              : std::string("no checkpoint yet")) +
         "; continue with: " + continue_command(request);
}

void validate_run_request(const RunRequest& request) {
  request.problem.validate();
  check_image_schedule(request.images, request.steps_per_image);
  if (!request.fields.u && !request.fields.v) throw InvalidInput("fields: name u, v or both");
  if (request.save.checkpoint_every_images < 0 || request.save.checkpoint_every_seconds < 0) {
    throw InvalidInput("checkpoint-every must be positive");
  }
  request.analysis.validate(request.problem, request.steps_per_image);
}

void refuse_an_unstored_start(const io::RunFileState& state, const std::filesystem::path& path) {
  if (state.meta.initial.kind == InitialKind::Custom && state.checkpoint_images == 0 &&
      !state.initial_state_stored) {
    // Continued from its start, which the file does not hold whole.
    throw InvalidInput(path.string() +
                       " stopped before its custom initial state was stored: nothing to "
                       "continue; run it again");
  }
}

RunRequest resume_request(const std::filesystem::path& path) {
  const io::RunFileState state = io::read_run_state(path);
  if (run_is_finished(state.status)) {
    throw InvalidInput(
        "nothing to resume: " + path.string() + " holds a " +
        (state.status == "complete" ? std::string("complete run") : "run that " + state.status) +
        " (" + std::to_string(state.images_in_file) +
        (state.images_in_file == 1 ? " image)" : " images)"));
  }
  refuse_an_unstored_start(state, path);
  RunRequest request;
  request.problem = state.meta.problem;
  request.initial = state.meta.initial;
  request.images = state.meta.images;
  request.steps_per_image = state.meta.steps_per_image;
  request.fields = state.meta.fields;
  request.analysis = analysis_request(state.meta.analysis);
  request.output = path;
  request.resume = true;
  request.continued = std::make_shared<const io::RunFileState>(std::move(state));
  return request;
}

namespace {

template <class Real>
RunSummary execute_run_with(const RunRequest& request) {
  const std::unique_ptr<JobFile<Real>> file = run_file_of<Real>(request);
  Alone<Real> alone;
  return run_job(job_of(request), *file, alone);
}

}  // namespace

RunSummary execute_run(const RunRequest& request) {
  return request.problem.precision == Precision::Single ? execute_run_with<float>(request)
                                                        : execute_run_with<double>(request);
}

template <class Real>
RunSummary execute_run_on(Engine<Real>& engine, const RunRequest& request) {
  if (engine.members() != 1) throw InvalidInput("a run steps one simulation, not a batch");
  if ((request.problem.precision == Precision::Single) != std::is_same_v<Real, float>) {
    throw InvalidInput("the engine's precision is not the run's");
  }
  const std::unique_ptr<JobFile<Real>> file = run_file_of<Real>(request);
  Alone<Real> alone(engine);
  return run_job(job_of(request), *file, alone);
}

template RunSummary execute_run_on(Engine<float>&, const RunRequest&);
template RunSummary execute_run_on(Engine<double>&, const RunRequest&);

}  // namespace grayscott::pipeline
