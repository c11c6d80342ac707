// What `run` and `sweep` share when an MPI launcher (mpirun, srun) started them: agreeing on
// errors, where each rank computes (host threads or one device), and reporting an error once.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "engine/engine.hpp"
#include "engine/registry.hpp"
#include "mpi/session.hpp"
#include "pipeline/image_loop.hpp"
#include "pipeline/job.hpp"
#include "pipeline/under_mpi_errors.hpp"

namespace grayscott::pipeline {

// OpenMP threads per rank: as asked, else OMP_NUM_THREADS, else this rank's share of the cores it
// may run on.
int threads_per_rank(const EngineOptions& engine, const mpi::Session& session);

// Whether this rank leaves a core free for a writer thread: its main thread (stepping with its
// OpenMP threads, or driving a device) plus a writer, times the ranks on this node, fit the cores
// the rank may use.
bool writer_has_a_core(bool on_device, const EngineOptions& engine, const mpi::Session& session);

// Where the ranks compute: one backend for all, and this rank's device for a device backend.
struct RankPlacement {
  const Backend* backend = nullptr;
  int device = 0;  // its rank on its node modulo the devices it sees (0 when each sees one, as
                   // with srun --gpus-per-task=1)
};

// Collective: a named backend must be available on every rank (else every rank throws the same
// one-line error); `auto` takes the most preferred backend available on every rank. Each rank
// asks only about the device it would use. With `blocks_of`, the ranks will step blocks of that
// problem's grid: a backend that cannot (Backend::refuses_blocks) is refused by name and passed
// over by `auto`.
RankPlacement agree_on_backend(const EngineOptions& engine, const mpi::Session& session,
                               const Problem* blocks_of = nullptr);

// The image loop's agreement among the ranks of `comm`: one allreduce per question; rank 0's
// clock decides when to checkpoint and flush.
class MpiAgreement final : public Agreement {
 public:
  explicit MpiAgreement(MPI_Comm comm) : comm_(comm) { MPI_Comm_rank(comm, &rank_); }
  unsigned any(unsigned flags) override {
    unsigned all = 0;
    MPI_Allreduce(&flags, &all, 1, MPI_UNSIGNED, MPI_BOR, comm_);
    return all;
  }
  int largest(int value) override {
    int all = 0;
    MPI_Allreduce(&value, &all, 1, MPI_INT, MPI_MAX, comm_);
    return all;
  }
  bool keeps_time() const override { return rank_ == 0; }
  std::string first_reason(const std::string& local) override;
  void combine(std::vector<analysis::ImageSums>& sums) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
};

// Collective: a tag for temporary file names that every rank knows (rank 0's process id).
std::string shared_tag(MPI_Comm comm);

// Starts MPI and runs `body` on every rank. One rank: errors propagate as in the serial program.
// Several: an error is printed once, by rank 0 (the ranks agreed on it), every rank waits for
// that before leaving (a launcher ends the whole job when the first process exits with an
// error), and every rank throws ErrorAlreadyReported.
void run_on_every_rank(const std::function<void(const mpi::Session&)>& body);

}  // namespace grayscott::pipeline
