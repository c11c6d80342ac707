#include "app/bench.hpp"

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "engine/registry.hpp"
#include "io/files/output_path.hpp"
#include "io/files/xdmf.hpp"
#include "model/cell_update.hpp"
#include "pipeline/run.hpp"
#include "pipeline/state_memory.hpp"
#include "reference/from_model.hpp"
#include "requests/settings.hpp"

namespace grayscott::app::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

OutputMode parse_output_mode(std::string_view text) {
  if (text == "none") return OutputMode::None;
  if (text == "hdf5") return OutputMode::Hdf5;
  throw InvalidInput("io: expected none or hdf5, got '" + std::string(text) + "'");
}

std::string_view to_string(OutputMode mode) { return mode == OutputMode::Hdf5 ? "hdf5" : "none"; }

double Workload::cell_updates() const {
  return static_cast<double>(depth) * static_cast<double>(rows) * static_cast<double>(cols) *
         static_cast<double>(steps()) * static_cast<double>(batch);
}

std::string Workload::describe() const {
  std::string text = grid().text() + ", " + std::to_string(images) + " images x " +
                     std::to_string(steps_per_image) + " steps";
  if (batch > 1) text = "batch of " + std::to_string(batch) + " x " + text;
  return text;
}

std::int64_t default_warmup_images(const Workload& w) {
  return std::max<std::int64_t>(1, w.images / 10);
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"seed",
       "the course's workload: 1080x1920 float32, 1000 images x 32 steps",
       {{1080, 1920, 1000, 32, 1}},
       1},
      {"quick",
       "the seed's grid for 10 images x 32 steps (seconds on a 2-core machine)",
       {{1080, 1920, 10, 32, 1}},
       3},
      {"batch-vs-large",
       "a batch of 1024 simulations of 128x128 against one 4096x4096 (the same cells per step)",
       {{128, 128, 4, 32, 1024}, {4096, 4096, 4, 32, 1}},
       3},
      // A volume: the seven-point stencil unless --stencil says otherwise. 256^3 in float32 is
      // 256 MiB of state, stepped in seconds on a 2-core machine (the preset takes about half a
      // minute there, verification, rooflines and repeats included).
      {"3d",
       "a volume: 256x256x256, 4 images x 25 steps, seven-point by default",
       {{256, 256, 4, 25, 1, 256}},
       3},
  };
  return all;
}

