#include "pipeline/run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/files/run_file.hpp"
#include "model/initial_state.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/progress.hpp"

namespace grayscott::pipeline {

std::string nonfinite_advice(const Problem& problem) {
  const double stable = problem.dt_stable_everywhere();
  if (!(problem.params.dt > stable)) return {};
  return "; dt " + shortest_text(problem.params.dt) + " is above " + bound_text(stable) +
         ", the largest dt stable at every state u, v >= 0 with u + v <= 1 (docs/model.md)";
}

namespace {

// Seconds between laps, on a steady clock.
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The request's file metadata, and the state of the file it continues (if it does): checked
// before any engine is made.
struct PreparedRun {
  io::RunMetadata meta;
  std::optional<io::RunFileState> continued;
};

PreparedRun prepare_run(const RunRequest& request) {
  validate_run_request(request);
  PreparedRun prepared{io::RunMetadata{request.problem, request.images, request.steps_per_image,
                                       request.fields, "", std::string(version), request.initial,
                                       file_attributes(request.analysis)},
                       std::nullopt};
  if (request.resume) {
    prepared.continued = io::read_run_state(request.output);
    if (run_is_finished(prepared.continued->status)) {
      throw InvalidInput("nothing to resume: " + request.output.string() + " holds a complete run");
    }
  } else {
    claim_output(request.output, request.overwrite, request.quiet, prepared.meta);
  }
  return prepared;
}

template <class Real>
void load_initial_state(Engine<Real>& engine, const RunRequest& request) {
  const auto cells = static_cast<std::size_t>(request.problem.grid.cells());
  // Straight into a host engine's state: two fields fewer to allocate and touch.
  if (const typename Engine<Real>::StateView state = engine.state(); !state.on_device) {
    fill_initial_state<Real>(request.problem.grid, request.initial, {state.u, cells},
                             {state.v, cells});
    return;
  }
  std::vector<Real> u(cells), v(cells);
  fill_initial_state<Real>(request.problem.grid, request.initial, u, v);
  engine.load(0, u, v);
}

// The state a continued run goes on from: its newest checkpoint, or its initial state when it
// stopped before the first one.
template <class Real>
void load_continued_state(Engine<Real>& engine, const RunRequest& request,
                          const io::RunFileState& continued) {
  if (continued.checkpoint_images == 0) return load_initial_state(engine, request);
  const auto cells = static_cast<std::size_t>(request.problem.grid.cells());
  std::vector<Real> u(cells), v(cells);
  io::read_checkpoint<Real>(request.output, 0, 0, 0, 0, u, v);
  engine.load(0, u, v);
}

// The run from the state the engine holds: the request's initial state, or the checkpoint of the
// run it continues.
template <class Real>
RunSummary run_on(Engine<Real>& engine, const RunRequest& request, PreparedRun prepared) {
  const Problem& problem = request.problem;
  io::RunMetadata& meta = prepared.meta;
  const io::RunFileState* continued = prepared.continued ? &*prepared.continued : nullptr;
  meta.backend = engine.backend();
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  const std::int64_t first = continued ? continued->checkpoint_images : 0;

  RunTimes times;
  Stopwatch clock;
  std::optional<io::RunFileWriter> file;
  if (continued)
    file.emplace(request.output, meta, io::RunFileWriter::Continue{first});
  else
    file.emplace(request.output, meta, request.overwrite);
  times.file_open = clock.lap();

  const double cell_updates_per_image =
      static_cast<double>(cells) * static_cast<double>(request.steps_per_image);
  Progress progress(request.images - first, cell_updates_per_image,
                    !request.on_progress && !request.quiet && ::isatty(2));
  EngineSource<Real> source(engine, cells);
  RunFileSink<Real> sink(*file, request.fields, false, nonfinite_advice(request.problem));
  LoopPlan plan = run_loop_plan(request, first, cells);
  // The state the loop starts from, for the first image's change (the engine holds it now).
  std::vector<Real> start_v;
  if (plan.statistics) {
    start_v.resize(cells);
    engine.copy_state(0, nullptr, start_v.data());
    plan.start_v = start_v.data();
  }
  plan.on_image = [&](std::int64_t done) {
    if (request.on_progress)
      request.on_progress(done, request.images);
    else
      progress.update(done - first);
  };
  Agreement alone;
  const LoopOutcome outcome = run_image_loop<Real>(source, sink, plan, alone);
  times.loop = clock.lap();
  times.in_loop = outcome.times;
  progress.clear();

  RunSummary summary;
  summary.backend = meta.backend;
  summary.first_image = first;
  summary.seconds = progress.elapsed_seconds();
  summary.images_written = file->images_written();
  summary.signal = outcome.signal;
  summary.checkpoint_images = sink.checkpoint_images() > 0 ? sink.checkpoint_images() : first;
  summary.completed = !outcome.stopped() && summary.images_written == request.images;
  summary.settled = outcome.settled;
  summary.status = summary.completed              ? "complete"
                   : !outcome.stop_reason.empty() ? outcome.stop_reason
                   : outcome.signal != 0 && !outcome.writer_error
                       ? interrupted_status(outcome.signal, summary.images_written)
                       : error_status(outcome.writer_error ? outcome.writer_error
                                                           : outcome.stepping_error,
                                      summary.images_written);
  file->finish(summary.status);
  if (outcome.writer_error && !file->status_recorded()) {
    // The disk had no room even for the status: say what the file needs.
    try {
      std::rethrow_exception(outcome.writer_error);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string(e.what()) + "; " + request.output.string() +
                               " still says 'running': grayscott repair " +
                               request.output.string() + " records how it ended");
    }
  }
  times.file_close = clock.lap();
  summary.times = times;
  if (outcome.stepping_error) std::rethrow_exception(outcome.stepping_error);
  if (outcome.writer_error) std::rethrow_exception(outcome.writer_error);
  summary.cell_updates_per_s = summary.seconds > 0
                                   ? static_cast<double>(summary.images_written - first) *
                                         cell_updates_per_image / summary.seconds
                                   : 0;
  return summary;
}

}  // namespace

