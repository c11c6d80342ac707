// Non-blocking halo exchange with the eight neighbours of a 2D decomposition. Edges and corners
// travel in one round (diagonal messages for the corners), so the exchange is a single
// start()/finish() pair that the interior update can overlap. Only halo cells move: each message
// is the `depth`-deep strip (or corner) of u and v, packed by the block into its send area (host
// memory, or device memory that a CUDA-aware MPI reads directly) and unpacked from its receive
// area. A volume's block trades with its 18 face and edge neighbours the same way (its corner
// neighbours hold nothing either volume stencil reads), in one round too.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "engine/subdomain.hpp"
#include "mpi/decomposition.hpp"

namespace grayscott::mpi {

template <class Real>
class HaloExchange {
 public:
  // Plans the messages of `block` (whose layout is `layout`); the block must outlive the exchange.
  HaloExchange(const Decomposition& decomposition, const LocalLayout& layout,
               SubdomainStepper<Real>& block);
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;
  ~HaloExchange();

  // Packs the owned strips of the block's current state, posts the receives and the sends, and
  // unpacks the messages the block sends itself (around a periodic axis it spans alone): the
  // ghosts beyond those sides are filled when it returns.
  void start();
  // Waits for every message and unpacks the ghost strips into the block's current state.
  void finish();

  // Bytes this rank sends per exchange (u and v, every neighbour that exists).
  std::uint64_t bytes_sent_per_exchange() const { return bytes_per_exchange_; }
  int messages_per_exchange() const { return messages_per_exchange_; }

  // The strip a rank sends towards direction (drow, dcol), and the ghost strip it receives from
  // there, in local coordinates.
  static Region send_region(const LocalLayout& layout, int drow, int dcol);
  static Region receive_region(const LocalLayout& layout, int drow, int dcol);
  // A volume's, towards (dplane, drow, dcol).
  static Region send_region(const LocalLayout& layout, int dplane, int drow, int dcol);
  static Region receive_region(const LocalLayout& layout, int dplane, int drow, int dcol);

 private:
  struct Link {
    int dplane = 0, drow = 0, dcol = 0, neighbour = MPI_PROC_NULL;
    std::size_t send_offset = 0, send_count = 0, receive_offset = 0, receive_count = 0;
  };
  MPI_Comm comm_;
  SubdomainStepper<Real>& block_;
  std::vector<Link> links_;  // only directions with a neighbour
  std::vector<MPI_Request> requests_;
  std::size_t own_messages_ = 0;  // links_[0, own_messages_) lead to this rank itself
  std::uint64_t bytes_per_exchange_ = 0;
  int messages_per_exchange_ = 0;
  bool in_flight_ = false;
};

}  // namespace grayscott::mpi