const Preset& find_preset(std::string_view name) {
  std::string known;
  for (const Preset& p : presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw InvalidInput("preset: expected one of " + known + ", got '" + std::string(name) + "'");
}

std::vector<Workload> resolve_workloads(const Preset& preset, const WorkloadOverrides& o) {
  if (preset.workloads.size() > 1 && (o.rows || o.cols || o.batch)) {
    throw InvalidInput("preset " + preset.name +
                       " compares fixed shapes: only --images and --steps-per-image may change it");
  }
  std::vector<Workload> out = preset.workloads;
  for (Workload& w : out) {
    if (o.rows) w.rows = *o.rows;
    if (o.cols) w.cols = *o.cols;
    if (o.images) w.images = *o.images;
    if (o.steps_per_image) w.steps_per_image = *o.steps_per_image;
    if (o.batch) w.batch = *o.batch;
    if (o.depth) w.depth = *o.depth;
  }
  return out;
}

void BenchRequest::validate() const {
  if (workloads.empty()) throw InvalidInput("bench: nothing to measure");
  for (const Workload& w : workloads) {
    if (w.rows <= 0) throw InvalidInput("rows must be a positive integer");
    if (w.cols <= 0) throw InvalidInput("cols must be a positive integer");
    pipeline::check_image_schedule(w.images, w.steps_per_image);
    if (w.batch <= 0) throw InvalidInput("batch must be a positive integer");
    if (w.depth <= 0) throw InvalidInput("depth must be a positive integer (1: a plane)");
    if (io == OutputMode::Hdf5 && w.batch > 1) {
      throw InvalidInput(
          "--io hdf5 measures the run command's output of one simulation; "
          "--batch needs --io none");
    }
  }
  if (repeat <= 0) throw InvalidInput("repeat must be a positive integer");
  if (warmup_images && *warmup_images < 0)
    throw InvalidInput("warmup must be a non-negative integer");
  // Steps as many as a run may take (images x steps-per-image at most 2^53).
  if (warmup_images && *warmup_images > 0) {
    for (const Workload& w : workloads) {
      try {
        pipeline::check_image_schedule(*warmup_images, w.steps_per_image);
      } catch (const InvalidInput&) {
        throw InvalidInput("warmup x steps-per-image must be at most 2^53 steps, got " +
                           std::to_string(*warmup_images) + " x " +
                           std::to_string(w.steps_per_image));
      }
    }
  }
  if (statistics && io != OutputMode::Hdf5) {
    throw InvalidInput(
        "--stats measures the statistics in the run command's image loop; it needs --io hdf5");
  }
  if (io == OutputMode::Hdf5 && output.empty()) {
    throw InvalidInput("--io hdf5 needs --output FILE (the file each repeat writes)");
  }
  if (io != OutputMode::Hdf5 && !output.empty()) {
    throw InvalidInput("--output is written only with --io hdf5 (--io none times the stepping)");
  }
  // As run refuses it: an existing file (or its .xmf) is replaced only with --force.
  if (io == OutputMode::Hdf5) io::check_output_path(output, overwrite, 0);
  // Each workload's state must fit where it is stepped, as run and sweep check it (with --io
  // hdf5, beside the images of v on their way to the file, as run checks them): beyond, the
  // allocation fails (std::bad_alloc) or the kernel's out-of-memory killer ends the process.
  const int images_held =
      io == OutputMode::Hdf5 ? pipeline::held_images({false, true}, statistics) : 0;
  for (const Workload& w : workloads) {
    Problem p = problem;
    p.grid = w.grid();
    p.validate();
    pipeline::check_state_fits(p, static_cast<std::size_t>(w.batch), engine, 0, images_held);
  }
}

int bytes_per_cell_update(Precision precision) { return precision == Precision::Single ? 16 : 32; }

// --- Verification ------------------------------------------------------------------------------

double verification_tolerance(Precision precision) {
  return precision == Precision::Single ? 2e-6 : 1e-12;
}

namespace {

// Relative L2 difference, or NaN when a value is not finite.
template <class Real>
double relative_l2(std::span<const Real> got, const std::vector<double>& expected) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    if (!std::isfinite(g)) return std::numeric_limits<double>::quiet_NaN();
    diff += (g - expected[i]) * (g - expected[i]);
    norm += expected[i] * expected[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

template <class Real>
double max_abs_difference(std::span<const Real> got, const std::vector<double>& expected) {
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - expected[i]));
  }
  return worst;
}

std::string scientific(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", x);
  return text;
}

