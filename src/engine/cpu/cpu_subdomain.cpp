#include "engine/cpu/cpu_subdomain.hpp"

#include <algorithm>

namespace grayscott::cpu {

template <class Real>
CpuSubdomain<Real>::CpuSubdomain(const Problem& problem, const Parameters& params,
                                 const LocalLayout& layout, GlobalEdges edges, int threads)
    : layout_(layout),
      edges_(edges),
      boundary_(problem.boundary),
      stencil_kind_(problem.stencil.kind),
      weights_(problem.stencil.weights.begin(), problem.stencil.weights.end()),
      coefficients_(Coefficients<Real>::from(params)),
      threads_(std::max(threads, 1)),
      fixed_row_u_(static_cast<std::size_t>(layout.stride()), fixed_u<Real>),
      fixed_row_v_(static_cast<std::size_t>(layout.stride()), fixed_v<Real>) {
  for (int b = 0; b < 2; ++b) {
    // Ghost cells that are never exchanged (beyond a non-periodic edge) are never read either;
    // zeroing them keeps every byte defined.
    u_[b] = HostBuffer<Real>(layout_.padded_cells());
    v_[b] = HostBuffer<Real>(layout_.padded_cells());
    std::fill_n(u_[b].data(), layout_.padded_cells(), Real(0));
    std::fill_n(v_[b].data(), layout_.padded_cells(), Real(0));
  }
}

template <class Real>
void CpuSubdomain<Real>::load(std::span<const Real> u, std::span<const Real> v) {
  for (std::int64_t r = 0; r < layout_.rows; ++r) {
    const auto from = static_cast<std::size_t>(r * layout_.cols);
    const auto to = layout_.offset(r, 0);
    std::copy_n(u.data() + from, layout_.cols, u_[current_].data() + to);
    std::copy_n(v.data() + from, layout_.cols, v_[current_].data() + to);
  }
}

template <class Real>
void CpuSubdomain<Real>::read(const Region& region, Real* u, Real* v) {
  const std::int64_t width = region.cols();
  for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
    const auto to = static_cast<std::size_t>((r - region.row_begin) * width);
    const auto from = layout_.offset(r, region.col_begin);
    if (u) std::copy_n(u_[current_].data() + from, width, u + to);
    if (v) std::copy_n(v_[current_].data() + from, width, v + to);
  }
}

template <class Real>
void CpuSubdomain<Real>::plan_halos(const HaloPlan& plan) {
  plan_ = plan;
  send_area_.assign(message_offset(plan_.send, plan_.send.size()), Real(0));
  receive_area_.assign(message_offset(plan_.receive, plan_.receive.size()), Real(0));
}

template <class Real>
void CpuSubdomain<Real>::pack_halos() {
  for (std::size_t i = 0; i < plan_.send.size(); ++i) {
    const Region& region = plan_.send[i];
    Real* message = send_area_.data() + message_offset(plan_.send, i);
    read(region, message, message + region.cells());
  }
}

template <class Real>
void CpuSubdomain<Real>::unpack_halos() {
  for (std::size_t i = 0; i < plan_.receive.size(); ++i) {
    const Region& region = plan_.receive[i];
    const Real* buffer = receive_area_.data() + message_offset(plan_.receive, i);
    const std::int64_t width = region.cols();
    for (HostBuffer<Real>* field : {&u_[current_], &v_[current_]}) {
      for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
        std::copy_n(buffer, width, field->data() + layout_.offset(r, region.col_begin));
        buffer += width;
      }
    }
  }
}

template <class Real>
template <StencilKind K>
void CpuSubdomain<Real>::step_with(const Region& region) {
  using cpu::EdgeRule;
  const EdgeRule edge_rule = boundary_ == Boundary::Fixed ? EdgeRule::Constant : EdgeRule::Absent;
  // The serial engine's rules where the block meets the grid's edge; ghost cells elsewhere.
  const EdgeRule left = (edges_.left && region.col_begin == 0) ? edge_rule : EdgeRule::Memory;
  const EdgeRule right =
      (edges_.right && region.col_end == layout_.cols) ? edge_rule : EdgeRule::Memory;
  const std::int64_t width = region.col_end - region.col_begin;
  const Real* su = u_[current_].data();
  const Real* sv = v_[current_].data();
  Real* du = u_[1 - current_].data();
  Real* dv = v_[1 - current_].data();
  const Real* w = weights_.data();
  const auto outside_offset = static_cast<std::size_t>(layout_.depth + region.col_begin);
  const Real* fixed_u_row = fixed_row_u_.data() + outside_offset;
  const Real* fixed_v_row = fixed_row_v_.data() + outside_offset;
  const bool fixed = boundary_ == Boundary::Fixed;
  // Small strips (the rim around the interior) are not worth waking the thread team for.
  const bool parallel = threads_ > 1 && region.cells() >= 32768;
#pragma omp parallel for schedule(static) num_threads(threads_) if (parallel)
  for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
    cpu::RowNeighbourhood<Real> in{};
    for (int d = 0; d < 3; ++d) {
      const std::int64_t rr = r + d - 1;
      const bool beyond_edge = (rr < 0 && edges_.top) || (rr >= layout_.rows && edges_.bottom);
      if (beyond_edge) {
        in.u[d] = fixed ? fixed_u_row : nullptr;
        in.v[d] = fixed ? fixed_v_row : nullptr;
      } else {
        in.u[d] = su + layout_.offset(rr, region.col_begin);
        in.v[d] = sv + layout_.offset(rr, region.col_begin);
      }
    }
    const auto out = layout_.offset(r, region.col_begin);
    cpu::update_row<K>(in, width, left, right, coefficients_, w, du + out, dv + out);
  }
}

template <class Real>
void CpuSubdomain<Real>::step(const Region& region) {
  if (region.empty()) return;
  cpu::dispatch_stencil(stencil_kind_, [&]<StencilKind K>() { step_with<K>(region); });
}

template class CpuSubdomain<float>;
template class CpuSubdomain<double>;

}  // namespace grayscott::cpu
