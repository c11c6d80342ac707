// The one driver's placements over MPI ranks: one grid split into blocks (`run` under mpirun) and
// a sweep's members split over the ranks (`sweep` under mpirun). What both share is how the ranks
// agree (OverRanks); what differs is what a rank steps and how it opens the file.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "engine/registry.hpp"
#include "io/files/hdf5.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/distributed_engine.hpp"
#include "mpi/parallel_output.hpp"
#include "pipeline/distributed_run.hpp"
#include "pipeline/distributed_sweep.hpp"
#include "pipeline/job_files.hpp"
#include "pipeline/state_memory.hpp"
#include "pipeline/under_mpi.hpp"

namespace grayscott::pipeline {

namespace {

// What every placement over the ranks of a session shares: errors and statuses agreed on, one
// progress bar (rank 0's), totals over the ranks, one shared file.
template <class Real>
class OverRanks : public Placement<Real> {
 public:
  explicit OverRanks(const mpi::Session& session) : session_(session) {}
  int rank() const override { return session_.rank(); }
  void agree(const std::function<void()>& step) override {
    mpi::agree_on_errors(session_.world(), capture_error(step));
  }
  void agree_on(std::exception_ptr error) override {
    mpi::agree_on_errors(session_.world(), error);
  }
  bool shares_file() const override { return true; }
  bool draws_progress() const override { return session_.rank() == 0; }
  // As mpi::agree_on_errors reports it: a failure with the rank it happened on (bad input, the
  // same on every rank, without).
  std::string error_text(std::exception_ptr error) const override {
    const std::string message = error_message(error);
    try {
      if (error) std::rethrow_exception(error);
    } catch (const InvalidInput&) {
      return message;
    } catch (...) {
    }
    return session_.size() > 1 ? "rank " + std::to_string(session_.rank()) + ": " + message
                               : message;
  }
  // The status of the lowest rank that did not complete, or "complete" on every rank.
  std::string agreed_status(const std::string& local, bool complete) override {
    const MPI_Comm comm = session_.world();
    const int rank = session_.rank();
    int mine = complete ? INT_MAX : rank, first = INT_MAX;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX) return "complete";
    int length = rank == first ? static_cast<int>(local.size()) : 0;
    MPI_Bcast(&length, 1, MPI_INT, first, comm);
    std::string status = rank == first ? local : std::string(static_cast<std::size_t>(length), ' ');
    MPI_Bcast(status.data(), length, MPI_CHAR, first, comm);
    return status;
  }
  std::int64_t most(std::int64_t local) override {
    MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_INT64_T, MPI_MAX, session_.world());
    return local;
  }
  double slowest(double seconds) override {
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, session_.world());
    return seconds;
  }

 protected:
  // Every rank needs MPI_THREAD_SERIALIZED at least: the loop's writer thread calls MPI-IO.
  void check_thread_level() const {
    if (session_.thread_level() < MPI_THREAD_SERIALIZED) {
      throw std::runtime_error(
          "this MPI library does not provide MPI_THREAD_SERIALIZED, which the writer thread "
          "needs");
    }
  }
  const mpi::Session& session_;
};

// Failure injection for the test suite only: GRAYSCOTT_TEST_FAIL_RANK=r makes rank r fail. A run
// fails at image GRAYSCOTT_TEST_FAIL_IMAGE (default 0), while stepping
// (GRAYSCOTT_TEST_FAIL_STAGE=step) or before writing (default); a sweep before its first member.
// Never set in production; costs one getenv per job.
struct InjectedFailure {
  bool armed = false;
  std::int64_t image = 0;
  bool while_stepping = false;

  static InjectedFailure from_environment(int rank) {
    InjectedFailure f;
    const char* fail_rank = std::getenv("GRAYSCOTT_TEST_FAIL_RANK");
    if (!fail_rank || std::atoi(fail_rank) != rank) return f;
    f.armed = true;
    if (const char* image = std::getenv("GRAYSCOTT_TEST_FAIL_IMAGE")) f.image = std::atoll(image);
    if (const char* stage = std::getenv("GRAYSCOTT_TEST_FAIL_STAGE")) {
      f.while_stepping = std::string(stage) == "step";
    }
    return f;
  }
  void check(std::int64_t at_image, bool stepping) const {
    if (armed && at_image == image && stepping == while_stepping) {
      throw std::runtime_error("injected failure at image " + std::to_string(at_image));
    }
  }
};