template <class Real>
Verification verify_with(const Problem& problem, const Workload& workload,
                         const EngineOptions& options) {
  // The steps per pass the measured run takes: the option, or the backend's default depth for the
  // workload's grid, batch and threads (0 where that default does not depend on the grid).
  EngineOptions checked = options;
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  Problem measured = problem;
  measured.grid = workload.grid();
  const auto batch = static_cast<std::size_t>(workload.batch);
  const Backend& backend = *choose_backend(options, measured, batch).backend;
  if (checked.fuse_steps == 0) {
    checked.fuse_steps =
        backend.default_fuse_steps(measured.grid, problem.precision, threads, batch);
  }
  const std::int64_t depth = std::max(checked.fuse_steps, 1);
  // Small enough for the reference to take at most a second or so, large enough for every edge and
  // corner rule, for blocks of a fused kernel away from every edge, and for each thread's band to
  // hold two passes; as many steps as the engine tests (or three passes), in the workload's chunks
  // so that passes split as they do when measured.
  const std::int64_t steps = std::max<std::int64_t>(40, 3 * depth);
  Problem small = problem;
  const std::int64_t small_cols = workload.cols <= 2048 ? workload.cols : 1984 + workload.cols % 64;
  small.grid = {
      std::min<std::int64_t>(workload.rows, std::max<std::int64_t>(100, 2 * depth * threads)),
      small_cols};
  if (workload.depth > 1) {
    // A volume's passes go through tiles of rows of every plane: enough rows for a few tiles.
    small.grid = {std::min<std::int64_t>(workload.rows, 64), small_cols,
                  std::min<std::int64_t>(workload.depth, 16)};
  }
  const std::int64_t members = std::min<std::int64_t>(workload.batch, 3);
  std::vector<Parameters> params;
  for (std::int64_t m = 0; m < members; ++m) {  // distinct rates: a member mix-up cannot pass
    Parameters p = problem.params;
    p.feed *= 1.0 + 0.25 * static_cast<double>(m);
    p.kill *= 1.0 + 0.1 * static_cast<double>(m);
    params.push_back(p);
  }
  small.validate();

  auto engine = make_engine<Real>(small, params, checked);
  std::vector<reference::State> expected;
  for (std::int64_t m = 0; m < members; ++m) {
    // A volume's start is varied_volume's: varied_state's values, plane after plane.
    expected.push_back(varied_state(small.grid.depth * small.grid.rows, small.grid.cols,
                                    static_cast<std::uint32_t>(m + 1)));
    const std::vector<Real> u(expected.back().u.begin(), expected.back().u.end());
    const std::vector<Real> v(expected.back().v.begin(), expected.back().v.end());
    engine->load(static_cast<std::size_t>(m), u, v);
  }
  for (std::int64_t done = 0; done < steps;) {
    const std::int64_t chunk = std::min(workload.steps_per_image, steps - done);
    engine->advance(chunk);
    done += chunk;
  }
  engine->capture({true, true});

  Verification worst;
  worst.passed = true;
  const double tolerance = verification_tolerance(problem.precision);
  const auto cells = static_cast<std::size_t>(small.grid.cells());
  for (std::int64_t m = 0; m < members; ++m) {
    if (small.grid.volume()) {
      // The volume reference, its result seen as the plane of depth x rows rows that
      // compare_with_reference reads (the same values in the same order).
      reference::State& flat = expected[m];
      reference::Volume volume{small.grid.depth, small.grid.rows, small.grid.cols,
                               std::move(flat.u), std::move(flat.v)};
      const reference::Model3 model = to_reference3(small, params[m]);
      for (std::int64_t s = 0; s < steps; ++s) reference::step(model, volume);
      flat.u = std::move(volume.u);
      flat.v = std::move(volume.v);
    } else {
      const reference::Model model = to_reference(small, params[m]);
      for (std::int64_t s = 0; s < steps; ++s) reference::step(model, expected[m]);
    }
    std::vector<Real> u(cells), v(cells);
    engine->read_captured(static_cast<std::size_t>(m), u.data(), v.data());
    Verification one = compare_with_reference<Real>(u, v, expected[m], tolerance);
    worst.u_error = std::max(worst.u_error, one.u_error);
    worst.v_error = std::max(worst.v_error, one.v_error);
    if (!one.passed && worst.passed) {
      worst.passed = false;
      worst.detail = "member " + std::to_string(m) + ": " + one.detail;
    }
  }
  worst.tolerance = tolerance;
  worst.backend = engine->backend();
  worst.rows = small.grid.rows;
  worst.cols = small.grid.cols;
  worst.depth = small.grid.depth;
  worst.members = members;
  worst.steps = steps;
  worst.fuse_steps = checked.fuse_steps;
  return worst;
}

}  // namespace

template <class Real>
Verification compare_with_reference(std::span<const Real> u, std::span<const Real> v,
                                    const reference::State& expected, double tolerance) {
  Verification result;
  result.tolerance = tolerance;
  result.rows = expected.rows;
  result.cols = expected.cols;
  const auto cells = static_cast<std::size_t>(expected.rows * expected.cols);
  if (u.size() != cells || v.size() != cells) {
    result.detail = "result has the wrong size";
    return result;
  }
  result.u_error = relative_l2(u, expected.u);
  result.v_error = relative_l2(v, expected.v);
  if (std::isnan(result.u_error) || std::isnan(result.v_error)) {
    result.detail = "non-finite values";
    return result;
  }
  // The engine tests' pair of checks: the overall difference, and no single cell far off.
  const double worst_cell =
      std::max(max_abs_difference(u, expected.u), max_abs_difference(v, expected.v));
  if (result.u_error > tolerance || result.v_error > tolerance) {
    result.detail = "relative L2 difference from the reference u " + scientific(result.u_error) +
                    ", v " + scientific(result.v_error) + " exceeds " + scientific(tolerance);
  } else if (worst_cell > 100 * tolerance) {
    result.detail = "a cell differs from the reference by " + scientific(worst_cell) +
                    " (more than " + scientific(100 * tolerance) + ")";
  } else {
    result.passed = true;
  }
  return result;
}

