// How a grid split over MPI ranks is computed: the split, the steps between halo exchanges, where
// the halo messages live and whether images are written while the next is computed. Filled and
// checked by requests::OverRanksSettings (the command line's --decomposition ... --overlap-writes,
// Simulation's keywords of the same names); read by the distributed run (distributed_run.hpp).
// Apart from the MPI headers, so that front ends built without MPI still name it.
#pragma once

#include <string>

namespace grayscott::pipeline {

// An option that the program can choose itself, or that the user forces either way.
enum class Toggle { Auto, On, Off };

struct DistributedRunOptions {
  std::string decomposition;  // "RxC" ranks, a volume's "PxRxC", or empty: the automatic choice
  int halo_depth = 0;         // cells of halo = steps per exchange; 0: automatic
  Toggle gpu_aware_mpi = Toggle::Auto;   // on devices: halo messages from device memory?
  Toggle overlap_writes = Toggle::Auto;  // write from a thread while stepping?
};

}  // namespace grayscott::pipeline
