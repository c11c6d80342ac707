// `grayscott run` over MPI ranks: one grid split into blocks (mpi::Decomposition), stepped by
// mpi::DistributedEngine, written collectively into one HDF5 file with the single-process layout.
// Blocks step on the CPU, or on GPUs (one device per rank, chosen by the rank's place on its
// node) when the backend is cuda, or auto and every rank sees a device.
//
// Threads: every MPI and HDF5 call stays on the main thread; OpenMP threads only compute. The
// serial driver's writer thread is not used here: the halo exchange calls MPI from the main thread
// while stepping, parallel HDF5 is not thread-safe, collective writes need every rank in step
// anyway, and MPI_THREAD_MULTIPLE costs latency in many MPI libraries. Each rank writes only its
// block, so the write is divided by P.
#pragma once

#include <string>

#include "app/run_driver.hpp"
#include "mpi/session.hpp"

namespace grayscott::app {

struct DistributedRunOptions {
  std::string decomposition;            // "RxC" ranks, or empty: MPI_Dims_create's choice
  int halo_depth = 1;                   // cells of halo = steps per exchange
  std::string cuda_aware_mpi = "auto";  // on GPUs: halo messages from device memory? auto|on|off
};

// Collective over every rank of `session`. Every rank validates the same request; rank 0 checks
// the output path; a failure on any rank is agreed on, so every rank throws the same one-line
// error (or, where ranks cannot agree because one is stuck in a halo exchange, MPI_Abort).
RunSummary execute_distributed_run(const RunRequest& request, const DistributedRunOptions& options,
                                   const mpi::Session& session);

}  // namespace grayscott::app
