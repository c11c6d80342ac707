// `grayscott sweep` over MPI ranks (the one driver's MembersOverRanks placement,
// pipeline/over_ranks.cpp): the members are split over the ranks in consecutive blocks,
// each rank runs its own in batches (on its share of the node's cores, or on its GPU), and every
// rank writes its members' images into one HDF5 file through parallel HDF5. Members are
// independent, so the ranks do not communicate while the sweep runs: each writes independently
// from its writer thread as images come, and they meet only to create and to close the file. The
// file holds the same values as a single-process sweep's.
#pragma once

#include "mpi/session.hpp"
#include "pipeline/sweep.hpp"

namespace grayscott::pipeline {

// Collective over every rank of `session`. Errors (bad input, a failure on any rank) reach every
// rank as the same one-line error; the file then holds what was written and says why it stopped.
SweepSummary execute_distributed_sweep(const SweepRequest& request, const mpi::Session& session);

}  // namespace grayscott::pipeline
