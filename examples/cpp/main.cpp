// grayscott as a library: build a problem, step it on an engine, read its state, then run the
// same simulation through the pipeline into an HDF5 file (the file `grayscott run` writes).
//
//   grayscott_example OUTPUT.h5
//
// Prints the mean of v after the steps, read from the engine; the file's last image holds the
// same state.
#include <cstdio>
#include <exception>
#include <grayscott/engine/engine.hpp>
#include <grayscott/model/initial_state.hpp>
#include <grayscott/model/model.hpp>
#include <grayscott/pipeline/run.hpp>
#include <vector>

namespace gs = grayscott;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.h5\n", argv[0]);
    return 2;
  }
  try {
    // The problem: a small grid, the course's rates, stencil and boundary.
    gs::Problem problem;
    problem.grid = gs::Grid{128, 128};
    problem.validate();
    const std::int64_t images = 4, steps_per_image = 50;

    // Step it: one simulation on the CPU engine, from the course's rectangle.
    const gs::Parameters rates[] = {problem.params};
    gs::EngineOptions options;
    options.backend = "cpu";
    auto engine = gs::make_engine<float>(problem, rates, options);
    const auto cells = static_cast<std::size_t>(problem.grid.cells());
    std::vector<float> u(cells), v(cells);
    gs::fill_initial_state<float>(problem.grid, gs::InitialState{}, u, v);
    engine->load(0, u, v);
    engine->advance(images * steps_per_image);

    // Read the state back.
    engine->capture(gs::FieldSet{true, true});
    engine->read_captured(0, u.data(), v.data());
    double sum = 0;
    for (float x : v) sum += x;
    std::printf("engine %s: mean v after %lld steps = %.17g\n", engine->backend().c_str(),
                static_cast<long long>(images * steps_per_image), sum / static_cast<double>(cells));

    // The same simulation through the pipeline, image by image into a file.
    gs::pipeline::RunRequest request;
    request.problem = problem;
    request.images = images;
    request.steps_per_image = steps_per_image;
    request.engine = options;
    request.output = argv[1];
    request.quiet = true;
    const gs::pipeline::RunSummary summary = gs::pipeline::execute_run(request);
    std::printf("run: %lld images in %s, %s\n", static_cast<long long>(summary.images_written),
                request.output.c_str(), summary.status.c_str());
    return summary.completed ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "grayscott_example: error: %s\n", e.what());
    return 1;
  }
}