template Verification compare_with_reference<float>(std::span<const float>, std::span<const float>,
                                                    const reference::State&, double);
template Verification compare_with_reference<double>(std::span<const double>,
                                                     std::span<const double>,
                                                     const reference::State&, double);

Verification verify_engine(const Problem& problem, const Workload& workload,
                           const EngineOptions& options) {
  return problem.precision == Precision::Single ? verify_with<float>(problem, workload, options)
                                                : verify_with<double>(problem, workload, options);
}

// --- Measurement -------------------------------------------------------------------------------

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

namespace {

// One timed run without output: every member from the seed, images x steps_per_image steps on
// the engine, until the engine has finished them (an asynchronous backend's queue). The engine's
// construction, the upload and the copy of the result are not timed: a batch's final image (67 MB
// for 1024 members of 128x128) is a transfer over the host link, and a device's first capture
// allocates its staging buffers; neither is stepping. Afterwards the final v of the last member is
// read back and checked: finite, and the same in the first and last members (same seed, same
// rates).
template <class Real>
double time_stepping(const Problem& base, const Workload& w, std::int64_t images,
                     const EngineOptions& options, std::vector<Real>& final_v) {
  Problem problem = base;
  problem.grid = w.grid();
  const std::vector<Parameters> params(static_cast<std::size_t>(w.batch), problem.params);
  auto engine = make_engine<Real>(problem, params, options);
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  {
    std::vector<Real> u(cells), v(cells);
    fill_seed<Real>(problem.grid, u, v);
    for (std::size_t m = 0; m < params.size(); ++m) engine->load(m, u, v);
  }
  final_v.assign(cells, Real(-1));
  // Construction, upload and a device's graph recording stay outside the timed region.
  engine->prepare(w.steps_per_image);
  const auto start = Clock::now();
  for (std::int64_t i = 0; i < images; ++i) engine->advance(w.steps_per_image);
  engine->finish_steps();
  const double seconds = seconds_since(start);
  engine->capture({false, true});
  engine->read_captured(params.size() - 1, nullptr, final_v.data());
  for (Real x : final_v) {
    if (!std::isfinite(x)) throw VerificationFailed("the measured run produced non-finite values");
  }
  if (params.size() > 1) {  // same seed and rates: the first and last members must agree bitwise
    std::vector<Real> first(cells);
    engine->read_captured(0, nullptr, first.data());
    if (first != final_v) throw VerificationFailed("members of the measured batch disagree");
  }
  return seconds;
}

// One timed run through the run command's driver, writing every image of v to HDF5: the time a
// user waits for the file, from engine construction to the file's close.
double time_run_with_output(const BenchRequest& request, const Workload& w, std::int64_t images,
                            bool replaces_own_file,
                            std::vector<std::pair<std::string, double>>* phases = nullptr) {
  pipeline::RunRequest run;
  run.problem = request.problem;
  run.problem.grid = w.grid();
  run.images = images;
  run.steps_per_image = w.steps_per_image;
  run.fields = {false, true};
  run.engine = request.engine;
  run.output = request.output;
  run.overwrite = true;
  run.quiet = true;
  if (request.statistics) run.analysis.statistics = analysis::HistogramSpec{};
  if (replaces_own_file) {
    // The previous repeat's file: freeing its pages is no part of writing this one (a run to a
    // new file never pays it), and took a tenth of the quick workload's time.
    std::error_code ignored;
    std::filesystem::remove(request.output, ignored);
    std::filesystem::remove(io::xdmf_path_for(request.output), ignored);
  }
  const auto start = Clock::now();
  const pipeline::RunSummary summary = pipeline::execute_run(run);
  const double seconds = seconds_since(start);
  if (!summary.completed) throw VerificationFailed(request.output.string() + ": " + summary.status);
  if (phases) {
    const pipeline::RunTimes& t = summary.times;
    const pipeline::LoopTimes& l = t.in_loop;
    *phases = {
        {"engine", t.engine},
        {"initial_state", t.initial_state},
        {"file_open", t.file_open},
        {"stepping", l.stepping},
        {"reading_images", l.reading},
        {"measuring_statistics", l.measuring},
        {"waiting_for_writer", l.waiting},
        {"last_write", l.last_write},
        {"loop_other", t.loop - l.stepping - l.reading - l.measuring - l.waiting - l.last_write},
        {"file_close", t.file_close},
        {"writer_writing", l.writing},
        {"writer_saving", l.saving}};
  }
  return seconds;
}

template <class Real>
Measurement measure(const BenchRequest& request, const Workload& w, const BenchReport& rooflines) {
  const std::int64_t warmup = request.warmup_images.value_or(default_warmup_images(w));
  std::vector<Real> first_v, final_v;
  if (warmup > 0) {
    if (request.io == OutputMode::Hdf5)
      time_run_with_output(request, w, warmup, false);
    else
      time_stepping<Real>(request.problem, w, warmup, request.engine, final_v);
  }
  Measurement m;
  m.workload = w;
  std::vector<std::vector<std::pair<std::string, double>>> phases;
  for (int r = 0; r < request.repeat; ++r) {
    if (request.io == OutputMode::Hdf5) {
      // Each repeat replaces the file of the warm-up or of the repeat before.
      m.seconds.push_back(
          time_run_with_output(request, w, w.images, warmup > 0 || r > 0, &phases.emplace_back()));
      continue;
    }
    m.seconds.push_back(time_stepping<Real>(request.problem, w, w.images, request.engine, final_v));
    // Every repeat computes the same numbers: a backend must be bitwise reproducible.
    if (r == 0)
      first_v = final_v;
    else if (final_v != first_v)
      throw VerificationFailed("repeats of the same run gave different results");
  }
  m.median_seconds = median(m.seconds);
  if (!phases.empty()) {  // the repeat nearest the median
    std::size_t nearest = 0;
    for (std::size_t i = 1; i < m.seconds.size(); ++i) {
      if (std::abs(m.seconds[i] - m.median_seconds) <
          std::abs(m.seconds[nearest] - m.median_seconds))
        nearest = i;
    }
    m.phases = phases[nearest];
    if (request.statistics) {
      const auto phase = [&m](std::string_view name) {
        for (const auto& [phase_name, seconds] : m.phases)
          if (phase_name == name) return seconds;
        return 0.0;
      };
      m.statistics_seconds_per_image =
          phase("measuring_statistics") / static_cast<double>(w.images);
      const double stepping = phase("stepping");
      m.statistics_fraction_of_stepping =
          stepping > 0 ? phase("measuring_statistics") / stepping : 0;
    }
  }
  m.cell_updates_per_s = w.cell_updates() / m.median_seconds;
  m.bytes_per_s = m.cell_updates_per_s * bytes_per_cell_update(request.problem.precision);
  m.fraction_of_copy =
      rooflines.copy_bytes_per_s > 0 ? m.bytes_per_s / rooflines.copy_bytes_per_s : 0;
  m.flops_per_s = m.cell_updates_per_s * rooflines.flops_per_cell_update;
  // (fraction_of_peak: set by run_benchmark once the peak is probed after the runs too.)
  return m;
}

}  // namespace

