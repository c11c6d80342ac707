// MPI's lifetime for one process, and the two ways a distributed run ends on an error: every rank
// agrees on the first failure and reports it the same way, or, where agreement cannot be reached
// (a rank stuck in a halo exchange), the job is aborted.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>
#include <string_view>

namespace grayscott::mpi {

// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx).
// A plain `grayscott run` does not initialise MPI at all and behaves like the serial build.
bool launched_by_mpi_launcher();

// Initialises MPI (unless something else already did) and finalises it on destruction.
// Asks for MPI_THREAD_MULTIPLE: in a run, a writer thread writes an image collectively while the
// main thread exchanges halos for the next (with MPI_THREAD_SERIALIZED only, the main thread waits
// for each write instead); in a sweep, only the writer thread calls MPI while the main thread
// computes. Parallel HDF5 is only ever called from one thread at a time. OpenMP threads only
// compute.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  MPI_Comm world() const { return MPI_COMM_WORLD; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank among the processes of this node, and how many share the node: a GPU build picks device
  // `local_rank() % devices`, and the CPU path divides the node's cores among local ranks.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // The thread support the library provides (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
  int thread_level() const { return thread_level_; }

 private:
  bool owns_mpi_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  int thread_level_ = MPI_THREAD_SINGLE;
};

// Whether this MPI library says that its point-to-point calls read and write device memory of
// `kind` (a backend's Backend::mpi_device_memory; "cuda": Open MPI's MPIX_Query_cuda_support,
// MPICH 4's MPIX_GPU_query_support). False for a kind it has no way to say anything about (a user
// who knows better passes --gpu-aware-mpi on). After MPI_Init.
bool library_reads_device_memory(std::string_view kind);

// The MPI library this build uses, in one line (its version string's first line), and what it
// says at compile time about CUDA device memory. Callable without MPI_Init.
std::string library_description();

// Collective: every rank passes its own error (or null). If any rank failed, every rank throws the
// lowest failing rank's error: InvalidInput if it was one (its kind kept: PathNotFound, PathExists,
// PathDenied, PathIsDirectory, OutOfMemory), std::runtime_error otherwise, with the same one-line
// message everywhere (a runtime error's prefixed with the rank when more than one runs).
void agree_on_errors(MPI_Comm comm, std::exception_ptr local_error);

// Collective: true on every rank when `local` is true on any rank.
bool any_rank(MPI_Comm comm, bool local);

// Prints one line and aborts every rank of `comm`: for a failure that the other ranks cannot be
// told about collectively (they may be waiting on this rank's halo).
[[noreturn]] void abort_all(MPI_Comm comm, const std::string& message);

}  // namespace grayscott::mpi
