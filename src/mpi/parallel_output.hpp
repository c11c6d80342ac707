// The MPI side of writing one run file from every rank: MPI-IO file access and collective
// transfers, and each rank's block. The file's layout is io::RunFileWriter's, unchanged.
#pragma once

#include "io/files/hdf5.hpp"
#include "io/files/run_file.hpp"
#include "mpi/decomposition.hpp"

namespace grayscott::mpi {

// File access properties for a file every rank of `comm` opens together: MPI-IO, with HDF5's
// metadata reads collective (one rank reads for all) and its metadata written by rank 0 alone, so
// that a rank killed in a flush cannot leave the file's structure half written.
io::h5::Id collective_file_access(MPI_Comm comm);

class ParallelOutput {
 public:
  explicit ParallelOutput(const Decomposition& decomposition);
  // Valid while this object lives.
  const io::RunFileAccess& access() const { return access_; }

 private:
  io::h5::Id file_access_, transfer_;
  io::RunFileAccess access_;
};

}  // namespace grayscott::mpi
