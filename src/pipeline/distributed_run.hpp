// `grayscott run` over MPI ranks (the one driver's GridOverRanks placement,
// pipeline/over_ranks.cpp): one grid split into blocks (mpi::Decomposition), stepped by
// mpi::DistributedEngine, written collectively into one HDF5 file with the single-process layout.
// Blocks step on the CPU, or on GPUs (one device per rank, chosen by the rank's place on its
// node) when the backend is cuda, or auto and every rank sees a device.
//
// Threads: the main thread steps and exchanges halos; a writer thread writes each image
// collectively (parallel HDF5, only ever from that thread). With overlap_writes it does so while
// the next image is computed, as in a single-process run (MPI_THREAD_MULTIPLE); otherwise the
// main thread waits for each write. Overlap pays only where the writer has a core of its own:
// its collective waits spin, and on cores that also compute they cost more than the write
// (2.8x slower on a 2-core machine with 2 ranks), so `auto` overlaps only when each rank leaves a
// core free. OpenMP threads only compute. Each rank writes only its block.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "mpi/session.hpp"
#include "pipeline/distributed_options.hpp"
#include "pipeline/run.hpp"

namespace grayscott::pipeline {

// Collective over every rank of `session`. Every rank validates the same request; rank 0 checks
// the output path; a failure on any rank is agreed on, so every rank throws the same one-line
// error (or, where ranks cannot agree because one is stuck in a halo exchange, MPI_Abort).
RunSummary execute_distributed_run(const RunRequest& request, const DistributedRunOptions& options,
                                   const mpi::Session& session);

// One grid over every rank of `session`, for a front end that steps it itself (the Python
// module's Simulation under mpirun): an Engine of one member whose load, copy_state and state()
// are this rank's block (`place` says where it lies; a volume's block is planes of rows, plane
// after plane), stepped by the distributed engine that `grayscott run` uses (the same
// decomposition, halo depth and backend choice), so its states are bitwise those of one process.
// state() is a host copy of the block: brought up to date by home_state() after the steps, and
// loaded back before the next advance, so a write through it is the state that advance starts
// from. Rates cannot change (set_rates throws InvalidInput). Collective over every rank: making
// it, advance(), home_state().
// `over_ranks`: the split, the halo depth and where halo messages live, as `grayscott run` takes
// them (the images it writes none of, so overlap_writes changes nothing here).
template <class Real>
std::unique_ptr<Engine<Real>> make_distributed_engine(const Problem& problem,
                                                      const EngineOptions& options,
                                                      const mpi::Session& session,
                                                      BlockPlace& place,
                                                      const DistributedRunOptions& over_ranks = {});

}  // namespace grayscott::pipeline