// The halo depth when none is asked for, the backend's default for the smallest block (a device:
// one exchange per step; the CPU fuses the steps after each exchange); every rank must use the
// same, hence the minimum over ranks. Collective.
int automatic_halo_depth(const Problem& problem, const EngineOptions& engine,
                         const mpi::Session& session, mpi::ProcessGrid process_grid,
                         const Backend& backend) {
  if (problem.grid.volume()) return 1;  // a volume's blocks exchange every step
  const Grid block{problem.grid.rows / process_grid.rows, problem.grid.cols / process_grid.cols};
  int depth =
      backend.default_halo_depth(block, problem.precision, threads_per_rank(engine, session));
  MPI_Allreduce(MPI_IN_PLACE, &depth, 1, MPI_INT, MPI_MIN, session.world());
  return depth;
}

// Each image's steps begin with an exchange: a halo deeper than they are would carry layers no
// step reads, and ask for blocks as thick (the results are the same at any depth).
int at_most_an_images_steps(int halo_depth, const Job& job) {
  return static_cast<int>(std::min<std::int64_t>(halo_depth, job.steps_per_image));
}

// The ranks along each axis: the decomposition asked for, or the automatic choice; every block
// at least as thick as the halo. Throws InvalidInput.
mpi::ProcessGrid process_grid_for(const DistributedRunOptions& options, int ranks,
                                  const Grid& grid) {
  std::optional<mpi::ProcessGrid> forced;
  if (!options.decomposition.empty()) forced = mpi::parse_decomposition(options.decomposition);
  return mpi::choose_process_grid(ranks, grid, forced, std::max(options.halo_depth, 1));
}

// Not silently dropped: the CPU backend's halos are in host memory.
void refuse_gpu_aware_mpi_on_the_cpu(const DistributedRunOptions& options,
                                     const EngineOptions& engine) {
  if (options.gpu_aware_mpi == Toggle::On && engine.backend == "cpu") {
    throw InvalidInput(
        "gpu-aware-mpi on: the cpu backend's halos are in host memory (the option passes a "
        "device backend's halos to MPI in device memory, with --backend cuda or auto)");
  }
}

// Whether the blocks of `backend` pass their halo messages to MPI in device memory: asked for, or
// (auto) where the MPI library says it reads that memory. Rank 0 says when `on` has nothing to do
// (auto chose a backend whose halos are in host memory), unless `quiet`.
bool messages_in_device_memory(const DistributedRunOptions& options, const Backend& backend,
                               const mpi::Session& session, bool quiet) {
  const std::string_view device_memory = backend.mpi_device_memory();
  if (options.gpu_aware_mpi == Toggle::On && device_memory.empty() && session.rank() == 0 &&
      !quiet) {
    std::fprintf(stderr,
                 "grayscott: gpu-aware-mpi on: the %s backend's halos are in host memory; the "
                 "option has nothing to do\n",
                 std::string(backend.name()).c_str());
  }
  return !device_memory.empty() &&
         (options.gpu_aware_mpi == Toggle::On || (options.gpu_aware_mpi == Toggle::Auto &&
                                                  mpi::library_reads_device_memory(device_memory)));
}

// Where a grid's blocks step, the same for every rank.
struct BlockPlacement {
  RankPlacement rank;                      // the backend, and this rank's device
  bool messages_in_device_memory = false;  // a device backend with an MPI that reads its memory
  bool overlap_writes = false;             // images written while the next is computed
  bool on_device() const { return rank.backend->on_device(); }
};

// Each rank holds a block, not the whole grid: the largest (the first along each axis), with its
// halo on every side; the node's ranks share its host memory, a device is this rank's; beside it,
// `images_held` fields of the block on their way to the file (held_images). Throws OutOfMemory.
void check_block_fits(const Problem& problem, const mpi::ProcessGrid& process_grid, int halo_depth,
                      const EngineOptions& options, const BlockPlacement& placement,
                      const mpi::Session& session, int images_held = 0) {
  const auto largest = [&](std::int64_t cells, int parts) {
    return mpi::block_extent(cells, parts, 0).size + 2 * halo_depth;
  };
  Problem block = problem;
  block.grid.rows = largest(problem.grid.rows, process_grid.rows);
  block.grid.cols = largest(problem.grid.cols, process_grid.cols);
  if (problem.grid.volume()) block.grid.depth = largest(problem.grid.depth, process_grid.planes);
  // The backend and device the ranks agreed on, not the request's (auto, --device).
  EngineOptions engine = options;
  engine.backend = std::string(placement.rank.backend->name());
  if (placement.on_device()) engine.device = placement.rank.device;
  if (placement.on_device()) {
    // The state on this rank's device; the images in the host memory the node's ranks share.
    check_state_fits(block, 1, engine, 1);
    if (images_held > 0) check_images_fit(block, 1, images_held, session.local_size());
  } else {
    check_state_fits(block, 1, engine, session.local_size(), images_held);
  }
}

