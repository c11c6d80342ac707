#include "pipeline/distributed_sweep.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "io/files/hdf5.hpp"
#include "io/files/run_file.hpp"
#include "io/files/sweep_file.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/parallel_output.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/under_mpi.hpp"

namespace grayscott::pipeline {

namespace {

// The status of the lowest rank that did not complete, or "complete" on every rank.
std::string agree_on_status(MPI_Comm comm, int rank, const std::string& local, bool complete) {
  int mine = complete ? INT32_MAX : rank, first = INT32_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT32_MAX) return "complete";
  int length = rank == first ? static_cast<int>(local.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::string status = rank == first ? local : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(status.data(), length, MPI_CHAR, first, comm);
  return status;
}

// Failure injection for the test suite only: GRAYSCOTT_TEST_FAIL_RANK=r makes rank r fail before
// its first member. Never set in production.
void injected_failure(int rank) {
  const char* fail_rank = std::getenv("GRAYSCOTT_TEST_FAIL_RANK");
  if (fail_rank && std::atoi(fail_rank) == rank) {
    throw std::runtime_error("injected failure before the first member");
  }
}

}  // namespace

SweepSummary execute_distributed_sweep(const SweepRequest& original, const mpi::Session& session) {
  const MPI_Comm world = session.world();
  const int rank = session.rank();
  const bool root = rank == 0;
  SweepRequest request = original;
  const auto members = static_cast<std::int64_t>(request.members.size());
  io::SweepMetadata meta;
  mpi::agree_on_errors(world, capture_error([&] { meta = sweep_metadata(request); }));

  // This rank's members and where they run; the output path, checked once.
  const RankPlacement placement = agree_on_backend(request.engine, session);
  const Backend& backend = *placement.backend;
  const mpi::Extent mine = mpi::block_extent(members, session.size(), rank);
  std::int64_t batch_size = 1;
  mpi::agree_on_errors(
      world, capture_error([&] {
        if (session.thread_level() < MPI_THREAD_SERIALIZED) {
          throw std::runtime_error(
              "this MPI library does not provide MPI_THREAD_SERIALIZED, which a sweep needs (its "
              "writer thread calls MPI-IO)");
        }
        request.engine.backend = backend.name();
        if (backend.on_device())
          request.engine.device = placement.device;
        else
          request.engine.threads = threads_per_rank(request.engine, session);
        const std::uint64_t limit =
            request.max_batch_bytes > 0
                ? request.max_batch_bytes
                : default_batch_memory(backend, session.local_size(), request.engine.device);
        batch_size = batch_members(std::max<std::int64_t>(mine.size, 1),
                                   sweep_bytes_per_member(request.problem, request.fields), limit,
                                   backend.members_per_engine(request.problem));
        if (root && !request.resume) {
          claim_output(request.output, request.overwrite, request.quiet, meta);
        }
      }));
  meta.backend = backend.name();
  // A file one process wrote: its unwritten chunks are placed before the ranks share it, once
  // every rank has read it (the agreement above is collective).
  if (request.resume && !request.every_chunk_placed) {
    mpi::agree_on_errors(world, capture_error([&] {
                           if (root) io::place_unwritten_chunks(request.output);
                         }));
  }

  // The file, created by every rank together.
  namespace h5 = io::h5;
  std::optional<h5::Id> file_access;
  std::optional<io::SweepFileWriter> file;
  const std::string tag = shared_tag(world);
  mpi::agree_on_errors(world, capture_error([&] {
                         file_access.emplace(mpi::collective_file_access(world));
                         const io::SweepFileAccess access{file_access->get(), root, tag};
                         if (request.resume)
                           file.emplace(request.output, meta, io::SweepFileWriter::Continue{},
                                        access);
                         else
                           file.emplace(request.output, meta, request.overwrite, access);
                       }));

  // Each rank its own members, without talking to the others.
  const double cell_updates_per_member_image = static_cast<double>(request.problem.grid.cells()) *
                                               static_cast<double>(request.steps_per_image);
  std::vector<std::int64_t> nonfinite =
      request.resume ? request.nonfinite_image
                     : std::vector<std::int64_t>(static_cast<std::size_t>(members), -1);
  MPI_Barrier(world);
  Progress progress(mine.size * request.images, cell_updates_per_member_image,
                    root && !request.quiet && ::isatty(2));
  SweepPart part;
  std::exception_ptr error = capture_error([&] {
    injected_failure(rank);
    const auto open_file = [&](const std::string&) -> io::SweepFileWriter& { return *file; };
    part = request.problem.precision == Precision::Single
               ? run_sweep_members<float>(request, mine.begin, mine.end(), batch_size, open_file,
                                          nonfinite, progress)
               : run_sweep_members<double>(request, mine.begin, mine.end(), batch_size, open_file,
                                           nonfinite, progress);
  });
  if (!error)
    error = part.outcome.stepping_error ? part.outcome.stepping_error : part.outcome.writer_error;
  progress.clear();
  // Nothing was filled in advance: what this rank's members lack reads as NaN, as in a serial
  // sweep's file. (A rank that cannot write at all leaves it undefined; its error says so.)
  std::exception_ptr fill_error = capture_error([&] {
    for (std::int64_t m = 0; m < mine.size; ++m) {
      const auto done = m < static_cast<std::int64_t>(part.images_written.size())
                            ? part.images_written[static_cast<std::size_t>(m)]
                            : 0;
      if (done < request.images) file->write_missing_images(mine.begin + m, done);
    }
  });
  if (!error) error = fill_error;

  // Together again: how it ended, every member's first non-finite image, the file closed.
  const bool complete = !error && !part.outcome.stopped() &&
                        std::all_of(part.images_written.begin(), part.images_written.end(),
                                    [&](std::int64_t n) { return n == request.images; }) &&
                        static_cast<std::int64_t>(part.images_written.size()) == mine.size;
  const std::string local_status =
      complete ? "complete"
      : !part.outcome.stop_reason.empty()
          ? part.outcome.stop_reason
          : "stopped: an error ended the sweep on rank " + std::to_string(rank);
  SweepSummary summary;
  summary.status = agree_on_status(world, rank, local_status, complete);
  MPI_Allreduce(MPI_IN_PLACE, nonfinite.data(), static_cast<int>(members), MPI_INT64_T, MPI_MAX,
                world);
  const std::exception_ptr finish_error =
      capture_error([&] { file->finish(summary.status, nonfinite); });
  mpi::agree_on_errors(world, error);
  mpi::agree_on_errors(world, finish_error);

  std::int64_t images_done = part.member_images_done, batches = part.batches;
  MPI_Allreduce(MPI_IN_PLACE, &images_done, 1, MPI_INT64_T, MPI_SUM, world);
  MPI_Allreduce(MPI_IN_PLACE, &batches, 1, MPI_INT64_T, MPI_MAX, world);
  summary.seconds = progress.elapsed_seconds();
  MPI_Allreduce(MPI_IN_PLACE, &summary.seconds, 1, MPI_DOUBLE, MPI_MAX, world);
  summary.backend = meta.backend;
  summary.members = members;
  summary.batches = batches;
  summary.batch_size = batch_size;
  summary.nonfinite_members =
      std::count_if(nonfinite.begin(), nonfinite.end(), [](std::int64_t i) { return i >= 0; });
  summary.completed = summary.status == "complete";
  summary.signal = part.outcome.signal;
  MPI_Allreduce(MPI_IN_PLACE, &summary.signal, 1, MPI_INT, MPI_MAX, world);
  summary.cell_updates_per_s =
      summary.seconds > 0
          ? static_cast<double>(images_done) * cell_updates_per_member_image / summary.seconds
          : 0;
  return summary;
}

}  // namespace grayscott::pipeline
