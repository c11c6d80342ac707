// The one driver: every way grayscott computes images (`run`, `sweep`, both under mpirun, the
// Python module) is a job, its members (one simulation, or a sweep's many, stepped in batches)
// times its placement (one process alone; MPI ranks that split one grid into blocks; MPI ranks
// that split the members). run_job takes any job around the one image loop: it validates, picks
// the backend, checks the file it continues or claims the path, opens the file, loads each batch's
// state, runs the loop, and says how the job ended, with the same words and the same rate
// whatever the placement. The placement answers only what differs: how the processes agree, what
// this process steps, and how it opens the file; the job's file (a run's or a sweep's layout)
// answers how images are written and checkpoints read.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/image_loop.hpp"

namespace grayscott {
class Backend;  // engine/registry.hpp
}
namespace grayscott::io {
struct RunFileAccess;  // io/files/run_file.hpp
}

namespace grayscott::pipeline {

// Runs `f`; returns its error, if any, for agreement among ranks (mpi::agree_on_errors).
template <class F>
std::exception_ptr capture_error(F&& f) {
  try {
    f();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

// The message of an error ("an error ended the run" when it has none).
std::string error_message(std::exception_ptr error);

// Where one process's block lies in a grid (the whole grid for a single process); a volume's
// block also has planes [plane_begin, plane_begin + planes) (planes = 0: every plane).
struct BlockPlace {
  std::int64_t row_begin = 0, rows = 0, col_begin = 0, cols = 0;
  std::int64_t plane_begin = 0, planes = 0;
  std::int64_t cells() const { return (planes > 0 ? planes : 1) * rows * cols; }
};

// Where a run's time went, in seconds (see LoopTimes for the loop's share).
struct RunTimes {
  double engine = 0;         // making the engine: allocation and first touch of its state
  double initial_state = 0;  // the initial state or the checkpoint into the engine
  double file_open = 0;      // creating (or reopening) the file
  double loop = 0;           // the image loop, wall time
  LoopTimes in_loop;
  double file_close = 0;  // the final status, the companion .xmf, closing the file
};

// How a job ended, the same on every process of it.
struct JobSummary {
  RunTimes times;
  std::string backend;
  std::int64_t members = 1, batches = 0, batch_size = 1;
  std::int64_t first_image = 0;        // images the file held already (a continued run)
  std::int64_t images_written = 0;     // images in a run's file at the end
  std::int64_t nonfinite_members = 0;  // a sweep's members whose values became non-finite
  double seconds = 0;
  double cell_updates_per_s = 0;  // of this invocation's images
  bool completed = false;
  int signal = 0;                      // the stop signal that ended the job, if any
  std::int64_t checkpoint_images = 0;  // a run: images done at the file's newest checkpoint
  // A run: the step of the state its engine holds at the end, past its file's last image where
  // non-finite values stopped it (the state that had them).
  std::int64_t state_step = 0;
  std::string status;                  // "complete", or why the job stopped (the file's status)
  bool settled = false;  // a run ended early by design: --until-steady found it settled
};

// What one batch of a job is stepped on: a local engine of its members, or this rank's block of
// one member's grid split over ranks.
template <class Real>
struct Batch {
  std::unique_ptr<Engine<Real>> engine;  // a local engine made for the batch (none: given)
  std::unique_ptr<ImageSource<Real>> source;
  std::size_t cells = 0;  // this process's cells of one member
  // This process's u and v of every member, member after member (a null field is not read).
  std::function<void(Real* u, Real* v)> read_state;
  std::function<void(std::size_t)> freeze;  // stop stepping a member that settled
};

// Where a member of a continued job stood towards settling at its checkpoint: the images in a
// row before it whose change stayed below the tolerance, and whether it had settled.
struct SteadyStart {
  std::int64_t calm_images = 0;
  bool settled = false;
};

// The file a job writes: a run's layout (one simulation) or a sweep's (members side by side),
// made for a request by pipeline/job_files.hpp. Where processes share it, each calls every
// function for its own members (validate, check_or_claim, open and finish on all of them).
template <class Real>
class JobFile {
 public:
  virtual ~JobFile() = default;
  // The request's own checks; throws InvalidInput naming the problem.
  virtual void validate() = 0;
  // Before the file is opened: a continued file's state checked (nothing to resume, or a file the
  // placement cannot continue), or, on the process that `claims`, the new file's path claimed.
  virtual void check_or_claim(bool claims, bool shared) = 0;
  // Whether some of the file's chunks must be placed before processes write it together.
  virtual bool needs_chunks_placed() const = 0;
  virtual void place_chunks() = 0;
  // Images each member of the job has done already (a continued file; else 0).
  virtual std::int64_t start_image(std::int64_t member) const = 0;
  // Where a member stood towards settling at start_image (a continued file made with
  // --until-steady; else nothing).
  virtual SteadyStart steady_start(std::int64_t member, const SteadyCriterion& criterion) const {
    (void)member;
    (void)criterion;
    return {};
  }
  // Opens (creates or reopens) the file, recording `backend`, as this process's placement says
  // (alone: the default access; its block and whether it writes the shared parts otherwise).
  virtual void open(const std::string& backend, const io::RunFileAccess& access) = 0;
  // This process's block of members [first, first + count)'s newest checkpoint, member after
  // member (rows = 0 in `block`: the whole grid).
  virtual void read_checkpoint(std::int64_t first, std::int64_t count, const BlockPlace& block,
                               std::vector<Real>& u, std::vector<Real>& v) const = 0;
  // A run's custom initial state (InitialKind::Custom): stored once the file is open, before any
  // image (this process's block), and read back by a run continued from its start.
  virtual void write_initial_state(const Real* u, const Real* v) {
    (void)u;
    (void)v;
    throw std::logic_error("only a run's file stores a custom initial state");
  }
  virtual void read_initial_state(const BlockPlace& block, std::vector<Real>& u,
                                  std::vector<Real>& v) const {
    (void)block;
    (void)u;
    (void)v;
    throw std::logic_error("only a run's file stores a custom initial state");
  }
  // The sink for members [first, first + count); `check_before_handover`: processes that write
  // together check each image before it goes to the writer, where they can agree.
  virtual std::unique_ptr<ImageSink<Real>> sink(std::int64_t first, std::int64_t count,
                                                std::size_t cells, bool check_before_handover) = 0;
  // Members whose values became non-finite (a sweep's; the first non-finite image per member),
  // merged over processes by the placement.
  virtual std::vector<std::int64_t>* nonfinite_images() { return nullptr; }
  // Records the status and closes the file. Returns the job's error as it is to be reported:
  // `error` itself or, where the file could not record how the job ended (a disk without room
  // even for the status), one that says so and what to do.
  virtual std::exception_ptr finish(const std::string& status, std::exception_ptr error) = 0;
  virtual std::int64_t images_written() const = 0;     // a run file's images at the end
  virtual std::int64_t checkpoint_images() const = 0;  // a run: its sinks' newest checkpoint
  virtual std::uint64_t bytes_per_member() const = 0;  // memory one member takes (batch sizing)
};

// Throws InvalidInput unless `images` and `steps_per_image` are positive and the run's last
// step, images x steps_per_image, stays within 2^53 (a step count a double's time still tells
// apart, far within an int64's).
void check_image_schedule(std::int64_t images, std::int64_t steps_per_image);

struct Job;

// This process's block (rows = 0: the whole grid) of a run's custom initial state
// (InitialKind::Custom): read from the file a continued run stores it in, else as the front end
// hands it over (Job::custom_initial).
template <class Real>
void custom_initial_state(const Job& job, const JobFile<Real>& file, const BlockPlace& block,
                          std::vector<Real>& u, std::vector<Real>& v);

// A job's members and images, as any front end asks for them.
struct Job {
  Problem problem;  // problem.params' feed and kill replaced per member
  std::vector<Parameters> member_params;
  std::vector<InitialState> member_initial;  // each member's initial state (its seed)
  // A run's custom initial state (InitialKind::Custom) that a new file starts from, where the
  // engine that steps it does not hold it already: fills this process's block of u and v (of
  // the run's precision). A continued run reads it from its file instead.
  std::function<void(void* u, void* v)> custom_initial;
  std::int64_t images = 0, steps_per_image = 0;
  FieldSet fields;
  EngineOptions engine;
  bool quiet = false;
  bool resume = false;
  SavePolicy save;
  AnalysisRequest analysis;
  bool one_simulation = true;  // a run: stops at its first non-finite image, and once settled
  std::uint64_t max_batch_bytes = 0;  // 0: default_batch_memory()
  // After each image: (member-images done, member-images in the job) of this process's members,
  // counting those a continued file held (a run: images done, images).
  std::function<void(std::int64_t, std::int64_t)> on_progress;
  std::function<std::string(const LoopImage&)> on_image;
  std::int64_t members() const { return static_cast<std::int64_t>(member_params.size()); }
};

// The memory one process's batches may take (see default_batch_memory), `processes_per_node`
// sharing a node.
std::uint64_t batch_memory_limit(const Job& job, const Backend& backend, int processes_per_node);

// Where a job runs and how its processes act together. Alone is the trivial case: nothing to
// agree on, every member here, the whole grid.
template <class Real>
class Placement {
 public:
  virtual ~Placement() = default;
  virtual int rank() const { return 0; }
  bool root() const { return rank() == 0; }
  // Runs `step`; when it failed on any process, every process throws the same error.
  virtual void agree(const std::function<void()>& step) { step(); }
  // Every process's error (or none) agreed on: throws the first process's.
  virtual void agree_on(std::exception_ptr error) {
    if (error) std::rethrow_exception(error);
  }
  // The placement's own checks of a job (e.g. options that only mean something over ranks).
  virtual void validate(const Job& job) { (void)job; }
  // The backend every process of the job uses, from the job's options, which it settles for this
  // process (backend, device, threads); says on stderr why `auto` passed one over, unless quiet.
  virtual const Backend& choose_backend(Job& job) = 0;
  // Throws OutOfMemory, agreed on, when the state this process would hold does not fit in its
  // memory (a run's whole grid, by default; a sweep's batches are sized to fit instead). Nothing
  // to check where the front end made the engine.
  virtual void check_state_memory(const Job& job) const;
  // The members [begin, end) this process steps.
  virtual std::int64_t members_begin(const Job& job) const {
    (void)job;
    return 0;
  }
  virtual std::int64_t members_end(const Job& job) const { return job.members(); }
  // The memory a batch of this process may take.
  virtual std::uint64_t batch_memory(const Job& job, const Backend& backend) const {
    return batch_memory_limit(job, backend, 1);
  }
  // Whether the file is shared by processes (opened, checked and finished together).
  virtual bool shares_file() const { return false; }
  virtual io::RunFileAccess file_access();
  // Whether the processes check each image before the hand-over to the writer (where they can
  // agree on a stop), not the writer thread.
  virtual bool checks_before_handover() const { return false; }
  // Whether making a batch is collective (a grid split over ranks): its errors are then agreed on.
  virtual bool collective_batches() const { return false; }
  // The batch of members [first, first + count) of `job`, with its state loaded: the file's
  // checkpoint after `from_image` images, or each member's initial state when from_image is 0.
  // By default a local engine of the members (made, or the one given).
  virtual Batch<Real> make_batch(const Job& job, std::int64_t first, std::int64_t count,
                                 std::int64_t from_image, const JobFile<Real>& file,
                                 RunTimes& times);
  // Called once this process has opened the file, before its first batch steps (the test
  // suite's failure injection under MPI).
  virtual void before_members() {}
  // How the loop's processes agree on every image.
  virtual Agreement& loop_agreement() { return alone_; }
  virtual void adjust_plan(LoopPlan& plan) { (void)plan; }
  // Whether the progress bar is drawn here.
  virtual bool draws_progress() const { return true; }
  // An error as the job's status names it (over ranks: with the rank it happened on).
  virtual std::string error_text(std::exception_ptr error) const { return error_message(error); }
  // The job's status from this process's: the first process's that did not complete.
  virtual std::string agreed_status(const std::string& local, bool complete) {
    (void)complete;
    return local;
  }
  // Totals over the processes, for the summary.
  virtual std::int64_t member_images(std::int64_t local) { return local; }
  virtual std::int64_t most(std::int64_t local) { return local; }
  virtual double slowest(double seconds) { return seconds; }
  virtual void merge_nonfinite(std::vector<std::int64_t>& nonfinite) { (void)nonfinite; }
  // What the placement tells the user after the job (root, not quiet), e.g. its halo traffic.
  virtual void report() {}

 protected:
  Agreement alone_;
  Engine<Real>* given_ = nullptr;  // the engine to step, where the front end made it
};

// One process alone, its engine made by run_job for each batch, or given (the Python module's
// Simulation: one member, the engine holding the state to start from).
template <class Real>
class Alone final : public Placement<Real> {
 public:
  Alone() = default;
  explicit Alone(Engine<Real>& engine) { this->given_ = &engine; }
  const Backend& choose_backend(Job& job) override;
};

// Runs `job` writing `file`, placed as `placement` says. Throws InvalidInput (bad request, on
// every process alike) before anything is computed; errors while computing or writing are thrown
// once the file records how the job ended. A stop signal ends it with summary.signal set.
template <class Real>
JobSummary run_job(Job job, JobFile<Real>& file, Placement<Real>& placement);

// "interrupted by SIGTERM after image N" and the like.
std::string interrupted_status(int signal, std::int64_t images_done);

}  // namespace grayscott::pipeline
