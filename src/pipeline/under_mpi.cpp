#include "pipeline/under_mpi.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pipeline/run.hpp"

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

RankPlacement agree_on_backend(const EngineOptions& engine, const mpi::Session& session) {
  RankPlacement placement;
  if (engine.backend != "auto") {
    mpi::agree_on_errors(session.world(), capture_error([&] {
                           const Backend& named = find_backend(engine.backend);
                           std::string why;
                           placement = place_on(named, session, &why);
                           if (placement.backend == nullptr) {
                             throw std::runtime_error("backend " + engine.backend + ": " + why);
                           }
                         }));
    return placement;
  }
  for (const Backend* backend : preferred_backends()) {
    placement = place_on(*backend, session, nullptr);
    if (!mpi::any_rank(session.world(), placement.backend == nullptr)) return placement;
  }
  // A host backend runs everywhere; reaching this is a build without one.
  throw std::runtime_error("no backend is available on every rank");
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
  MPI_Barrier(session.world());
  if (exit_code != 0) throw ErrorAlreadyReported{exit_code};
}

}  // namespace grayscott::pipeline
