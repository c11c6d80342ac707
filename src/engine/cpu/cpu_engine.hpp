// The CPU backend: OpenMP threads over rows (and batch members), a vectorised inner loop, no
// allocation while stepping, and results bitwise identical for any thread count.
#pragma once

#include <vector>

#include "engine/cpu/row_kernel.hpp"
#include "engine/engine.hpp"
#include "engine/host_buffer.hpp"

namespace grayscott::cpu {

template <class Real>
class CpuEngine final : public Engine<Real> {
 public:
  CpuEngine(const Problem& problem, std::span<const Parameters> member_params,
            const EngineOptions& options);

  std::string backend() const override { return "cpu"; }
  std::size_t members() const override { return members_.size(); }
  void load(std::size_t member, std::span<const Real> u, std::span<const Real> v) override;
  void advance(std::int64_t steps) override;
  void capture(FieldSet fields) override;
  void read_captured(std::size_t member, Real* u, Real* v) override;

  int threads() const { return threads_; }

 private:
  struct Member {
    Coefficients<Real> coefficients;
    HostBuffer<Real> u[2], v[2];  // ping-pong: [current] holds the state
    HostBuffer<Real> captured_u, captured_v;
  };

  template <StencilKind K>
  void advance_one_step_sweeps(std::int64_t steps);
  RowNeighbourhood<Real> neighbourhood(const Real* u, const Real* v, std::int64_t row) const;

  Grid grid_;
  Boundary boundary_;
  StencilKind stencil_kind_;
  std::vector<Real> weights_;
  std::vector<Member> members_;
  std::vector<Real> fixed_row_u_, fixed_row_v_;  // the Fixed boundary's rows outside the grid
  EdgeRule edge_rule_;
  int threads_;
  int current_ = 0;
  FieldSet captured_{false, false};
};

}  // namespace grayscott::cpu