LoopPlan run_loop_plan(const RunRequest& request, std::int64_t first_image,
                       std::size_t slot_values) {
  LoopPlan plan;
  plan.first_image = first_image;
  plan.images = request.images;
  plan.steps_per_image = request.steps_per_image;
  plan.fields = request.fields;
  plan.slot_values = slot_values;
  plan.save = request.save;
  plan.on_image_held = request.on_image;
  plan.statistics = request.analysis.statistics;
  plan.steady = request.analysis.steady;
  plan.classify = request.analysis.classify;
  plan.grid = request.problem.grid;
  plan.periodic = request.problem.boundary == Boundary::Periodic;
  return plan;
}

bool run_is_finished(std::string_view status) {
  return status == "complete" || status.starts_with("settled at image ");
}

std::string interrupted_status(int signal, std::int64_t images_done) {
  return "interrupted by " + signal_name(signal) + " after image " + std::to_string(images_done);
}

std::string error_status(std::exception_ptr error, std::int64_t images_done) {
  std::string reason = "an error ended the run";
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    reason = e.what();
  } catch (...) {
  }
  return "stopped after image " + std::to_string(images_done) + " by an error: " + reason;
}

std::string interruption_message(const RunRequest& request, const RunSummary& summary) {
  return summary.status + " of " + std::to_string(request.images) + "; " +
         (summary.checkpoint_images > 0
              ? "checkpoint at image " + std::to_string(summary.checkpoint_images)
              : std::string("no checkpoint yet")) +
         "; continue with: grayscott run --resume " + request.output.string();
}

void validate_run_request(const RunRequest& request) {
  request.problem.validate();
  if (request.images <= 0) throw InvalidInput("images must be a positive integer");
  if (request.steps_per_image <= 0)
    throw InvalidInput("steps-per-image must be a positive integer");
  if (!request.fields.u && !request.fields.v) throw InvalidInput("fields: name u, v or both");
  if (request.save.checkpoint_every_images < 0 || request.save.checkpoint_every_seconds < 0) {
    throw InvalidInput("checkpoint-every must be positive");
  }
  request.analysis.validate(request.problem, request.steps_per_image);
}

RunRequest resume_request(const std::filesystem::path& path) {
  const io::RunFileState state = io::read_run_state(path);
  if (run_is_finished(state.status)) {
    throw InvalidInput("nothing to resume: " + path.string() + " holds a " +
                       (state.status == "complete" ? std::string("complete run")
                                                   : "run that " + state.status) +
                       " (" + std::to_string(state.images_in_file) + " images)");
  }
  RunRequest request;
  request.problem = state.meta.problem;
  request.initial = state.meta.initial;
  request.images = state.meta.images;
  request.steps_per_image = state.meta.steps_per_image;
  request.fields = state.meta.fields;
  request.analysis = analysis_request(state.meta.analysis);
  request.output = path;
  request.resume = true;
  return request;
}

namespace {

template <class Real>
RunSummary execute_run_with(const RunRequest& request) {
  PreparedRun prepared = prepare_run(request);
  const Parameters params[1] = {request.problem.params};
  EngineOptions options = request.engine;
  const BackendChoice choice = choose_backend(options, request.problem, 1);
  options.backend = choice.backend->name();
  if (!choice.notice.empty() && !request.quiet) {
    std::fprintf(stderr, "grayscott: %s\n", choice.notice.c_str());
  }
  Stopwatch clock;
  auto engine = make_engine<Real>(request.problem, params, options);
  const double engine_seconds = clock.lap();
  if (prepared.continued)
    load_continued_state(*engine, request, *prepared.continued);
  else
    load_initial_state(*engine, request);
  const double initial_state_seconds = clock.lap();
  RunSummary summary = run_on(*engine, request, std::move(prepared));
  summary.times.engine = engine_seconds;
  summary.times.initial_state = initial_state_seconds;
  return summary;
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
  PreparedRun prepared = prepare_run(request);
  if (prepared.continued) load_continued_state(engine, request, *prepared.continued);
  return run_on(engine, request, std::move(prepared));
}

template RunSummary execute_run_on(Engine<float>&, const RunRequest&);
template RunSummary execute_run_on(Engine<double>&, const RunRequest&);

}  // namespace grayscott::pipeline
