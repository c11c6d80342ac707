// What the CPU's blocks of a grid split over MPI ranks (a plane's, CpuSubdomain; a volume's,
// CpuVolumeBlock) share: halo messages in two host buffers, packed from the current state with
// read() and unpacked into it with write(), region after region as HaloPlan lays them out.
#pragma once

#include <vector>

#include "engine/subdomain.hpp"

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
  void unpack_halos() override {
    for (std::size_t i = 0; i < plan_.receive.size(); ++i) {
      const Region& region = plan_.receive[i];
      const Real* message = receive_area_.data() + message_offset(plan_.receive, i);
      write(region, message, message + region.cells());
    }
  }

 protected:
  // Sets `region` of the current state (ghost cells included) from u and v, laid out as read()
  // lays them out.
  virtual void write(const Region& region, const Real* u, const Real* v) = 0;

 private:
  HaloPlan plan_;
  std::vector<Real> send_area_, receive_area_;
};

}  // namespace grayscott::cpu
