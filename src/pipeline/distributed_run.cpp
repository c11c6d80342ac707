#include "pipeline/distributed_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/files/run_file.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/distributed_engine.hpp"
#include "mpi/parallel_output.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/under_mpi.hpp"

namespace grayscott::pipeline {

namespace {

// Failure injection for the test suite only: GRAYSCOTT_TEST_FAIL_RANK=r makes rank r fail at
// image GRAYSCOTT_TEST_FAIL_IMAGE (default 0), while stepping (GRAYSCOTT_TEST_FAIL_STAGE=step)
// or before writing (default). Never set in production; costs one getenv per run.
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

// Collective: the halo depth when none is asked for, the backend's default for the smallest
// block (a device: one exchange per step; the CPU fuses the steps after each exchange); every
// rank must use the same, hence the minimum over ranks.
int automatic_halo_depth(const RunRequest& request, const mpi::Session& session,
                         mpi::ProcessGrid process_grid, const Backend& backend) {
  const Grid& grid = request.problem.grid;
  const Grid block{grid.rows / process_grid.rows, grid.cols / process_grid.cols};
  int depth = backend.default_halo_depth(block, request.problem.precision,
                                         threads_per_rank(request.engine, session));
  MPI_Allreduce(MPI_IN_PLACE, &depth, 1, MPI_INT, MPI_MIN, session.world());
  return depth;
}

// Where the blocks step, settled by execute_distributed_run for every rank alike.
struct BlockPlacement {
  RankPlacement rank;                      // the backend, and this rank's device
  bool messages_in_device_memory = false;  // a device backend with an MPI that reads its memory
  bool overlap_writes = false;             // images written while the next is computed
  bool on_device() const { return rank.backend->on_device(); }
};

// This rank's block, on host threads or on the device its node-local rank picks.
template <class Real>
mpi::SubdomainFactory<Real> block_factory(const RunRequest& request, const mpi::Session& session,
                                          BlockPlacement placement, int* device) {
  const Problem& problem = request.problem;
  SubdomainOptions options;
  if (placement.on_device()) {
    *device = options.device = placement.rank.device;
    options.messages_in_device_memory = placement.messages_in_device_memory;
  } else {
    options.threads = threads_per_rank(request.engine, session);
  }
  const Backend* backend = placement.rank.backend;
  return [problem, options, backend](const LocalLayout& layout, GlobalEdges edges) {
    return backend->make_block<Real>(problem, layout, edges, options);
  };
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

template <class Real>
RunSummary run_distributed(const RunRequest& request, const DistributedRunOptions& options,
                           const mpi::Session& session, mpi::ProcessGrid process_grid,
                           BlockPlacement placement, io::RunMetadata meta,
                           const io::RunFileState* continued) {
  const Problem& problem = request.problem;
  const MPI_Comm world = session.world();
  const bool root = session.rank() == 0;
  const InjectedFailure injected = InjectedFailure::from_environment(session.rank());
  const std::int64_t first = continued ? continued->checkpoint_images : 0;

  std::optional<mpi::Decomposition> decomposition;
  std::optional<mpi::DistributedEngine<Real>> engine;
  std::optional<mpi::ParallelOutput> output;
  std::optional<io::RunFileWriter> file;
  int device = -1;
  mpi::agree_on_errors(world, capture_error([&] {
                         if (session.thread_level() < MPI_THREAD_SERIALIZED) {
                           throw std::runtime_error(
                               "this MPI library does not provide MPI_THREAD_SERIALIZED, which "
                               "the writer thread needs");
                         }
                         decomposition.emplace(world, problem.grid, problem.boundary, process_grid);
                         engine.emplace(*decomposition, options.halo_depth,
                                        block_factory<Real>(request, session, placement, &device));
                         if (first > 0) {
                           // This rank's block of the checkpoint: the file is read by each rank
                           // on its own, before it is opened for writing together.
                           std::vector<Real> u, v;
                           io::read_checkpoint<Real>(
                               request.output, decomposition->rows().begin, engine->layout().rows,
                               decomposition->cols().begin, engine->layout().cols, u, v);
                           engine->load(u, v);
                         } else {
                           engine->load_initial(request.initial);
                         }
                       }));
  meta.backend = engine->backend();
  const std::string tag = shared_tag(world);
  mpi::agree_on_errors(world, capture_error([&] {
                         output.emplace(*decomposition);
                         io::RunFileAccess access = output->access();
                         access.partial_tag = tag;
                         if (continued)
                           file.emplace(request.output, meta, io::RunFileWriter::Continue{first},
                                        access);
                         else
                           file.emplace(request.output, meta, request.overwrite, access);
                       }));
  const MPI_Comm comm = decomposition->comm();

  const auto block_cells = static_cast<std::size_t>(engine->layout().rows * engine->layout().cols);
  const double cell_updates_per_image =
      static_cast<double>(problem.grid.cells()) * static_cast<double>(request.steps_per_image);

  // Each image goes to the loop's writer thread, which writes it collectively; with `overlap`
  // while this thread steps the next (MPI on two threads at once: MPI_THREAD_MULTIPLE; the file's
  // communicator is HDF5's own duplicate of the decomposition's), otherwise this thread waits for
  // each write, so that one thread at a time is inside MPI. The ranks agree after each image on
  // whether to go on, checkpoint and flush, so the collective writes always match.
  MPI_Barrier(comm);
  Progress progress(request.images - first, cell_updates_per_image,
                    root && !request.quiet && ::isatty(2));
  BlockSource<Real> source(*engine, comm, injected, first);
  RunFileSink<Real> sink(*file, request.fields, true, nonfinite_advice(request.problem));
  LoopPlan plan = run_loop_plan(request, first, block_cells);
  // Collective flushes cost every rank: at most once a second.
  plan.save.durable_every_seconds = std::max(plan.save.durable_every_seconds, 1.0);
  plan.wait_for_each_write = !placement.overlap_writes;
  plan.on_image = [&](std::int64_t done) { progress.update(done - first); };
  // This rank's block of the state the loop starts from, for the first image's change.
  std::vector<Real> start_v;
  if (plan.statistics) {
    start_v.resize(block_cells);
    engine->read_owned(nullptr, start_v.data());
    plan.start_v = start_v.data();
  }
  MpiAgreement agreement(comm);
  const LoopOutcome outcome = run_image_loop<Real>(source, sink, plan, agreement);
  // A write that failed (collectively, so on every rank) is reported the same way everywhere, and
  // so is a failure while reading an image.
  std::exception_ptr run_error =
      capture_error([&] { mpi::agree_on_errors(comm, outcome.stepping_error); });
  if (!run_error)
    run_error = capture_error([&] { mpi::agree_on_errors(comm, outcome.writer_error); });
  MPI_Barrier(comm);
  progress.clear();

  RunSummary summary;
  summary.backend = meta.backend;
  summary.first_image = first;
  summary.seconds = progress.elapsed_seconds();
  MPI_Bcast(&summary.seconds, 1, MPI_DOUBLE, 0, comm);
  summary.images_written = file->images_written();
  summary.signal = outcome.signal;
  summary.checkpoint_images = sink.checkpoint_images() > 0 ? sink.checkpoint_images() : first;
  summary.completed = !outcome.stopped() && !run_error && summary.images_written == request.images;
  summary.settled = outcome.settled && !run_error;
  summary.status = summary.completed              ? "complete"
                   : !outcome.stop_reason.empty() ? outcome.stop_reason
                   : outcome.signal != 0 && !run_error
                       ? interrupted_status(outcome.signal, summary.images_written)
                       : error_status(run_error, summary.images_written);
  const std::exception_ptr finish_error = capture_error([&] { file->finish(summary.status); });
  if (run_error) std::rethrow_exception(run_error);
  mpi::agree_on_errors(comm, finish_error);
  summary.cell_updates_per_s = summary.seconds > 0
                                   ? static_cast<double>(summary.images_written - first) *
                                         cell_updates_per_image / summary.seconds
                                   : 0;

  if (root && !request.quiet) {
    const mpi::HaloStatistics halo = engine->statistics();
    const auto& g = decomposition->process_grid();
    const std::string where =
        "on " + std::string(placement.rank.backend->name()) +
        (!placement.on_device()
             ? std::string()
             : " devices (rank 0: device " + std::to_string(device) + "), halos through " +
                   (placement.messages_in_device_memory ? "device memory (GPU-aware MPI)"
                                                        : "pinned host memory"));
    std::fprintf(stderr,
                 "decomposition %dx%d over %d ranks %s, halo depth %d: %llu halo bytes per "
                 "exchange from rank 0 (%d messages), %lld exchanges, %.3f s waiting on halos; "
                 "images written %s\n",
                 g.rows, g.cols, session.size(), where.c_str(), options.halo_depth,
                 static_cast<unsigned long long>(halo.bytes_sent_per_exchange),
                 halo.messages_per_exchange, static_cast<long long>(halo.exchanges),
                 halo.seconds_waiting,
                 placement.overlap_writes ? "while stepping" : "between steps");
  }
  return summary;
}

}  // namespace

RunSummary execute_distributed_run(const RunRequest& request, const DistributedRunOptions& options,
                                   const mpi::Session& session) {
  const MPI_Comm world = session.world();
  mpi::ProcessGrid process_grid;
  BlockPlacement placement;
  io::RunMetadata meta{request.problem,
                       request.images,
                       request.steps_per_image,
                       request.fields,
                       "",
                       std::string(version),
                       request.initial,
                       file_attributes(request.analysis)};
  // Every rank checks the same request, so every rank reaches the same verdict; agreeing anyway
  // costs one allreduce and guards against a rank that sees something different.
  mpi::agree_on_errors(
      world, capture_error([&] {
        validate_run_request(request);
        if (request.analysis.classify && session.size() > 1) {
          throw InvalidInput(
              "classify: over MPI ranks each rank holds a block of the grid, and a pattern is "
              "the whole image's; classify the file's images afterwards (gs.classify), or run "
              "on one rank");
        }
        if (options.halo_depth < 0) {
          throw InvalidInput("halo-depth must be a positive integer, or 0 for automatic");
        }
        for (const auto& [name, value] :
             {std::pair<const char*, const std::string&>{"gpu-aware-mpi", options.gpu_aware_mpi},
              {"overlap-writes", options.overlap_writes}}) {
          if (value != "auto" && value != "on" && value != "off") {
            throw InvalidInput(std::string(name) + ": expected auto, on or off, got '" + value +
                               "'");
          }
        }
        std::optional<mpi::ProcessGrid> forced;
        if (!options.decomposition.empty()) forced = mpi::parse_process_grid(options.decomposition);
        process_grid = mpi::choose_process_grid(session.size(), request.problem.grid, forced,
                                                std::max(options.halo_depth, 1));
      }));
  placement.rank = agree_on_backend(request.engine, session);
  DistributedRunOptions resolved = options;
  if (options.halo_depth == 0) {
    resolved.halo_depth =
        automatic_halo_depth(request, session, process_grid, *placement.rank.backend);
  }
  const std::string_view device_memory = placement.rank.backend->mpi_device_memory();
  placement.messages_in_device_memory =
      !device_memory.empty() &&
      (options.gpu_aware_mpi == "on" ||
       (options.gpu_aware_mpi == "auto" && mpi::library_reads_device_memory(device_memory)));
  // Every rank decides alike: the writes are collective, but whether a rank waits for them is its
  // own affair; agreeing keeps the summary true for all.
  placement.overlap_writes =
      session.thread_level() >= MPI_THREAD_MULTIPLE &&
      (options.overlap_writes == "on" ||
       (options.overlap_writes == "auto" &&
        !mpi::any_rank(world, !writer_has_a_core(placement.on_device(), request.engine, session))));
  // The output path is one file on a shared file system: one rank looks at it. A continued run's
  // file is read by every rank (its attributes are small).
  std::optional<io::RunFileState> continued;
  mpi::agree_on_errors(
      world, capture_error([&] {
        if (request.resume) {
          continued = io::read_run_state(request.output);
          if (run_is_finished(continued->status)) {
            throw InvalidInput("nothing to resume: " + request.output.string() +
                               " holds a complete run");
          }
          if (!continued->extendable_in_parallel) {
            throw InvalidInput(request.output.string() +
                               " was written by one process of an earlier grayscott, whose "
                               "files parallel HDF5 cannot extend: continue it without "
                               "mpirun/srun");
          }
        } else if (session.rank() == 0) {
          claim_output(request.output, request.overwrite, request.quiet, meta);
        }
      }));
  // The ranks write only into placed chunks: rank 0 places any the file lacks, once every rank
  // has read it (and closed it: HDF5 locks a file that another process writes).
  if (continued && !continued->every_chunk_placed) {
    mpi::agree_on_errors(world, capture_error([&] {
                           if (session.rank() == 0) io::place_unwritten_run_chunks(request.output);
                         }));
  }
  const io::RunFileState* from = continued ? &*continued : nullptr;
  return request.problem.precision == Precision::Single
             ? run_distributed<float>(request, resolved, session, process_grid, placement, meta,
                                      from)
             : run_distributed<double>(request, resolved, session, process_grid, placement, meta,
                                       from);
}

namespace {

template <class Real>
class DistributedGridEngine final : public Engine<Real> {
 public:
  DistributedGridEngine(const Problem& problem, const EngineOptions& options,
                        const mpi::Session& session) {
    RunRequest request;
    request.problem = problem;
    request.engine = options;
    const MPI_Comm world = session.world();
    mpi::ProcessGrid process_grid;
    mpi::agree_on_errors(world, capture_error([&] {
                           process_grid = mpi::choose_process_grid(session.size(), problem.grid,
                                                                   std::nullopt, 1);
                         }));
    BlockPlacement placement;
    placement.rank = agree_on_backend(options, session);
    const int halo_depth =
        automatic_halo_depth(request, session, process_grid, *placement.rank.backend);
    int device = -1;
    mpi::agree_on_errors(
        world, capture_error([&] {
          decomposition_.emplace(world, problem.grid, problem.boundary, process_grid);
          engine_.emplace(*decomposition_, halo_depth,
                          block_factory<Real>(request, session, placement, &device));
        }));
    place_ = {decomposition_->rows().begin, engine_->layout().rows, decomposition_->cols().begin,
              engine_->layout().cols};
    const auto cells = static_cast<std::size_t>(place_.rows * place_.cols);
    u_.assign(cells, Real(0));
    v_.assign(cells, Real(0));
  }

  const BlockPlace& place() const { return place_; }
  std::string backend() const override { return engine_->backend(); }
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
  std::vector<Real> u_, v_;  // this rank's block, as front ends see it
};

}  // namespace

template <class Real>
std::unique_ptr<Engine<Real>> make_distributed_engine(const Problem& problem,
                                                      const EngineOptions& options,
                                                      const mpi::Session& session,
                                                      BlockPlace& place) {
  problem.validate();
  auto engine = std::make_unique<DistributedGridEngine<Real>>(problem, options, session);
  place = engine->place();
  return engine;
}

template std::unique_ptr<Engine<float>> make_distributed_engine(const Problem&,
                                                                const EngineOptions&,
                                                                const mpi::Session&, BlockPlace&);
template std::unique_ptr<Engine<double>> make_distributed_engine(const Problem&,
                                                                 const EngineOptions&,
                                                                 const mpi::Session&, BlockPlace&);

}  // namespace grayscott::pipeline
