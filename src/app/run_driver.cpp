#include "app/run_driver.hpp"

#include <unistd.h>

#include <cstdio>

#include "app/image_stream.hpp"
#include "app/progress.hpp"
#include "app/version.hpp"
#include "io/run_file.hpp"
#include "model/initial_state.hpp"

namespace grayscott::app {

namespace {

template <class Real>
RunSummary run_with(const RunRequest& request, io::RunMetadata meta) {
  const Problem& problem = request.problem;
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<Real>(problem, params, request.engine);
  meta.backend = engine->backend();

  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  {
    std::vector<Real> u(cells), v(cells);
    fill_initial_state<Real>(problem.grid, request.initial, u, v);
    engine->load(0, u, v);
  }

  io::RunFileWriter file(request.output, meta);
  const double cell_updates_per_image =
      static_cast<double>(cells) * static_cast<double>(request.steps_per_image);
  Progress progress(request.images, cell_updates_per_image, !request.quiet && ::isatty(2));
  const StreamOutcome outcome = stream_images<Real>(
      *engine, request.images, request.steps_per_image, request.fields, cells,
      [&](ImageSlot<Real>& slot) {
        engine->read_captured(0, slot.u.empty() ? nullptr : slot.u.data(),
                              slot.v.empty() ? nullptr : slot.v.data());
      },
      [&](const ImageSlot<Real>& slot) -> std::string {
        if (!all_finite<Real>(slot.u) || !all_finite<Real>(slot.v)) {
          return "stopped: values became non-finite at image " + std::to_string(slot.index) +
                 " (step " + std::to_string(slot.step) + ")";
        }
        file.append(slot.step, slot.u.data(), slot.v.data());
        return {};
      },
      [&](std::int64_t i) { progress.update(i + 1); });
  progress.clear();

  RunSummary summary;
  summary.backend = meta.backend;
  summary.seconds = progress.elapsed_seconds();
  summary.images_written = file.images_written();
  summary.completed = !outcome.stopped() && summary.images_written == request.images;
  summary.status = summary.completed              ? "complete"
                   : !outcome.stop_reason.empty() ? outcome.stop_reason
                                                  : "stopped: an error ended the run";
  file.finish(summary.status);
  if (outcome.stepping_error) std::rethrow_exception(outcome.stepping_error);
  if (outcome.writer_error) std::rethrow_exception(outcome.writer_error);
  summary.cell_updates_per_s = summary.seconds > 0 ? static_cast<double>(summary.images_written) *
                                                         cell_updates_per_image / summary.seconds
                                                   : 0;
  return summary;
}

}  // namespace

void validate_run_request(const RunRequest& request) {
  request.problem.validate();
  if (request.images <= 0) throw InvalidInput("images must be a positive integer");
  if (request.steps_per_image <= 0)
    throw InvalidInput("steps-per-image must be a positive integer");
  if (!request.fields.u && !request.fields.v) throw InvalidInput("fields: name u, v or both");
}

RunSummary execute_run(const RunRequest& request) {
  validate_run_request(request);
  io::RunMetadata meta{
      request.problem,      request.images, request.steps_per_image, request.fields, "",
      std::string(version), request.initial};
  io::check_output_path(request.output, request.overwrite, io::run_output_bytes(meta));
  return request.problem.precision == Precision::Single ? run_with<float>(request, meta)
                                                        : run_with<double>(request, meta);
}

}  // namespace grayscott::app
