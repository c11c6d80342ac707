// `grayscott bench`: parses the options into a BenchRequest (app/bench.hpp does the work) and
// prints the report as a table or one JSON object.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/bench.hpp"
#include "app/cli.hpp"
#include "app/commands.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/session.hpp"
#endif

namespace grayscott::app {

namespace {
struct BenchCliState {
  requests::ProblemSettings problem;
  requests::EngineSettings engine;
  std::string preset = "quick", io = "none", output, config;
  std::int64_t images = 0, steps = 0, batch = 1, warmup = 0;
  int repeat = 0;
  bool json = false, stats = false, force = false;
};

template <class T>
std::optional<T> if_given(CLI::App& app, const char* name, T value) {
  return app.get_option(name)->count() > 0 ? std::optional<T>(value) : std::nullopt;
}

// The benchmark the options ask for: the preset's workloads with the options given over them, the
// problem's grid the first workload's (a volume's preset gets a volume's stencil unless --stencil
// names one).
bench::BenchRequest bench_request(CLI::App& bench, BenchCliState& state) {
  record_given(bench, state.problem);
  const bench::Preset& preset = bench::find_preset(state.preset);
  bench::WorkloadOverrides overrides;
  overrides.rows = if_given(bench, "--rows", state.problem.rows);
  overrides.cols = if_given(bench, "--cols", state.problem.cols);
  overrides.images = if_given(bench, "--images", state.images);
  overrides.steps_per_image = if_given(bench, "--steps-per-image", state.steps);
  overrides.batch = if_given(bench, "--batch", state.batch);
  overrides.depth = if_given(bench, "--depth", state.problem.depth);
  bench::BenchRequest request;
  request.preset_name = preset.name;
  request.workloads = bench::resolve_workloads(preset, overrides);
  const bench::Workload& first = request.workloads.front();
  state.problem.rows = first.rows;
  state.problem.cols = first.cols;
  state.problem.depth = first.depth;
  request.problem = state.problem.problem();
  request.engine = state.engine.engine_options();
  request.io = bench::parse_output_mode(state.io);
  request.output = state.output;
  request.overwrite = state.force;
  request.statistics = state.stats;
  request.repeat = if_given(bench, "--repeat", state.repeat).value_or(preset.repeat);
  request.warmup_images = if_given(bench, "--warmup", state.warmup);
  return request;
}

// For --print-config: what the preset chose where an option is not given, each workload's value
// (a list where the preset's workloads differ: batch-vs-large's two grids).
ChosenValues preset_choices(CLI::App& bench, BenchCliState state) {
  const bench::BenchRequest request = bench_request(bench, state);
  request.validate();  // what it prints is a benchmark that runs (--repeat 0 was printed)
  ChosenValues chosen = state.problem.resolved_choices();
  const auto each = [&](auto value_of) {
    std::vector<std::string> values;
    for (const bench::Workload& w : request.workloads) {
      const std::string text = std::to_string(value_of(w));
      if (std::find(values.begin(), values.end(), text) == values.end()) values.push_back(text);
    }
    std::string joined;
    for (const std::string& v : values) joined += (joined.empty() ? "" : ", ") + v;
    return values.size() == 1 ? joined : "[" + joined + "]";
  };
  chosen["rows"] = each([](const bench::Workload& w) { return w.rows; });
  chosen["cols"] = each([](const bench::Workload& w) { return w.cols; });
  chosen["depth"] = each([](const bench::Workload& w) { return w.depth; });
  chosen["images"] = each([](const bench::Workload& w) { return w.images; });
  chosen["steps-per-image"] = each([](const bench::Workload& w) { return w.steps_per_image; });
  chosen["batch"] = each([](const bench::Workload& w) { return w.batch; });
  chosen["repeat"] = std::to_string(request.repeat);
  chosen["warmup"] = each([&](const bench::Workload& w) {
    return request.warmup_images.value_or(bench::default_warmup_images(w));
  });
  return chosen;
}
}  // namespace

void add_bench_command(CLI::App& root) {
  auto state = std::make_shared<BenchCliState>();
  CLI::App* bench = root.add_subcommand(
      "bench", "Measure a backend on a workload, against the memory bandwidth, after verifying it");
  bench->footer(
      "Examples:\n"
      "  grayscott bench --preset quick\n"
      "  grayscott bench --preset batch-vs-large --json > bench.json\n"
      "  grayscott bench --preset 3d                    a volume, seven-point\n"
      "  grayscott bench --preset quick --io hdf5 -o q.h5           stepping and writing every image\n"
      "  grayscott bench --preset quick --io hdf5 -o q.h5 --stats   and what the statistics cost\n\n" +
      docs_pointer());
  bench
      ->add_option("--preset", state->preset,
                   "seed (1080x1920, 1000 images x 32 steps), quick (10 images), "
                   "batch-vs-large (1024 x 128x128 against one 4096x4096), or 3d (256x256x256, "
                   "100 steps, seven-point); the options below override its values")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // The initial state is the benchmark's own (the course's rectangle); --preset is the bench's
  // own (workloads), so a course's program is not one of its options.
  add_settings(*bench, state->problem, requests::problem_settings(),
               {"init", "seed", "init-values", "preset"});
  bench->add_option("--images,--nbimage", state->images, "Images (the preset's by default)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bench->add_option("--steps-per-image,--nbextrastep", state->steps,
                    "Steps between images (the preset's by default)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bench->add_option("--batch", state->batch,
                    "Simulations of the given size advanced together by one engine")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_settings(*bench, state->engine, requests::engine_settings());
  bench
      ->add_option("--io", state->io,
                   "none (stepping only) or hdf5 (the run command's output of every image of v)")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bench
      ->add_option("-o,--output", state->output,
                   "With --io hdf5: the file each repeat writes (an existing one only with --force)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bench->add_flag("--force", state->force, "Replace an existing --output file (and its .xmf)");
  bench->add_flag("--stats", state->stats,
                  "With --io hdf5: also measure the statistics of every image (as run --stats) "
                  "and report their time against the stepping's");
  bench->add_option("--repeat", state->repeat,
                    "Timed repeats, the median is reported (the preset's by default)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bench->add_option(
      "--warmup", state->warmup,
      "Images of the untimed warm-up run (default: a tenth of the images, at least 1)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bench->add_flag("--json", state->json, "Print one JSON object instead of the table");
  add_config_option(*bench, state->config);

  bench->callback([bench, state] {
    apply_config(*bench, state->config, [bench, state] { return preset_choices(*bench, *state); });
#if GRAYSCOTT_WITH_MPI
    // Every rank would time the same benchmark on its own and write the same --output.
    if (mpi::launched_by_mpi_launcher()) {
      throw InvalidInput(
          "bench times one process: run it without mpirun (grayscott run under mpirun reports "
          "the ranks' rate)");
    }
#endif
    const bench::BenchRequest request = bench_request(*bench, *state);
    const bench::BenchReport report = bench::run_benchmark(request);
    const std::string text = state->json ? bench::format_json(report) : bench::format_table(report);
    std::fputs(text.c_str(), stdout);
  });
}

}  // namespace grayscott::app