// This rank's block, on host threads or on the device its node-local rank picks.
template <class Real>
mpi::SubdomainFactory<Real> block_factory(const Problem& problem, const EngineOptions& engine,
                                          const mpi::Session& session, BlockPlacement placement,
                                          int* device) {
  SubdomainOptions options;
  if (placement.on_device()) {
    *device = options.device = placement.rank.device;
    options.messages_in_device_memory = placement.messages_in_device_memory;
  } else {
    options.threads = threads_per_rank(engine, session);
  }
  const Backend* backend = placement.rank.backend;
  return [problem, options, backend](const LocalLayout& layout, GlobalEdges edges) {
    return backend->make_block<Real>(problem, layout, edges, options);
  };
}

// Where this rank's block lies in the grid: its rows and columns, and a volume's planes (a
// plane's block has planes = 0).
BlockPlace place_of(const mpi::Decomposition& decomposition, const LocalLayout& layout) {
  return {decomposition.rows().begin,
          layout.rows,
          decomposition.cols().begin,
          layout.cols,
          layout.volume() ? decomposition.planes().begin : 0,
          layout.planes};
}

// This rank's block as the image loop's source: stepping is synchronous (halo exchanges), and an
// image is read straight from the block.
template <class Real>
class BlockSource final : public ImageSource<Real> {
 public:
  BlockSource(mpi::DistributedEngine<Real>& engine, MPI_Comm comm, const InjectedFailure& injected,
              std::int64_t first_image)
      : engine_(engine), comm_(comm), injected_(injected), image_(first_image) {}
  bool asynchronous() const override { return false; }
  void advance(std::int64_t steps) override {
    // A failure while stepping cannot be agreed on: the neighbours may be waiting for this
    // rank's halo. It ends the job.
    try {
      injected_.check(image_, true);
      engine_.advance(steps);
    } catch (const std::exception& e) {
      mpi::abort_all(comm_, e.what());
    }
    ++image_;
  }
  void capture(FieldSet) override {}
  void gather(ImageSlot<Real>& slot, FieldSet fields) override {
    engine_.read_owned(fields.u ? slot.u.data() : nullptr, fields.v ? slot.v.data() : nullptr);
    injected_.check(slot.index, false);
  }

 private:
  mpi::DistributedEngine<Real>& engine_;
  MPI_Comm comm_;
  InjectedFailure injected_;
  std::int64_t image_;
};

// One grid split into blocks over the ranks (mpi::Decomposition), stepped by
// mpi::DistributedEngine, written collectively into one file with the single-process layout.
//
// Threads: the main thread steps and exchanges halos; the loop's writer thread writes each image
// collectively (parallel HDF5, only ever from that thread). With overlap_writes it does so while
// the next image is computed (MPI_THREAD_MULTIPLE; the file's communicator is HDF5's own
// duplicate of the decomposition's); otherwise the main thread waits for each write, so that one
// thread at a time is inside MPI. Overlap pays only where the writer has a core of its own: its
// collective waits spin, and on cores that also compute they cost more than the write (2.8x
// slower on a 2-core machine with 2 ranks), so `auto` overlaps only when each rank leaves a core
// free. The ranks agree after each image on whether to go on, checkpoint and flush, so the
// collective writes always match.
template <class Real>
class GridOverRanks final : public OverRanks<Real> {
 public:
  GridOverRanks(const mpi::Session& session, const DistributedRunOptions& options)
      : OverRanks<Real>(session),
        options_(options),
        injected_(InjectedFailure::from_environment(session.rank())) {}

  void validate(const Job& job) override {
    this->check_thread_level();
    if (job.analysis.classify && this->session_.size() > 1) {
      throw InvalidInput(
          "classify: over MPI ranks each rank holds a block of the grid, and a pattern is the "
          "whole image's; classify the file's images afterwards (gs.classify), or run on one "
          "rank");
    }
    refuse_gpu_aware_mpi_on_the_cpu(options_, job.engine);
    options_.halo_depth = at_most_an_images_steps(options_.halo_depth, job);
    process_grid_ = process_grid_for(options_, this->session_.size(), job.problem.grid);
  }

