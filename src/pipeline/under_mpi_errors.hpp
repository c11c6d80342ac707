// How an MPI job's error reaches main once rank 0 has printed it (available without MPI).
#pragma once

namespace grayscott::pipeline {

// Thrown once an error has been printed (by rank 0 of an MPI run): main exits with this status.
struct ErrorAlreadyReported {
  int exit_code = 1;
};

}  // namespace grayscott::pipeline
