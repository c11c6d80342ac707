#include "app/run_driver.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <atomic>
#include <exception>
#include <thread>

#include "app/image_queue.hpp"
#include "app/progress.hpp"
#include "app/version.hpp"
#include "io/run_file.hpp"

namespace grayscott::app {

namespace {

template <class Real>
bool all_finite(const std::vector<Real>& values) {
  bool finite = true;
  for (Real x : values) finite &= std::isfinite(x);
  return finite;
}

template <class Real>
RunSummary run_with(const RunRequest& request, io::RunMetadata meta) {
  const Problem& problem = request.problem;
  const Parameters params[1] = {problem.params};
  auto engine = make_engine<Real>(problem, params, request.engine);
  meta.backend = engine->backend();

  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  {
    std::vector<Real> u(cells), v(cells);
    fill_seed<Real>(problem.grid, u, v);
    engine->load(0, u, v);
  }

  io::RunFileWriter file(request.output, meta);
  // Three buffers: one being filled, one being written, one spare so neither side waits on a
  // single hand-over.
  ImageQueue<Real> queue(3, cells, request.fields.u, request.fields.v);
  std::string stop_reason;
  std::exception_ptr writer_error;
  std::atomic<bool> stop{false};

  std::thread writer([&] {
    try {
      while (auto slot = queue.pop()) {
        if (!all_finite(slot->u) || !all_finite(slot->v)) {
          stop_reason = "stopped: values became non-finite at image " + std::to_string(slot->index) +
                        " (step " + std::to_string(slot->step) + ")";
          stop = true;
          queue.close();
          return;
        }
        file.append(slot->step, slot->u.data(), slot->v.data());
        queue.release(std::move(*slot));
      }
    } catch (...) {
      writer_error = std::current_exception();
      stop = true;
      queue.close();
    }
  });

  const double cell_updates_per_image =
      static_cast<double>(cells) * static_cast<double>(request.steps_per_image);
  Progress progress(request.images, cell_updates_per_image, !request.quiet && ::isatty(2));
  std::exception_ptr stepping_error;
  try {
    engine->advance(request.steps_per_image);
    engine->capture(request.fields);
    for (std::int64_t i = 0; i < request.images && !stop; ++i) {
      // Queue the next image's steps before waiting for this one: a GPU keeps computing while the
      // image travels to the host and the writer.
      if (i + 1 < request.images) engine->advance(request.steps_per_image);
      auto slot = queue.acquire();
      if (!slot) break;
      engine->read_captured(0, slot->u.empty() ? nullptr : slot->u.data(),
                            slot->v.empty() ? nullptr : slot->v.data());
      slot->index = i;
      slot->step = (i + 1) * request.steps_per_image;
      queue.push(std::move(*slot));
      if (i + 1 < request.images) engine->capture(request.fields);
      progress.update(i + 1);
    }
  } catch (...) {
    stepping_error = std::current_exception();
    queue.close();
  }
  queue.finish();
  writer.join();
  progress.clear();

  RunSummary summary;
  summary.backend = meta.backend;
  summary.seconds = progress.elapsed_seconds();
  summary.images_written = file.images_written();
  summary.completed = stop_reason.empty() && !writer_error && !stepping_error &&
                      summary.images_written == request.images;
  summary.status = summary.completed ? "complete"
                   : !stop_reason.empty() ? stop_reason
                                          : "stopped: an error ended the run";
  file.finish(summary.status);
  if (stepping_error) std::rethrow_exception(stepping_error);
  if (writer_error) std::rethrow_exception(writer_error);
  summary.cell_updates_per_s =
      summary.seconds > 0
          ? static_cast<double>(summary.images_written) * cell_updates_per_image / summary.seconds
          : 0;
  return summary;
}

}  // namespace

void validate_run_request(const RunRequest& request) {
  request.problem.validate();
  if (request.images <= 0) throw InvalidInput("images must be a positive integer");
  if (request.steps_per_image <= 0) throw InvalidInput("steps-per-image must be a positive integer");
  if (!request.fields.u && !request.fields.v) throw InvalidInput("fields: name u, v or both");
}

RunSummary execute_run(const RunRequest& request) {
  validate_run_request(request);
  io::RunMetadata meta{request.problem, request.images, request.steps_per_image, request.fields,
                       "", std::string(version)};
  io::check_output_path(request.output, request.overwrite, io::run_output_bytes(meta));
  return request.problem.precision == Precision::Single ? run_with<float>(request, meta)
                                                        : run_with<double>(request, meta);
}

}  // namespace grayscott::app