  const Backend& choose_backend(Job& job) override {
    const mpi::Session& session = this->session_;
    placement_.rank = agree_on_backend(job.engine, session, &job.problem);
    if (options_.halo_depth == 0) {
      options_.halo_depth = automatic_halo_depth(job.problem, job.engine, session, process_grid_,
                                                 *placement_.rank.backend);
    }
    options_.halo_depth = at_most_an_images_steps(options_.halo_depth, job);
    placement_.messages_in_device_memory =
        messages_in_device_memory(options_, *placement_.rank.backend, session, job.quiet);
    // Every rank decides alike: the writes are collective, but whether a rank waits for them is
    // its own affair; agreeing keeps the summary true for all.
    placement_.overlap_writes =
        session.thread_level() >= MPI_THREAD_MULTIPLE &&
        (options_.overlap_writes == Toggle::On ||
         (options_.overlap_writes == Toggle::Auto &&
          !mpi::any_rank(session.world(),
                         !writer_has_a_core(placement_.on_device(), job.engine, session))));
    tag_ = shared_tag(session.world());
    return *placement_.rank.backend;
  }

  void check_state_memory(const Job& job) const override {
    // A block's statistics are measured from its images, which then carry u and v.
    const bool statistics = job.analysis.statistics.has_value();
    check_block_fits(job.problem, process_grid_, options_.halo_depth, job.engine, placement_,
                     this->session_,
                     held_images(statistics ? FieldSet{true, true} : job.fields, statistics));
  }

  bool collective_batches() const override { return true; }
  Batch<Real> make_batch(const Job& job, std::int64_t, std::int64_t, std::int64_t from_image,
                         const JobFile<Real>& file, RunTimes&) override {
    const mpi::Session& session = this->session_;
    decomposition_.emplace(session.world(), job.problem.grid, job.problem.boundary, process_grid_);
    engine_.emplace(*decomposition_, options_.halo_depth,
                    block_factory<Real>(job.problem, job.engine, session, placement_, &device_));
    const BlockPlace block = place_of(*decomposition_, engine_->layout());
    if (from_image > 0) {
      // This rank's block of the checkpoint: the file is read by each rank on its own, before it
      // is opened for writing together.
      std::vector<Real> u, v;
      file.read_checkpoint(0, 1, block, u, v);
      engine_->load(u, v);
    } else if (job.member_initial.front().kind == InitialKind::Custom) {
      std::vector<Real> u, v;
      custom_initial_state(job, file, block, u, v);
      engine_->load(u, v);
    } else {
      engine_->load_initial(job.member_initial.front());
    }
    agreement_.emplace(decomposition_->comm());
    Batch<Real> batch;
    batch.source = std::make_unique<BlockSource<Real>>(*engine_, decomposition_->comm(), injected_,
                                                       from_image);
    batch.cells = static_cast<std::size_t>(block.cells());
    batch.read_state = [this](Real* u, Real* v) { engine_->read_owned(u, v); };
    batch.freeze = [](std::size_t) {};
    return batch;
  }
  io::RunFileAccess file_access() override {
    output_.emplace(*decomposition_);
    io::RunFileAccess access = output_->access();
    access.partial_tag = tag_;
    return access;
  }
  bool checks_before_handover() const override { return true; }
  Agreement& loop_agreement() override { return *agreement_; }
  void adjust_plan(LoopPlan& plan) override {
    // Collective flushes cost every rank: at most once a second.
    plan.save.durable_every_seconds = std::max(plan.save.durable_every_seconds, 1.0);
    plan.wait_for_each_write = !placement_.overlap_writes;
  }
  void report() override {
    const mpi::HaloStatistics halo = engine_->statistics();
    const auto& g = decomposition_->process_grid();
    const std::string where =
        "on " + std::string(placement_.rank.backend->name()) +
        (!placement_.on_device()
             ? std::string()
             : " devices (rank 0: device " + std::to_string(device_) + "), halos through " +
                   (placement_.messages_in_device_memory ? "device memory (GPU-aware MPI)"
                                                         : "pinned host memory"));
    std::fprintf(stderr,
                 "decomposition %s over %d ranks %s, halo depth %d: %llu halo bytes per "
                 "exchange from rank 0 (%d message%s), %lld exchanges, %.3f s waiting on halos; "
                 "images written %s\n",
                 g.text().c_str(), this->session_.size(), where.c_str(), options_.halo_depth,
                 static_cast<unsigned long long>(halo.bytes_sent_per_exchange),
                 halo.messages_per_exchange, halo.messages_per_exchange == 1 ? "" : "s",
                 static_cast<long long>(halo.exchanges), halo.seconds_waiting,
                 placement_.overlap_writes ? "while stepping" : "between steps");
  }

