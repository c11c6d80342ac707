#include "engine/cpu/cpu_subdomain.hpp"

#include <algorithm>

#include "engine/cpu/subnormals.hpp"

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
template <class RowsOf>
RowNeighbourhood<Real> CpuSubdomain<Real>::neighbourhood(std::int64_t row, std::int64_t col_begin,
                                                         const RowsOf& rows_of) const {
  const bool fixed = boundary_ == Boundary::Fixed;
  const auto outside_offset = static_cast<std::size_t>(layout_.depth + col_begin);
  RowNeighbourhood<Real> in{};
  for (int d = 0; d < 3; ++d) {
    const std::int64_t rr = row + d - 1;
    const bool beyond_edge = (rr < 0 && edges_.top) || (rr >= layout_.rows && edges_.bottom);
    if (beyond_edge) {
      in.u[d] = fixed ? fixed_row_u_.data() + outside_offset : nullptr;
      in.v[d] = fixed ? fixed_row_v_.data() + outside_offset : nullptr;
    } else {
      const auto [u, v] = rows_of(rr, col_begin);
      in.u[d] = u;
      in.v[d] = v;
    }
  }
  return in;
}

template <class Real>
template <StencilKind K>
void CpuSubdomain<Real>::step_with(const Region& region) {
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
  const auto state_rows = [&](std::int64_t rr, std::int64_t c) {
    return std::pair{su + layout_.offset(rr, c), sv + layout_.offset(rr, c)};
  };
  // Small strips (the rim around the interior) are not worth waking the thread team for.
  const bool parallel = threads_ > 1 && region.cells() >= 32768;
#pragma omp parallel num_threads(threads_) if (parallel)
  {
    const FlushSubnormals<Real> flush;
#pragma omp for schedule(static)
    for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
      const auto in = neighbourhood(r, region.col_begin, state_rows);
      const auto out = layout_.offset(r, region.col_begin);
      update_row<K>(in, width, left, right, coefficients_, w, du + out, dv + out);
    }
  }
}

template <class Real>
void CpuSubdomain<Real>::step(const Region& region) {
  if (region.empty()) return;
  dispatch_stencil(stencil_kind_, [&]<StencilKind K>() { step_with<K>(region); });
}

// Temporal blocking over the steps after an exchange, as the serial engine's fused path does: a
// band of the last region's rows goes through every step in one pass, the intermediate states
// (levels 1 .. n-1) living in three rolling rows per level, filled as a wavefront: level j
// computes its row r at tick r + j, from rows r-1, r, r+1 of level j-1 (level 0 is the current
// state), the last of which level j-1 computed earlier in the same tick. Each band recomputes
// (n - j) rows of level j beyond each of its ends, which the next band also computes. Every row
// of every level goes through update_row with the inputs step() would give it, so the result is
// bitwise the same. Only the last level is written to the block.
template <class Real>
template <StencilKind K>
void CpuSubdomain<Real>::chain_band(std::span<const Region> regions, std::int64_t band_begin,
                                    std::int64_t band_end, Real* scratch) {
  const auto n = static_cast<std::int64_t>(regions.size());
  const std::int64_t stride = layout_.stride();
  const EdgeRule edge_rule = boundary_ == Boundary::Fixed ? EdgeRule::Constant : EdgeRule::Absent;
  const Real* su = u_[current_].data();
  const Real* sv = v_[current_].data();
  Real* du = u_[1 - current_].data();
  Real* dv = v_[1 - current_].data();
  const Real* w = weights_.data();
  // Rows of level j (1-based) this band computes.
  auto level_begin = [&](std::int64_t j) {
    return std::max(regions[j - 1].row_begin, band_begin - (n - j));
  };
  auto level_end = [&](std::int64_t j) {
    return std::min(regions[j - 1].row_end, band_end + (n - j));
  };
  // Level j's rolling row for grid row r (j in 1 .. n-1), field 0 (u) or 1 (v), at column 0.
  auto rolling = [&](std::int64_t j, std::int64_t r, int field) {
    const std::int64_t slot = ((r % 3) + 3) % 3;
    return scratch + (((j - 1) * 3 + slot) * 2 + field) * stride + layout_.depth;
  };
  std::int64_t first_tick = level_begin(1) + 1, end_tick = level_end(1) + 1;
  for (std::int64_t j = 2; j <= n; ++j) {
    first_tick = std::min(first_tick, level_begin(j) + j);
    end_tick = std::max(end_tick, level_end(j) + j);
  }
  for (std::int64_t t = first_tick; t < end_tick; ++t) {
    for (std::int64_t j = 1; j <= n; ++j) {
      const std::int64_t r = t - j;
      if (r < level_begin(j) || r >= level_end(j)) continue;
      const Region& region = regions[j - 1];
      const EdgeRule left = (edges_.left && region.col_begin == 0) ? edge_rule : EdgeRule::Memory;
      const EdgeRule right =
          (edges_.right && region.col_end == layout_.cols) ? edge_rule : EdgeRule::Memory;
      const auto input_rows = [&](std::int64_t rr, std::int64_t c) {
        if (j == 1) return std::pair{su + layout_.offset(rr, c), sv + layout_.offset(rr, c)};
        return std::pair<const Real*, const Real*>{rolling(j - 1, rr, 0) + c,
                                                   rolling(j - 1, rr, 1) + c};
      };
      const auto in = neighbourhood(r, region.col_begin, input_rows);
      Real* out_u = j == n ? du + layout_.offset(r, region.col_begin)
                           : rolling(j, r, 0) + region.col_begin;
      Real* out_v = j == n ? dv + layout_.offset(r, region.col_begin)
                           : rolling(j, r, 1) + region.col_begin;
      update_row<K>(in, region.cols(), left, right, coefficients_, w, out_u, out_v);
    }
  }
}

template <class Real>
void CpuSubdomain<Real>::step_chain(std::span<const Region> regions) {
  const auto n = static_cast<std::int64_t>(regions.size());
  if (n == 0) return;
  if (n == 1 || regions.back().empty()) {
    SubdomainStepper<Real>::step_chain(regions);
    return;
  }
  // Bands of the last region's rows, one per thread, each at least a few rows.
  const Region& last = regions.back();
  const int bands = static_cast<int>(
      std::clamp<std::int64_t>(last.rows() / std::max<std::int64_t>(4 * n, 8), 1, threads_));
  const std::size_t per_band = static_cast<std::size_t>((n - 1) * 3 * 2 * layout_.stride());
  if (chain_scratch_.size() < per_band * static_cast<std::size_t>(bands)) {
    chain_scratch_.assign(per_band * static_cast<std::size_t>(bands), Real(0));
  }
  dispatch_stencil(stencil_kind_, [&]<StencilKind K>() {
#pragma omp parallel num_threads(bands) if (bands > 1)
    {
      const FlushSubnormals<Real> flush;
#pragma omp for schedule(static, 1)
      for (int b = 0; b < bands; ++b) {
        const std::int64_t begin = last.row_begin + last.rows() * b / bands;
        const std::int64_t end = last.row_begin + last.rows() * (b + 1) / bands;
        chain_band<K>(regions, begin, end, chain_scratch_.data() + per_band * b);
      }
    }
  });
  current_ = 1 - current_;
}

template class CpuSubdomain<float>;
template class CpuSubdomain<double>;

}  // namespace grayscott::cpu
