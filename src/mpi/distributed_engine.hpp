// One grid stepped by many ranks: each rank steps its block (a SubdomainStepper) and trades halos
// with its neighbours (HaloExchange). With a halo `depth` cells deep, one exchange serves `depth`
// steps: each step computes a region one cell narrower, the redundant work trading for fewer,
// larger messages. The first step of each exchange computes the interior while the halo travels;
// the block may fuse the steps after it (step_chain: the CPU does, in one pass over the block).
// Results are bitwise identical to the single-process CPU engine for any decomposition. A volume's
// block exchanges its halo every step (halo depth 1).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "engine/subdomain.hpp"
#include "model/initial_state.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/halo_exchange.hpp"

namespace grayscott::mpi {

struct HaloStatistics {
  std::int64_t exchanges = 0;
  std::uint64_t bytes_sent_per_exchange = 0;  // this rank, u and v
  int messages_per_exchange = 0;              // this rank's sends
  double seconds_waiting = 0;                 // in finish(): the part of the exchange not hidden
};

// Makes this rank's block for its layout and edges: the backend's SubdomainStepper.
template <class Real>
using SubdomainFactory =
    std::function<std::unique_ptr<SubdomainStepper<Real>>(const LocalLayout&, GlobalEdges)>;

template <class Real>
class DistributedEngine {
 public:
  // The block made by `make_block`; `halo_depth` >= 1 and no thicker than the block.
  DistributedEngine(const Decomposition& decomposition, int halo_depth,
                    const SubdomainFactory<Real>& make_block);

  const LocalLayout& layout() const { return layout_; }
  // This rank's block of the run's initial state (rectangle or noise), as a serial run starts.
  void load_initial(const InitialState& initial);
  // Owned cells (rows*cols of the block each, row-major; a volume's planes*rows*cols, plane after
  // plane).
  void load(std::span<const Real> u, std::span<const Real> v);
  void advance(std::int64_t steps);
  void read_owned(Real* u, Real* v);
  HaloStatistics statistics() const;
  // The name of the backend that steps the block, and whether halo messages stay in device memory.
  bool messages_in_device_memory() const { return block_->messages_in_device_memory(); }

  // The cells that step `step_in_exchange` (0-based) of an exchange of `steps` steps computes:
  // the owned block widened by the steps still to come, never past a non-periodic edge.
  Region region_for(int step_in_exchange, int steps) const;

 private:
  const Decomposition& decomposition_;
  LocalLayout layout_;
  GlobalEdges edges_;
  GlobalEdges sides_without_neighbour_;  // where the first step's interior reaches the block's side
  std::unique_ptr<SubdomainStepper<Real>> block_;
  HaloExchange<Real> halo_;
  std::int64_t exchanges_ = 0;
  double seconds_waiting_ = 0;
};

}  // namespace grayscott::mpi