 private:
  DistributedRunOptions options_;  // its halo depth resolved by choose_backend
  InjectedFailure injected_;
  mpi::ProcessGrid process_grid_;
  BlockPlacement placement_;
  std::string tag_;
  int device_ = -1;
  std::optional<mpi::Decomposition> decomposition_;
  std::optional<mpi::DistributedEngine<Real>> engine_;
  std::optional<MpiAgreement> agreement_;
  std::optional<mpi::ParallelOutput> output_;
};

// A sweep's members split over the ranks in consecutive blocks: each rank runs its own in batches
// (on its share of the node's cores, or on its GPU) and writes their images into one file through
// parallel HDF5. Members are independent, so the ranks do not communicate while the sweep runs:
// each writes independently from its writer thread as images come, and they meet only to create
// and to close the file. The file holds the same values as a single process's.
template <class Real>
class MembersOverRanks final : public OverRanks<Real> {
 public:
  explicit MembersOverRanks(const mpi::Session& session) : OverRanks<Real>(session) {}
  void validate(const Job&) override { this->check_thread_level(); }
  const Backend& choose_backend(Job& job) override {
    const mpi::Session& session = this->session_;
    const RankPlacement placement = agree_on_backend(job.engine, session);
    job.engine.backend = placement.backend->name();
    if (placement.backend->on_device())
      job.engine.device = placement.device;
    else
      job.engine.threads = threads_per_rank(job.engine, session);
    tag_ = shared_tag(session.world());
    return *placement.backend;
  }
  std::int64_t members_begin(const Job& job) const override { return mine(job).begin; }
  std::int64_t members_end(const Job& job) const override { return mine(job).end(); }
  std::uint64_t batch_memory(const Job& job, const Backend& backend) const override {
    return batch_memory_limit(job, backend, this->session_.local_size());
  }
  io::RunFileAccess file_access() override {
    file_access_.emplace(mpi::collective_file_access(this->session_.world()));
    io::RunFileAccess access;
    access.file_access = file_access_->get();
    access.writes_companions = this->root();
    access.partial_tag = tag_;
    return access;
  }
  void before_members() override {
    const char* fail_rank = std::getenv("GRAYSCOTT_TEST_FAIL_RANK");
    if (fail_rank && std::atoi(fail_rank) == this->rank())
      throw std::runtime_error("injected failure before the first member");
  }
  std::int64_t member_images(std::int64_t local) override {
    MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_INT64_T, MPI_SUM, this->session_.world());
    return local;
  }
  void merge_nonfinite(std::vector<std::int64_t>& nonfinite) override {
    MPI_Allreduce(MPI_IN_PLACE, nonfinite.data(), static_cast<int>(nonfinite.size()), MPI_INT64_T,
                  MPI_MAX, this->session_.world());
  }

 private:
  mpi::Extent mine(const Job& job) const {
    return mpi::block_extent(job.members(), this->session_.size(), this->session_.rank());
  }
  std::string tag_;
  std::optional<io::h5::Id> file_access_;
};

template <class Real>
RunSummary run_over_ranks(const RunRequest& request, const DistributedRunOptions& options,
                          const mpi::Session& session) {
  // The placement outlives the file: the file closes while the decomposition's communicator lives.
  GridOverRanks<Real> placement(session, options);
  const std::unique_ptr<JobFile<Real>> file = run_file_of<Real>(request);
  return run_job(job_of(request), *file, placement);
}

template <class Real>
SweepSummary sweep_over_ranks(const SweepRequest& request, const mpi::Session& session) {
  MembersOverRanks<Real> placement(session);
  const std::unique_ptr<JobFile<Real>> file = sweep_file_of<Real>(request);
  return run_job(job_of(request), *file, placement);
}

}  // namespace

RunSummary execute_distributed_run(const RunRequest& request, const DistributedRunOptions& options,
                                   const mpi::Session& session) {
  return request.problem.precision == Precision::Single
             ? run_over_ranks<float>(request, options, session)
             : run_over_ranks<double>(request, options, session);
}