namespace {

// /proc/cpuinfo's first "model name" (x86) or "Model" (some Arm boards); "unknown" without one.
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with("model name") && !line.starts_with("Model")) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    if (first != std::string::npos) return line.substr(first);
  }
  return "unknown";
}

double load_average() {
  double load[1];
  return ::getloadavg(load, 1) == 1 ? load[0] : -1;
}

}  // namespace

BenchReport run_benchmark(const BenchRequest& request) {
  request.validate();
  BenchReport report;
  report.preset_name = request.preset_name;
  report.problem = request.problem;
  report.engine = request.engine;
  report.io = request.io;
  report.statistics = request.statistics;
  report.repeat = request.repeat;
  report.cpu_model = cpu_model_name();
  report.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  report.load_before = load_average();

  // First the proof: no figure for a kernel that computes something else.
  for (const Workload& w : request.workloads) {
    Verification v = verify_engine(request.problem, w, request.engine);
    if (!v.passed) {
      throw VerificationFailed("verification failed: " + w.describe() +
                               " on this backend: " + v.detail + "; no figures reported");
    }
    report.verifications.push_back(v);
  }
  report.backend = report.verifications.front().backend;
  const Backend& backend = find_backend(report.backend);
  report.on_device = backend.on_device();
  report.threads = report.on_device             ? 0
                   : request.engine.threads > 0 ? request.engine.threads
                                                : omp_get_max_threads();
  const CopyBandwidth copy = backend.copy_bandwidth(request.engine);
  report.copy_bytes_per_s = copy.bytes_per_s;
  report.copy_method = copy.method;
  const ArithmeticPeak peak = backend.arithmetic_peak(request.engine, request.problem.precision);
  report.peak_flops_per_s = report.peak_flops_per_s_before = peak.flops_per_s;
  report.peak_method = peak.method;
  report.flops_per_cell_update = flops_per_cell_update(request.problem.stencil.kind);
  for (const Workload& w : request.workloads) {
    report.measurements.push_back(request.problem.precision == Precision::Single
                                      ? measure<float>(request, w, report)
                                      : measure<double>(request, w, report));
  }
  // Again after: if the stepping rate falls over a long run while this holds, the program is the
  // cause, not the machine.
  report.copy_bytes_per_s_after = backend.copy_bandwidth(request.engine).bytes_per_s;
  // The peak again, the better of the two the roofline: a probe that other work on the machine
  // kept from every core measures less than the machine computes.
  report.peak_flops_per_s_after =
      backend.arithmetic_peak(request.engine, request.problem.precision).flops_per_s;
  report.peak_flops_per_s = std::max(report.peak_flops_per_s_before, report.peak_flops_per_s_after);
  for (Measurement& m : report.measurements) {
    m.fraction_of_peak = report.peak_flops_per_s > 0 ? m.flops_per_s / report.peak_flops_per_s : 0;
    report.peak_disturbed = report.peak_disturbed || m.fraction_of_peak > 1;
  }
  report.load_after = load_average();
  return report;
}

