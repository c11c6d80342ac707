#include "pipeline/under_mpi.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"

namespace grayscott::pipeline {

int threads_per_rank(const EngineOptions& engine, const mpi::Session& session) {
  if (engine.threads > 0) return engine.threads;
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return omp_get_max_threads();
  return std::max(1, omp_get_num_procs() / std::max(1, session.local_size()));
}

bool writer_has_a_core(bool on_device, const EngineOptions& engine, const mpi::Session& session) {
  const int busy = on_device ? 1 : threads_per_rank(engine, session);
  return (busy + 1) * std::max(1, session.local_size()) <= omp_get_num_procs();
}

namespace {

// This rank's device for `backend` (0 for a host backend), and whether the backend runs there.
RankPlacement place_on(const Backend& backend, const mpi::Session& session, std::string* why) {
  RankPlacement here{&backend, 0};
  if (backend.on_device()) here.device = session.local_rank() % std::max(1, backend.device_count());
  if (!backend.available(here.device, why)) here.backend = nullptr;
  return here;
}

}  // namespace

RankPlacement agree_on_backend(const EngineOptions& engine, const mpi::Session& session,
                               const Problem* blocks_of) {
  const auto refuses_blocks = [blocks_of](const Backend& backend) {
    return blocks_of != nullptr ? backend.refuses_blocks(*blocks_of) : std::string();
  };
  RankPlacement placement;
  if (engine.device != 0 && session.size() > 1 && session.rank() == 0) {
    // Not dropped in silence: each rank's device is its own.
    std::fprintf(stderr,
                 "grayscott: --device %d: over MPI ranks each rank takes the device its rank on "
                 "the node picks (node rank modulo the devices it sees); --device is not used\n",
                 engine.device);
  }
  if (engine.backend != "auto") {
    mpi::agree_on_errors(session.world(), capture_error([&] {
                           const Backend& named = find_backend(engine.backend);
                           if (const std::string refusal = refuses_blocks(named); !refusal.empty())
                             throw InvalidInput(refusal);
                           std::string why;
                           placement = place_on(named, session, &why);
                           if (placement.backend == nullptr) {
                             throw std::runtime_error("--backend " + engine.backend + ": " + why);
                           }
                         }));
    return placement;
  }
  for (const Backend* backend : preferred_backends()) {
    if (!refuses_blocks(*backend).empty()) continue;  // the same answer on every rank
    placement = place_on(*backend, session, nullptr);
    if (!mpi::any_rank(session.world(), placement.backend == nullptr)) return placement;
  }
  // A host backend runs everywhere; reaching this is a build without one.
  throw std::runtime_error("no backend is available on every rank");
}

void MpiAgreement::combine(std::vector<analysis::ImageSums>& sums) {
  // Three allreduces for every member at once: the extremes (a maximum as the minimum of its
  // negation), the floating-point sums, and the counts. The sums' order of addition is MPI's:
  // the same on every rank, within rounding of a single process's.
  constexpr std::size_t extremes = 5, totals = 3;
  const std::size_t bins = sums.empty() ? 0 : sums.front().histogram.size();
  std::vector<double> lowest, added;
  std::vector<std::uint64_t> counts;
  for (const analysis::ImageSums& s : sums) {
    lowest.insert(lowest.end(), {s.u.min, -s.u.max, s.v.min, -s.v.max, -s.change_max});
    added.insert(added.end(), {s.u.sum, s.u.sum_squares, s.v.sum});
    added.insert(added.end(), {s.v.sum_squares, s.change_sum_squares});
    counts.push_back(s.cells);
    counts.insert(counts.end(), s.histogram.begin(), s.histogram.end());
  }
  MPI_Allreduce(MPI_IN_PLACE, lowest.data(), static_cast<int>(lowest.size()), MPI_DOUBLE, MPI_MIN,
                comm_);
  MPI_Allreduce(MPI_IN_PLACE, added.data(), static_cast<int>(added.size()), MPI_DOUBLE, MPI_SUM,
                comm_);
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM,
                comm_);
  for (std::size_t m = 0; m < sums.size(); ++m) {
    analysis::ImageSums& s = sums[m];
    const double* low = &lowest[m * extremes];
    const double* add = &added[m * (totals + 2)];
    const std::uint64_t* count = &counts[m * (bins + 1)];
    s.u.min = low[0];
    s.u.max = -low[1];
    s.v.min = low[2];
    s.v.max = -low[3];
    s.change_max = -low[4];
    s.u.sum = add[0];
    s.u.sum_squares = add[1];
    s.v.sum = add[2];
    s.v.sum_squares = add[3];
    s.change_sum_squares = add[4];
    s.cells = count[0];
    std::copy(count + 1, count + 1 + bins, s.histogram.begin());
  }
}

std::string MpiAgreement::first_reason(const std::string& local) {
  int mine = local.empty() ? INT32_MAX : rank_, first = INT32_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_);
  if (first == INT32_MAX) return {};
  int length = rank_ == first ? static_cast<int>(local.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm_);
  std::string reason = rank_ == first ? local : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(reason.data(), length, MPI_CHAR, first, comm_);
  return reason;
}

std::string shared_tag(MPI_Comm comm) {
  long pid = static_cast<long>(::getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
  return std::to_string(pid);
}

void run_on_every_rank(const std::function<void(const mpi::Session&)>& body) {
  const mpi::Session session;
  int exit_code = 0;
  try {
    body(session);
  } catch (const RunInterrupted& e) {
    if (session.size() == 1) throw;
    // Every rank stopped at the same image; the launcher sees the signal's exit status.
    exit_code = 128 + e.signal;
    if (session.rank() == 0) std::fprintf(stderr, "grayscott: %s\n", e.what());
    std::fflush(stderr);
  } catch (const std::exception& e) {
    if (session.size() == 1) throw;
    exit_code = dynamic_cast<const InvalidInput*>(&e) ? 2 : 1;
    if (session.rank() == 0) std::fprintf(stderr, "grayscott: error: %s\n", e.what());
    std::fflush(stderr);
  }
  // The command is ending: a launcher's SIGTERM to the ranks still leaving, once the first has
  // left with this exit status, is its clean-up, not a stop to announce ("stopping after the image
  // in progress" after the error).
  if (exit_code != 0) announce_stop_signals(false);
  MPI_Barrier(session.world());
  if (exit_code != 0) throw ErrorAlreadyReported{exit_code};
}

}  // namespace grayscott::pipeline
