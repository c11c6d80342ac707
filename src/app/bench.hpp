// `grayscott bench`: how fast a backend runs a workload, how close that is to the memory
// bandwidth and to the arithmetic peak measured in the same invocation, and proof that the kernel
// measured computes the model (a short run checked against the float64 reference before any figure
// is reported).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/engine.hpp"
#include "model/model.hpp"
#include "reference/reference.hpp"

namespace grayscott::app::bench {

enum class OutputMode { None, Hdf5 };
OutputMode parse_output_mode(std::string_view text);  // "none" or "hdf5"
std::string_view to_string(OutputMode mode);

// The work of one measurement: `batch` simulations of rows x cols (a volume of `depth` such
// planes where depth > 1), each advanced images x steps_per_image steps.
struct Workload {
  std::int64_t rows = 1080, cols = 1920;
  std::int64_t images = 1000, steps_per_image = 32;
  std::int64_t batch = 1;
  std::int64_t depth = 1;

  Grid grid() const { return {rows, cols, depth}; }
  std::int64_t steps() const { return images * steps_per_image; }
  double cell_updates() const;
  // "1080x1920, 1000 images x 32 steps" (+ ", batch of N"); a volume "256x256x256, ..."
  std::string describe() const;
};

// The untimed warm-up run's images when --warmup is not given: a tenth of the workload's, at
// least 1.
std::int64_t default_warmup_images(const Workload& w);

// A named set of workloads measured in one invocation, and how many repeats it defaults to.
struct Preset {
  std::string name;
  std::string description;
  std::vector<Workload> workloads;
  int repeat = 3;
};
const std::vector<Preset>& presets();
// Throws InvalidInput naming the known presets.
const Preset& find_preset(std::string_view name);

// Values given explicitly on the command line; they replace the preset's.
struct WorkloadOverrides {
  std::optional<std::int64_t> rows, cols, images, steps_per_image, batch, depth;
};
// The preset's workloads with the overrides applied. A preset of several workloads (a comparison
// of fixed shapes) accepts only --images and --steps-per-image. Throws InvalidInput.
std::vector<Workload> resolve_workloads(const Preset& preset, const WorkloadOverrides& overrides);

struct BenchRequest {
  std::string preset_name;
  Problem problem;  // rates, stencil, boundary, precision; the grid comes from each workload
  std::vector<Workload> workloads;
  EngineOptions engine;
  OutputMode io = OutputMode::None;
  std::filesystem::path output;  // the HDF5 file written by --io hdf5
  bool overwrite = false;        // an existing `output` replaced (--force); else refused
  // --stats: the run also measures the statistics of every image (the run command's --stats,
  // its default histogram), timed apart from the stepping; needs --io hdf5.
  bool statistics = false;
  int repeat = 3;
  // Images of the warm-up run before the timed repeats; nullopt: a tenth of the images, at least 1.
  std::optional<std::int64_t> warmup_images;

  // Throws InvalidInput naming the first problem found.
  void validate() const;
};

// Bytes a cell update moves at the least: u and v read and written once (16 in single, 32 in
// double precision).
int bytes_per_cell_update(Precision precision);

// --- Verification ------------------------------------------------------------------------------

struct Verification {
  bool passed = false;
  double u_error = 0, v_error = 0;  // relative L2 differences, worst over the members checked
  double tolerance = 0;
  std::int64_t rows = 0, cols = 0, members = 0, steps = 0;
  std::int64_t depth = 1;  // planes of the volume checked (1: a plane)
  int fuse_steps = 0;   // steps per pass of the check: the measured run's (0: the device's default)
  std::string backend;  // what ran the check
  std::string detail;   // what failed, empty when passed
};

// Thrown when a backend's result disagrees with the reference: no figure may be reported.
struct VerificationFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The relative L2 difference allowed after the verification run's steps: the engine tests'
// tolerance (rounding of float32, or of float64, against the float64 reference).
double verification_tolerance(Precision precision);

// Compares a result with the reference state: passes when every value is finite and the relative
// L2 differences of u and v are within `tolerance`.
template <class Real>
Verification compare_with_reference(std::span<const Real> u, std::span<const Real> v,
                                    const reference::State& expected, double tolerance);

// A short run of the backend in `options` compared with the float64 reference: the same stencil,
// boundary, precision, batching and steps per image as the workload, and the same steps per pass
// (the CPU's automatic depth is the one the workload's grid, batch and threads get), from a state
// where every cell differs, on a grid of the same class (the workload's up to 100 rows, or as many
// as give every thread two passes' worth; its columns up to 2048, or 1984 plus their remainder
// modulo 64) so that passes fuse and split as they do when measured. A volume is checked against
// the float64 volume reference on at most 16 of its planes and 64 of its rows (the reference takes
// a second or so), with its columns as a plane's.
Verification verify_engine(const Problem& problem, const Workload& workload,
                           const EngineOptions& options);

struct Measurement {
  Workload workload;
  std::vector<double> seconds;  // each timed repeat
  double median_seconds = 0;
  double cell_updates_per_s = 0;
  double bytes_per_s = 0;
  double fraction_of_copy = 0;
  double flops_per_s = 0;  // cell updates per second x flops_per_cell_update of the stencil
  double fraction_of_peak = 0;  // of the better of the peak probes before and after the runs
  // --io hdf5: where the median repeat's time went (seconds by phase, in the run's order; the
  // writer thread's phases last, beside the stepping thread's).
  std::vector<std::pair<std::string, double>> phases;
  // --stats: the statistics' time against the stepping's, in the repeat nearest the median.
  double statistics_seconds_per_image = 0;
  double statistics_fraction_of_stepping = 0;
};

struct BenchReport {
  std::string preset_name;
  std::string backend;     // the backend that ran
  bool on_device = false;  // it steps in a device's memory (else host threads)
  Problem problem;
  EngineOptions engine;
  int threads = 0;  // CPU threads used (the copy ran with the same)
  OutputMode io = OutputMode::None;
  bool statistics = false;
  int repeat = 0;
  double copy_bytes_per_s = 0;        // before the timed runs: the roofline "of copy" is against
  double copy_bytes_per_s_after = 0;  // after them: a machine whose memory slowed meanwhile shows
  std::string copy_method;
  // The arithmetic roofline: the best of a probe before the timed runs and one after (a probe
  // disturbed by other work on the machine measures too little), and what one cell update
  // computes (model/cell_update.hpp's count for the stencil).
  double peak_flops_per_s = 0;
  double peak_flops_per_s_before = 0, peak_flops_per_s_after = 0;
  std::string peak_method;
  // A workload computed faster than the peak measured: both probes were disturbed, and the
  // fractions of the peak mean nothing.
  bool peak_disturbed = false;
  // The machine: its CPU (/proc/cpuinfo's model name), logical CPUs, and the load average (over
  // a minute) before and after, which tells a busy machine.
  std::string cpu_model;
  int logical_cpus = 0;
  double load_before = -1, load_after = -1;
  int flops_per_cell_update = 0;
  std::vector<Verification> verifications;  // one per workload
  std::vector<Measurement> measurements;    // one per workload
};

// Verifies, measures the copy bandwidth and the arithmetic peak, warms up, times each workload
// `repeat` times, then measures the copy bandwidth again.
// Throws InvalidInput for a bad request, VerificationFailed when a result is wrong.
BenchReport run_benchmark(const BenchRequest& request);

double median(std::vector<double> values);
std::string format_table(const BenchReport& report);
std::string format_json(const BenchReport& report);

}  // namespace grayscott::app::bench