// --- Reports -----------------------------------------------------------------------------------

namespace {

std::string fixed(double x, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return text;
}

std::string fuse_text(int fuse) { return fuse == 0 ? "best" : std::to_string(fuse); }

}  // namespace

std::string format_table(const BenchReport& r) {
  std::ostringstream out;
  out << "grayscott bench" << (r.preset_name.empty() ? "" : " --preset " + r.preset_name) << ": "
      << r.backend;
  if (!r.on_device)
    out << " (" << r.threads << (r.threads == 1 ? " thread" : " threads") << ", fuse "
        << fuse_text(r.engine.fuse_steps) << ")";
  else
    out << " (device " << r.engine.device << ", fuse " << fuse_text(r.engine.fuse_steps) << ")";
  out << ", " << to_string(r.problem.precision) << ", " << r.problem.stencil.name() << ", "
      << to_string(r.problem.boundary) << ", io " << to_string(r.io) << "\n";
  for (const Verification& v : r.verifications) {
    out << "verified: " << v.steps << " steps of " << v.members << " member"
        << (v.members > 1 ? "s" : "") << " of " << Grid{v.rows, v.cols, v.depth}.text()
        << " at fuse " << fuse_text(v.fuse_steps)
        << " against the float64 reference, relative L2 u " << scientific(v.u_error) << ", v "
        << scientific(v.v_error) << " (tolerance " << scientific(v.tolerance) << ")\n";
  }
  out << "copy bandwidth: " << fixed(r.copy_bytes_per_s / 1e9, 1) << " GB/s before the timed runs, "
      << fixed(r.copy_bytes_per_s_after / 1e9, 1) << " GB/s after (" << r.copy_method
      << ", bytes read + written)\n";
  out << "arithmetic peak: " << fixed(r.peak_flops_per_s / 1e9, 1) << " Gflop/s in "
      << to_string(r.problem.precision) << " (" << r.peak_method
      << ": a fused multiply-add each, two flops; the better of "
      << fixed(r.peak_flops_per_s_before / 1e9, 1) << " before the timed runs and "
      << fixed(r.peak_flops_per_s_after / 1e9, 1) << " after)\n";
  out << "machine: " << r.cpu_model << ", " << r.logical_cpus << " logical CPUs";
  if (r.load_before >= 0 && r.load_after >= 0) {
    out << ", load average " << fixed(r.load_before, 2) << " before, " << fixed(r.load_after, 2)
        << " after";
  }
  out << "\n";
  if (r.peak_disturbed) {
    out << "note: a workload computed more than the arithmetic peak measured: other work on the "
           "machine disturbed both probes (see the load average), so the fractions of the peak "
           "below mean nothing; measure on a quiet machine\n";
  }
  if (r.copy_bytes_per_s_after < 0.9 * r.copy_bytes_per_s) {
    out << "note: the memory copied more slowly after the runs than before: the machine was "
           "busier, so compare these figures with care\n";
  } else if (r.copy_bytes_per_s_after > 1.1 * r.copy_bytes_per_s) {
    out << "note: the memory copied faster after the runs than before: the machine was busier "
           "before (the fractions of the copy bandwidth are against the slower figure), so "
           "compare these figures with care\n";
  }
  out << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-48s %10s %14s %10s %9s %10s %9s\n", "workload",
                ("s (med/" + std::to_string(r.repeat) + ")").c_str(), "Gcell-upd/s", "GB/s",
                "of copy", "Gflop/s", "of peak");
  out << line;
  for (const Measurement& m : r.measurements) {
    std::snprintf(line, sizeof line, "%-48s %10.4g %14.3f %10.1f %8.0f%% %10.1f %8.0f%%\n",
                  m.workload.describe().c_str(), m.median_seconds, m.cell_updates_per_s / 1e9,
                  m.bytes_per_s / 1e9, 100 * m.fraction_of_copy, m.flops_per_s / 1e9,
                  100 * m.fraction_of_peak);
    out << line;
  }
  for (const Measurement& m : r.measurements) {
    if (m.phases.empty()) continue;
    std::string stepping_thread, writer_thread;
    for (const auto& [name, seconds] : m.phases) {
      const bool writer = name.starts_with("writer_");
      std::string label = writer ? name.substr(7) : name;
      std::replace(label.begin(), label.end(), '_', ' ');
      std::string& text = writer ? writer_thread : stepping_thread;
      text += (text.empty() ? "" : ", ") + label + " " + fixed(seconds, 3);
    }
    out << "\nwhere the time went (the repeat nearest the median), s:\n  " << stepping_thread
        << "\n  beside it, the writer thread: " << writer_thread << "\n";
    if (r.statistics) {
      out << "statistics of every image: " << fixed(1e3 * m.statistics_seconds_per_image, 2)
          << " ms an image, " << fixed(100 * m.statistics_fraction_of_stepping, 1)
          << " % of the stepping\n";
    }
  }
  if (r.measurements.size() == 2) {
    out << "\nrate ratio (first / second): "
        << fixed(r.measurements[0].cell_updates_per_s / r.measurements[1].cell_updates_per_s, 3)
        << "\n";
  }
  const CellArithmetic arithmetic = cell_arithmetic(r.problem.stencil.kind);
  out << "(" << bytes_per_cell_update(r.problem.precision)
      << " bytes per cell update: u and v read and written once; " << r.flops_per_cell_update
      << " flops per cell update of " << r.problem.stencil.name() << " in "
      << arithmetic.instructions() << " arithmetic instructions, " << arithmetic.multiply_adds
      << " of them fused multiply-adds, as model/cell_update.hpp writes them: at most "
      << fixed(100.0 * arithmetic.flops() / (2.0 * arithmetic.instructions()), 0)
      << " % of the peak; "
      << (r.io == OutputMode::None ? "stepping only, images not copied out"
                                   : "every image of v written to HDF5")
      << ")\n";
  return out.str();
}