SweepSummary execute_distributed_sweep(const SweepRequest& request, const mpi::Session& session) {
  return request.problem.precision == Precision::Single
             ? sweep_over_ranks<float>(request, session)
             : sweep_over_ranks<double>(request, session);
}

namespace {

template <class Real>
class DistributedGridEngine final : public Engine<Real> {
 public:
  DistributedGridEngine(const Problem& problem, const EngineOptions& options,
                        const mpi::Session& session, const DistributedRunOptions& over_ranks) {
    const MPI_Comm world = session.world();
    mpi::ProcessGrid process_grid;
    mpi::agree_on_errors(world, capture_error([&] {
                           refuse_gpu_aware_mpi_on_the_cpu(over_ranks, options);
                           process_grid =
                               process_grid_for(over_ranks, session.size(), problem.grid);
                         }));
    BlockPlacement placement;
    placement.rank = agree_on_backend(options, session, &problem);
    backend_ = placement.rank.backend;
    placement.messages_in_device_memory =
        messages_in_device_memory(over_ranks, *backend_, session, false);
    const int halo_depth =
        over_ranks.halo_depth > 0
            ? over_ranks.halo_depth
            : automatic_halo_depth(problem, options, session, process_grid, *backend_);
    int device = -1;
    mpi::agree_on_errors(
        world, capture_error([&] {
          check_block_fits(problem, process_grid, halo_depth, options, placement, session);
          decomposition_.emplace(world, problem.grid, problem.boundary, process_grid);
          engine_.emplace(*decomposition_, halo_depth,
                          block_factory<Real>(problem, options, session, placement, &device));
        }));
    place_ = place_of(*decomposition_, engine_->layout());
    const auto cells = static_cast<std::size_t>(place_.cells());
    u_.assign(cells, Real(0));
    v_.assign(cells, Real(0));
  }

  const BlockPlace& place() const { return place_; }
  std::string backend() const override { return std::string(backend_->name()); }
  std::size_t members() const override { return 1; }
  void load(std::size_t, std::span<const Real> u, std::span<const Real> v) override {
    if (u.size() != u_.size() || v.size() != v_.size()) {
      throw InvalidInput("load: expected " + std::to_string(u_.size()) +
                         " values per field (this rank's block)");
    }
    std::copy(u.begin(), u.end(), u_.begin());
    std::copy(v.begin(), v.end(), v_.begin());
  }
  void advance(std::int64_t steps) override {
    if (steps <= 0) return;
    engine_->load(u_, v_);  // the copy, with whatever was written through it
    engine_->advance(steps);
    engine_->read_owned(u_.data(), v_.data());
  }
  void set_rates(std::size_t, const Parameters&) override {
    throw InvalidInput("the rates of a grid split over MPI ranks cannot change between steps");
  }
  void home_state() override {}
  void capture(FieldSet) override {}
  void read_captured(std::size_t, Real* u, Real* v) override {
    if (u != nullptr) std::copy(u_.begin(), u_.end(), u);
    if (v != nullptr) std::copy(v_.begin(), v_.end(), v);
  }
  typename Engine<Real>::StateView state() override {
    return {u_.data(), v_.data(), u_.size(), false, 0};
  }

 private:
  std::optional<mpi::Decomposition> decomposition_;
  std::optional<mpi::DistributedEngine<Real>> engine_;
  BlockPlace place_;
  const Backend* backend_ = nullptr;  // what steps the blocks
  std::vector<Real> u_, v_;           // this rank's block, as front ends see it
};

}  // namespace

template <class Real>
std::unique_ptr<Engine<Real>> make_distributed_engine(const Problem& problem,
                                                      const EngineOptions& options,
                                                      const mpi::Session& session,
                                                      BlockPlace& place,
                                                      const DistributedRunOptions& over_ranks) {
  problem.validate();
  auto engine =
      std::make_unique<DistributedGridEngine<Real>>(problem, options, session, over_ranks);
  place = engine->place();
  return engine;
}

template std::unique_ptr<Engine<float>> make_distributed_engine(const Problem&,
                                                                const EngineOptions&,
                                                                const mpi::Session&, BlockPlace&,
                                                                const DistributedRunOptions&);
template std::unique_ptr<Engine<double>> make_distributed_engine(const Problem&,
                                                                 const EngineOptions&,
                                                                 const mpi::Session&, BlockPlace&,
                                                                 const DistributedRunOptions&);

}  // namespace grayscott::pipeline
