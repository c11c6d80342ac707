#include "mpi/distributed_engine.hpp"

#include <mpi.h>

#include <algorithm>
#include <vector>

namespace grayscott::mpi {

namespace {

LocalLayout layout_of(const Decomposition& d, int depth) {
  if (depth < 1) throw InvalidInput("halo depth must be a positive integer");
  if (d.grid().volume()) {
    // A volume's block exchanges its halo every step.
    if (depth != 1) {
      throw InvalidInput("halo depth " + std::to_string(depth) +
                         ": a volume's block exchanges its halo every step (halo depth 1)");
    }
    return LocalLayout{d.rows().size, d.cols().size, 1, d.planes().size};
  }
  const LocalLayout layout{d.rows().size, d.cols().size, depth};
  if (layout.rows < depth || layout.cols < depth) {
    throw InvalidInput("a block of " + std::to_string(layout.rows) + "x" +
                       std::to_string(layout.cols) + " cells is thinner than the halo depth " +
                       std::to_string(depth));
  }
  return layout;
}

// The block's sides with no other rank beyond them: the grid's edges, and where a periodic axis
// wraps around to the block itself.
GlobalEdges sides_without_neighbour(const Decomposition& d) {
  const GlobalEdges edges = d.edges();
  const auto alone = [&](int dplane, int drow, int dcol) {
    return d.neighbour(dplane, drow, dcol) == d.rank();
  };
  return {edges.top || alone(0, -1, 0),   edges.bottom || alone(0, 1, 0),
          edges.left || alone(0, 0, -1),  edges.right || alone(0, 0, 1),
          edges.front || alone(-1, 0, 0), edges.back || alone(1, 0, 0)};
}

}  // namespace

template <class Real>
DistributedEngine<Real>::DistributedEngine(const Decomposition& decomposition, int halo_depth,
                                           const SubdomainFactory<Real>& make_block)
    : decomposition_(decomposition),
      layout_(layout_of(decomposition, halo_depth)),
      edges_(decomposition.edges()),
      sides_without_neighbour_(sides_without_neighbour(decomposition)),
      block_(make_block(layout_, edges_)),
      halo_(decomposition, layout_, *block_) {}

template <class Real>
void DistributedEngine<Real>::load_initial(const InitialState& initial) {
  if (layout_.volume()) {
    const auto cells = static_cast<std::size_t>(layout_.planes * layout_.rows * layout_.cols);
    std::vector<Real> u(cells), v(cells);
    fill_initial_volume_block<Real>(decomposition_.grid(), initial, decomposition_.planes().begin,
                                    decomposition_.rows().begin, decomposition_.cols().begin,
                                    layout_.planes, layout_.rows, layout_.cols, u, v);
    block_->load(u, v);
    return;
  }
  const auto cells = static_cast<std::size_t>(layout_.rows * layout_.cols);
  std::vector<Real> u(cells), v(cells);
  fill_initial_block<Real>(decomposition_.grid(), initial, decomposition_.rows().begin,
                           decomposition_.cols().begin, layout_.rows, layout_.cols, u, v);
  block_->load(u, v);
}

template <class Real>
void DistributedEngine<Real>::load(std::span<const Real> u, std::span<const Real> v) {
  block_->load(u, v);
}

template <class Real>
Region DistributedEngine<Real>::region_for(int step_in_exchange, int steps) const {
  const std::int64_t widen = steps - 1 - step_in_exchange;
  if (layout_.volume()) {
    // One step per exchange: the owned block.
    return {0, layout_.rows, 0, layout_.cols, 0, layout_.planes};
  }
  return {edges_.top ? 0 : -widen, edges_.bottom ? layout_.rows : layout_.rows + widen,
          edges_.left ? 0 : -widen, edges_.right ? layout_.cols : layout_.cols + widen};
}

template <class Real>
void DistributedEngine<Real>::advance(std::int64_t steps) {
  const std::int64_t rows = layout_.rows, cols = layout_.cols;
  while (steps > 0) {
    const int k = static_cast<int>(std::min<std::int64_t>(layout_.depth, steps));
    halo_.start();
    // Step 1 of k: the interior needs no ghost cell from a neighbour, so it runs while the halo
    // travels. It reaches the block's side where the block meets the grid's edge (nothing is
    // received there, the boundary rule stands in) and where the block is its own neighbour (a
    // periodic axis it spans alone: start() has filled those ghosts).
    const Region first = region_for(0, k);
    const GlobalEdges& sides = sides_without_neighbour_;
    const Region interior{
        sides.top ? 0 : 1,
        sides.bottom ? rows : rows - 1,
        sides.left ? 0 : 1,
        sides.right ? cols : cols - 1,
        layout_.volume() ? (sides.front ? 0 : 1) : 0,
        layout_.volume() ? (sides.back ? layout_.planes : layout_.planes - 1) : 1};
    // Unless the block's rim would hold columns it steps slowly (one cell in each row): then the
    // region is stepped whole once the halo is in.
    const bool column_rim = !sides.left || !sides.right;
    const bool overlap = !interior.empty() && !(column_rim && block_->column_rims_costly());
    if (overlap) block_->step(interior);
    const double waiting_since = MPI_Wtime();
    halo_.finish();
    seconds_waiting_ += MPI_Wtime() - waiting_since;
    if (overlap) {
      block_->step_frame(first, interior);  // the rest of the first region, around the interior
    } else {
      block_->step(first);
    }
    block_->swap();
    // Steps 2..k: each region one cell narrower, from ghosts computed by the steps before.
    if (k > 1) {
      std::vector<Region> chain;
      for (int s = 1; s < k; ++s) chain.push_back(region_for(s, k));
      block_->step_chain(chain);
    }
    ++exchanges_;
    steps -= k;
  }
  block_->synchronize();
}

template <class Real>
void DistributedEngine<Real>::read_owned(Real* u, Real* v) {
  block_->read({0, layout_.rows, 0, layout_.cols, 0, layout_.volume() ? layout_.planes : 1}, u, v);
}

template <class Real>
HaloStatistics DistributedEngine<Real>::statistics() const {
  return {exchanges_, halo_.bytes_sent_per_exchange(), halo_.messages_per_exchange(),
          seconds_waiting_};
}

template class DistributedEngine<float>;
template class DistributedEngine<double>;

}  // namespace grayscott::mpi