namespace {

// A JSON number; JSON has no infinity or NaN, so those become null.
std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof text, x);
  return std::string(text, end);
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class JsonObject {
 public:
  JsonObject& field(std::string_view key, const std::string& raw) {
    text_ += (text_.empty() ? "" : ", ") + json_string(key) + ": " + raw;
    return *this;
  }
  JsonObject& number(std::string_view key, double x) { return field(key, json_number(x)); }
  JsonObject& integer(std::string_view key, std::int64_t x) {
    return field(key, std::to_string(x));
  }
  JsonObject& string(std::string_view key, std::string_view s) {
    return field(key, json_string(s));
  }
  std::string str() const { return "{" + text_ + "}"; }

 private:
  std::string text_;
};

void add_run_fields(JsonObject& o, const Measurement& m, Precision precision,
                    int flops_per_cell_update) {
  const Workload& w = m.workload;
  std::string all = "[";
  for (std::size_t i = 0; i < m.seconds.size(); ++i)
    all += (i ? ", " : "") + json_number(m.seconds[i]);
  o.integer("rows", w.rows)
      .integer("cols", w.cols)
      .integer("depth", w.depth)
      .integer("batch", w.batch)
      .integer("images", w.images)
      .integer("steps_per_image", w.steps_per_image)
      .integer("steps", w.steps())
      .number("cell_updates", w.cell_updates())
      .number("seconds", m.median_seconds)
      .field("seconds_each", all + "]")
      .number("cell_updates_per_s", m.cell_updates_per_s)
      .integer("bytes_per_cell_update", bytes_per_cell_update(precision))
      .number("bytes_per_s", m.bytes_per_s)
      .number("fraction_of_copy", m.fraction_of_copy)
      .integer("flops_per_cell_update", flops_per_cell_update)
      .number("flops_per_s", m.flops_per_s)
      .number("fraction_of_peak", m.fraction_of_peak);
  if (m.statistics_seconds_per_image > 0) {
    o.number("statistics_seconds_per_image", m.statistics_seconds_per_image)
        .number("statistics_fraction_of_stepping", m.statistics_fraction_of_stepping);
  }
  if (!m.phases.empty()) {
    JsonObject phases;
    for (const auto& [name, seconds] : m.phases) phases.number(name, seconds);
    o.field("phases_seconds", phases.str());
  }
}

}  // namespace

