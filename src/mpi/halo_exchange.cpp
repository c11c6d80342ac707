#include "mpi/halo_exchange.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace grayscott::mpi {

namespace {

template <class Real>
MPI_Datatype mpi_type() {
  return sizeof(Real) == 4 ? MPI_FLOAT : MPI_DOUBLE;
}

// A message's tag names the direction it travels in, as seen by its sender: when two directions
// lead to the same rank (two ranks along a periodic axis, or one: itself) the tags keep them apart.
// A plane's directions are 0..8; a volume's across planes 9..26.
int direction_tag(int dplane, int drow, int dcol) {
  return (dplane == 0 ? 0 : dplane > 0 ? 9 : 18) + (drow + 1) * 3 + (dcol + 1);
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string("MPI: halo exchange: ") + what + ": " +
                             std::string(text, static_cast<std::size_t>(length)));
  }
}

}  // namespace

template <class Real>
Region HaloExchange<Real>::send_region(const LocalLayout& l, int drow, int dcol) {
  const auto span = [&](int d, std::int64_t n) -> std::pair<std::int64_t, std::int64_t> {
    if (d < 0) return {0, l.depth};
    if (d > 0) return {n - l.depth, n};
    return {0, n};
  };
  const auto [r0, r1] = span(drow, l.rows);
  const auto [c0, c1] = span(dcol, l.cols);
  return {r0, r1, c0, c1};
}

template <class Real>
Region HaloExchange<Real>::receive_region(const LocalLayout& l, int drow, int dcol) {
  const auto span = [&](int d, std::int64_t n) -> std::pair<std::int64_t, std::int64_t> {
    if (d < 0) return {-l.depth, 0};
    if (d > 0) return {n, n + l.depth};
    return {0, n};
  };
  const auto [r0, r1] = span(drow, l.rows);
  const auto [c0, c1] = span(dcol, l.cols);
  return {r0, r1, c0, c1};
}

template <class Real>
Region HaloExchange<Real>::send_region(const LocalLayout& l, int dplane, int drow, int dcol) {
  Region region = send_region(l, drow, dcol);
  region.plane_begin = dplane > 0 ? l.planes - l.depth : 0;
  region.plane_end = dplane < 0 ? l.depth : l.planes;
  return region;
}

template <class Real>
Region HaloExchange<Real>::receive_region(const LocalLayout& l, int dplane, int drow, int dcol) {
  Region region = receive_region(l, drow, dcol);
  region.plane_begin = dplane < 0 ? -l.depth : dplane > 0 ? l.planes : 0;
  region.plane_end = dplane < 0 ? 0 : dplane > 0 ? l.planes + l.depth : l.planes;
  return region;
}

template <class Real>
HaloExchange<Real>::HaloExchange(const Decomposition& decomposition, const LocalLayout& layout,
                                 SubdomainStepper<Real>& block)
    : comm_(decomposition.comm()), block_(block) {
  const int planes = layout.volume() ? 1 : 0;
  for (int dz = -planes; dz <= planes; ++dz) {
    for (int dr = -1; dr <= 1; ++dr) {
      for (int dc = -1; dc <= 1; ++dc) {
        if (dz == 0 && dr == 0 && dc == 0) continue;
        // A volume's corners: no stencil reads them.
        if (dz != 0 && dr != 0 && dc != 0) continue;
        const int neighbour = decomposition.neighbour(dz, dr, dc);
        if (neighbour == MPI_PROC_NULL) continue;
        Link link;
        link.dplane = dz, link.drow = dr, link.dcol = dc, link.neighbour = neighbour;
        links_.push_back(link);
      }
    }
  }
  // The messages a block sends itself first: they are unpacked before the others arrive.
  const int rank = decomposition.rank();
  const auto others = std::stable_partition(links_.begin(), links_.end(),
                                            [rank](const Link& l) { return l.neighbour == rank; });
  own_messages_ = static_cast<std::size_t>(others - links_.begin());
  HaloPlan plan;
  for (Link& link : links_) {
    const int dz = link.dplane, dr = link.drow, dc = link.dcol;
    plan.send.push_back(layout.volume() ? send_region(layout, dz, dr, dc)
                                        : send_region(layout, dr, dc));
    plan.receive.push_back(layout.volume() ? receive_region(layout, dz, dr, dc)
                                           : receive_region(layout, dr, dc));
    link.send_count = static_cast<std::size_t>(2 * plan.send.back().cells());
    link.receive_count = static_cast<std::size_t>(2 * plan.receive.back().cells());
  }
  for (std::size_t i = 0; i < links_.size(); ++i) {
    links_[i].send_offset = message_offset(plan.send, i);
    links_[i].receive_offset = message_offset(plan.receive, i);
  }
  bytes_per_exchange_ = message_offset(plan.send, plan.send.size()) * sizeof(Real);
  block_.plan_halos(plan);
  messages_per_exchange_ = static_cast<int>(links_.size());
  requests_.assign(2 * links_.size(), MPI_REQUEST_NULL);
}

template <class Real>
HaloExchange<Real>::~HaloExchange() {
  // Only reached in flight when an error unwinds the stack: the buffers must outlive the requests.
  if (in_flight_)
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

template <class Real>
void HaloExchange<Real>::start() {
  const MPI_Datatype type = mpi_type<Real>();
  Real* const receive_area = block_.receive_area();
  Real* const send_area = block_.send_area();
  // Pack first: it returns when the block's previous unpack (possibly still queued on a GPU
  // stream) has also finished reading the receive area, which the receives below may overwrite.
  block_.pack_halos();
  in_flight_ = true;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    // The neighbour in direction (dr, dc) sends towards (-dr, -dc).
    check(MPI_Irecv(receive_area + l.receive_offset, static_cast<int>(l.receive_count), type,
                    l.neighbour, direction_tag(-l.dplane, -l.drow, -l.dcol), comm_,
                    &requests_[2 * i]),
          "post a receive");
  }
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    check(MPI_Isend(send_area + l.send_offset, static_cast<int>(l.send_count), type, l.neighbour,
                    direction_tag(l.dplane, l.drow, l.dcol), comm_, &requests_[2 * i + 1]),
          "post a send");
  }
  // A block's messages to itself are already here: their ghosts are filled now, so the steps
  // before finish() may read them.
  if (own_messages_ > 0) {
    check(MPI_Waitall(static_cast<int>(2 * own_messages_), requests_.data(), MPI_STATUSES_IGNORE),
          "deliver the block's messages to itself");
    block_.unpack_halos(0, own_messages_);
  }
}

template <class Real>
void HaloExchange<Real>::finish() {
  in_flight_ = false;
  check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
        "wait for the neighbours");
  block_.unpack_halos(own_messages_, links_.size());
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace grayscott::mpi
