// What the CPU's blocks of a grid split over MPI ranks (a plane's, CpuSubdomain; a volume's,
// CpuVolumeBlock) share: the block's state (its layout, rules, coefficients and two ping-pong
// buffers of u and v padded with the ghost frame), and halo messages in two host buffers, packed
// from the current state with read() and unpacked into it with write(), region after region as
// HaloPlan lays them out.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/host_buffer.hpp"
#include "engine/subdomain.hpp"
#include "model/cell_update.hpp"

namespace grayscott::cpu {

template <class Real>
class HostSubdomain : public SubdomainStepper<Real> {
 public:
  void plan_halos(const HaloPlan& plan) override {
    plan_ = plan;
    send_area_.assign(message_offset(plan_.send, plan_.send.size()), Real(0));
    receive_area_.assign(message_offset(plan_.receive, plan_.receive.size()), Real(0));
  }
  Real* send_area() override { return send_area_.data(); }
  Real* receive_area() override { return receive_area_.data(); }
  void pack_halos() override {
    for (std::size_t i = 0; i < plan_.send.size(); ++i) {
      const Region& region = plan_.send[i];
      Real* message = send_area_.data() + message_offset(plan_.send, i);
      this->read(region, message, message + region.cells());
    }
  }
  void unpack_halos(std::size_t first, std::size_t last) override {
    for (std::size_t i = first; i < last; ++i) {
      const Region& region = plan_.receive[i];
      const Real* message = receive_area_.data() + message_offset(plan_.receive, i);
      write(region, message, message + region.cells());
    }
  }
  void swap() override { current_ = 1 - current_; }

 protected:
  // `edges`: where the block meets a non-periodic edge or face of the grid. `threads`: OpenMP
  // threads (at least one is used).
  HostSubdomain(const Problem& problem, const Parameters& params, const LocalLayout& layout,
                GlobalEdges edges, int threads)
      : layout_(layout),
        edges_(edges),
        boundary_(problem.boundary),
        stencil_kind_(problem.stencil.kind),
        coefficients_(Coefficients<Real>::from(params, problem.outside, problem.stencil.kind)),
        threads_(std::max(threads, 1)) {
    for (int b = 0; b < 2; ++b) {
      // Ghost cells that are never exchanged (beyond a non-periodic edge, a volume's corners)
      // are never read either; zeroing them keeps every byte defined.
      u_[b] = HostBuffer<Real>(layout_.padded_cells());
      v_[b] = HostBuffer<Real>(layout_.padded_cells());
      std::fill_n(u_[b].data(), layout_.padded_cells(), Real(0));
      std::fill_n(v_[b].data(), layout_.padded_cells(), Real(0));
    }
  }

  // Sets `region` of the current state (ghost cells included) from u and v, laid out as read()
  // lays them out.
  virtual void write(const Region& region, const Real* u, const Real* v) = 0;

  LocalLayout layout_;
  GlobalEdges edges_;
  Boundary boundary_;
  StencilKind stencil_kind_;
  Coefficients<Real> coefficients_;
  int threads_;
  HostBuffer<Real> u_[2], v_[2];  // ping-pong, each padded with the ghost frame
  int current_ = 0;

 private:
  HaloPlan plan_;
  std::vector<Real> send_area_, receive_area_;
};

}  // namespace grayscott::cpu