std::string format_json(const BenchReport& r) {
  JsonObject o;
  o.string("preset", r.preset_name)
      .string("backend", r.backend)
      .string("precision", to_string(r.problem.precision))
      .string("stencil", r.problem.stencil.name())
      .string("boundary", to_string(r.problem.boundary))
      .string("io", to_string(r.io))
      .field("statistics", r.statistics ? "true" : "false")
      .integer("threads", r.threads)
      .integer("fuse", r.engine.fuse_steps)
      .integer("repeat", r.repeat)
      .number("copy_bytes_per_s", r.copy_bytes_per_s)
      .number("copy_bytes_per_s_after", r.copy_bytes_per_s_after)
      .string("copy_method", r.copy_method)
      .number("peak_flops_per_s", r.peak_flops_per_s)
      .number("peak_flops_per_s_before", r.peak_flops_per_s_before)
      .number("peak_flops_per_s_after", r.peak_flops_per_s_after)
      .field("peak_disturbed", r.peak_disturbed ? "true" : "false")
      .string("peak_method", r.peak_method)
      .number("feed", r.problem.params.feed)
      .number("kill", r.problem.params.kill)
      .string("cpu_model", r.cpu_model)
      .integer("logical_cpus", r.logical_cpus)
      .number("load_average_before", r.load_before)
      .number("load_average_after", r.load_after);
  std::string verifications = "[";
  for (std::size_t i = 0; i < r.verifications.size(); ++i) {
    const Verification& v = r.verifications[i];
    JsonObject j;
    j.field("passed", v.passed ? "true" : "false")
        .integer("rows", v.rows)
        .integer("cols", v.cols)
        .integer("depth", v.depth)
        .integer("fuse", v.fuse_steps)
        .integer("members", v.members)
        .integer("steps", v.steps)
        .number("u_error", v.u_error)
        .number("v_error", v.v_error)
        .number("tolerance", v.tolerance);
    verifications += (i ? ", " : "") + j.str();
  }
  o.field("verification", verifications + "]");
  // One workload: its figures at the top level. Several: each in "runs", with the rate ratio.
  if (r.measurements.size() == 1) {
    add_run_fields(o, r.measurements.front(), r.problem.precision, r.flops_per_cell_update);
  }
  std::string runs = "[";
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    JsonObject j;
    add_run_fields(j, r.measurements[i], r.problem.precision, r.flops_per_cell_update);
    runs += (i ? ", " : "") + j.str();
  }
  o.field("runs", runs + "]");
  if (r.measurements.size() == 2) {
    o.number("rate_ratio",
             r.measurements[0].cell_updates_per_s / r.measurements[1].cell_updates_per_s);
  }
  return o.str() + "\n";
}

}  // namespace grayscott::app::bench
