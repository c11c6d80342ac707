#include "engine/cpu/cpu_engine.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace grayscott::cpu {

template <class Real>
CpuEngine<Real>::CpuEngine(const Problem& problem, std::span<const Parameters> member_params,
                           const EngineOptions& options)
    : grid_(problem.grid),
      boundary_(problem.boundary),
      stencil_kind_(problem.stencil.kind),
      weights_(problem.stencil.weights.begin(), problem.stencil.weights.end()),
      members_(member_params.size()),
      edge_rule_(problem.boundary == Boundary::ZeroFlux   ? EdgeRule::Absent
                 : problem.boundary == Boundary::Periodic ? EdgeRule::Wrap
                                                          : EdgeRule::Constant),
      threads_(options.threads > 0 ? options.threads : omp_get_max_threads()) {
  if (options.threads < 0) throw InvalidInput("threads must be a positive integer");
  const auto cells = static_cast<std::size_t>(grid_.cells());
  for (std::size_t m = 0; m < members_.size(); ++m) {
    Member& member = members_[m];
    member.coefficients = Coefficients<Real>::from(member_params[m]);
    for (int b = 0; b < 2; ++b) {
      member.u[b] = HostBuffer<Real>(cells);
      member.v[b] = HostBuffer<Real>(cells);
    }
    member.captured_u = HostBuffer<Real>(cells);
    member.captured_v = HostBuffer<Real>(cells);
  }
  fixed_row_u_.assign(static_cast<std::size_t>(grid_.cols), fixed_u<Real>);
  fixed_row_v_.assign(static_cast<std::size_t>(grid_.cols), fixed_v<Real>);

  // First touch by the threads and rows that will step them: the same static schedule as advance().
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  const auto nmembers = static_cast<std::int64_t>(members_.size());
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_)
  for (std::int64_t m = 0; m < nmembers; ++m) {
    for (std::int64_t r = 0; r < rows; ++r) {
      Member& member = members_[static_cast<std::size_t>(m)];
      const std::size_t offset = static_cast<std::size_t>(r * cols);
      for (Real* p : {member.u[0].data(), member.u[1].data(), member.v[0].data(),
                      member.v[1].data(), member.captured_u.data(), member.captured_v.data()}) {
        std::fill_n(p + offset, cols, Real(0));
      }
    }
  }
}

template <class Real>
void CpuEngine<Real>::load(std::size_t member, std::span<const Real> u, std::span<const Real> v) {
  Member& m = members_.at(member);
  std::copy(u.begin(), u.end(), m.u[current_].data());
  std::copy(v.begin(), v.end(), m.v[current_].data());
}

template <class Real>
RowNeighbourhood<Real> CpuEngine<Real>::neighbourhood(const Real* u, const Real* v,
                                                      std::int64_t row) const {
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  RowNeighbourhood<Real> n{};
  for (int d = 0; d < 3; ++d) {
    std::int64_t r = row + d - 1;
    if (r >= 0 && r < rows) {
      n.u[d] = u + r * cols;
      n.v[d] = v + r * cols;
      continue;
    }
    switch (boundary_) {
      case Boundary::ZeroFlux:
        n.u[d] = n.v[d] = nullptr;
        break;
      case Boundary::Fixed:
        n.u[d] = fixed_row_u_.data();
        n.v[d] = fixed_row_v_.data();
        break;
      case Boundary::Periodic:
        r = (r + rows) % rows;
        n.u[d] = u + r * cols;
        n.v[d] = v + r * cols;
        break;
    }
  }
  return n;
}

template <class Real>
template <StencilKind K>
void CpuEngine<Real>::advance_one_step_sweeps(std::int64_t steps) {
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  const auto nmembers = static_cast<std::int64_t>(members_.size());
  const Real* w = weights_.data();
  const EdgeRule edge = edge_rule_;
  const int start = current_;
#pragma omp parallel num_threads(threads_)
  for (std::int64_t s = 0; s < steps; ++s) {
    const int src = (start + static_cast<int>(s % 2)) % 2, dst = 1 - src;
#pragma omp for collapse(2) schedule(static)
    for (std::int64_t m = 0; m < nmembers; ++m) {
      for (std::int64_t r = 0; r < rows; ++r) {
        Member& member = members_[static_cast<std::size_t>(m)];
        const auto in = neighbourhood(member.u[src].data(), member.v[src].data(), r);
        update_row<K>(in, cols, edge, edge, member.coefficients, w, member.u[dst].data() + r * cols,
                      member.v[dst].data() + r * cols);
      }
    }
  }
  current_ = static_cast<int>((start + steps) % 2);
}

template <class Real>
void CpuEngine<Real>::advance(std::int64_t steps) {
  if (steps <= 0) return;
  dispatch_stencil(stencil_kind_, [&]<StencilKind K>() { advance_one_step_sweeps<K>(steps); });
}

template <class Real>
void CpuEngine<Real>::capture(FieldSet fields) {
  captured_ = fields;
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  const auto nmembers = static_cast<std::int64_t>(members_.size());
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_)
  for (std::int64_t m = 0; m < nmembers; ++m) {
    for (std::int64_t r = 0; r < rows; ++r) {
      Member& member = members_[static_cast<std::size_t>(m)];
      const std::size_t offset = static_cast<std::size_t>(r * cols);
      if (fields.u) std::copy_n(member.u[current_].data() + offset, cols, member.captured_u.data() + offset);
      if (fields.v) std::copy_n(member.v[current_].data() + offset, cols, member.captured_v.data() + offset);
    }
  }
}

template <class Real>
void CpuEngine<Real>::read_captured(std::size_t member, Real* u, Real* v) {
  const Member& m = members_.at(member);
  const auto cells = static_cast<std::size_t>(grid_.cells());
  if (u && captured_.u) std::copy_n(m.captured_u.data(), cells, u);
  if (v && captured_.v) std::copy_n(m.captured_v.data(), cells, v);
}

template class CpuEngine<float>;
template class CpuEngine<double>;

}  // namespace grayscott::cpu
