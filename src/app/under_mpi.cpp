#include "app/under_mpi.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/commands.hpp"
#include "engine/cuda/cuda_backend.hpp"

namespace grayscott::app {

int threads_per_rank(const EngineOptions& engine, const mpi::Session& session) {
  if (engine.threads > 0) return engine.threads;
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return omp_get_max_threads();
  return std::max(1, omp_get_num_procs() / std::max(1, session.local_size()));
}

bool writer_has_a_core(bool gpu, const EngineOptions& engine, const mpi::Session& session) {
  const int busy = gpu ? 1 : threads_per_rank(engine, session);
  return (busy + 1) * std::max(1, session.local_size()) <= omp_get_num_procs();
}

bool every_rank_uses_a_gpu(BackendKind backend, const mpi::Session& session) {
  std::string why_not;
  const bool device_here = backend != BackendKind::Cpu && cuda::available(&why_not);
  mpi::agree_on_errors(session.world(), capture_error([&] {
                         if (backend == BackendKind::Cuda && !device_here) {
                           throw std::runtime_error("backend cuda: " + why_not);
                         }
                       }));
  return backend != BackendKind::Cpu && !mpi::any_rank(session.world(), !device_here);
}

int device_for_rank(const mpi::Session& session) {
  return session.local_rank() % static_cast<int>(cuda::devices().size());
}

void run_on_every_rank(const std::function<void(const mpi::Session&)>& body) {
  const mpi::Session session;
  int exit_code = 0;
  try {
    body(session);
  } catch (const std::exception& e) {
    if (session.size() == 1) throw;
    exit_code = dynamic_cast<const InvalidInput*>(&e) ? 2 : 1;
    if (session.rank() == 0) std::fprintf(stderr, "grayscott: error: %s\n", e.what());
    std::fflush(stderr);
  }
  MPI_Barrier(session.world());
  if (exit_code != 0) throw ErrorAlreadyReported{exit_code};
}

}  // namespace grayscott::app
