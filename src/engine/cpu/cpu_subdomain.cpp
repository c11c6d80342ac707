#include "engine/cpu/cpu_subdomain.hpp"

#include <algorithm>

#include "engine/cpu/subnormals.hpp"
#include "engine/cpu/wavefront.hpp"

namespace grayscott::cpu {

template <class Real>
CpuSubdomain<Real>::CpuSubdomain(const Problem& problem, const Parameters& params,
                                 const LocalLayout& layout, GlobalEdges edges, int threads)
    : Base(problem, params, layout, edges, threads),
      weights_(problem.stencil.weights.begin(), problem.stencil.weights.end()) {}

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
void CpuSubdomain<Real>::write(const Region& region, const Real* u, const Real* v) {
  const std::int64_t width = region.cols();
  for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
    const auto from = static_cast<std::size_t>((r - region.row_begin) * width);
    const auto to = layout_.offset(r, region.col_begin);
    std::copy_n(u + from, width, u_[current_].data() + to);
    std::copy_n(v + from, width, v_[current_].data() + to);
  }
}

template <class Real>
template <class RowsOf>
RowNeighbourhood<Real> CpuSubdomain<Real>::neighbourhood(std::int64_t row, std::int64_t col_begin,
                                                         const RowsOf& rows_of) const {
  RowNeighbourhood<Real> in{};
  for (int d = 0; d < 3; ++d) {
    const std::int64_t rr = row + d - 1;
    const bool beyond_edge = (rr < 0 && edges_.top) || (rr >= layout_.rows && edges_.bottom);
    if (beyond_edge) continue;  // absent: update_row applies the boundary rule
    const auto [u, v] = rows_of(rr, col_begin);
    in.u[d] = u;
    in.v[d] = v;
  }
  return in;
}

template <class Real>
RowEnds CpuSubdomain<Real>::ends_of(const Region& region) const {
  // The grid's edge where the block meets it; ghost cells elsewhere.
  return {.ghost_left = !(edges_.left && region.col_begin == 0),
          .ghost_right = !(edges_.right && region.col_end == layout_.cols)};
}

template <class Real>
template <StencilKind K, Boundary B>
void CpuSubdomain<Real>::step_with(const Region& region) {
  const RowEnds ends = ends_of(region);
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
      update_row<K, B>(in, width, ends, coefficients_, w, du + out, dv + out);
    }
  }
}

template <class Real>
void CpuSubdomain<Real>::step(const Region& region) {
  if (region.empty()) return;
  dispatch_stencil_and_boundary(stencil_kind_, boundary_,
                                [&]<StencilKind K, Boundary B>() { step_with<K, B>(region); });
}

// Temporal blocking over the steps after an exchange (wavefront.hpp), as in the serial engine's
// fused path: a band of the last region's rows goes through every step in one pass, level j's
// rows within regions[j - 1], each row with the inputs step() would give it. Only the last level
// is written to the block.
template <class Real>
template <StencilKind K, Boundary B>
void CpuSubdomain<Real>::chain_band(std::span<const Region> regions, std::int64_t band_begin,
                                    std::int64_t band_end, Real* scratch) {
  const auto n = static_cast<int>(regions.size());
  const Real* su = u_[current_].data();
  const Real* sv = v_[current_].data();
  Real* du = u_[1 - current_].data();
  Real* dv = v_[1 - current_].data();
  const Real* w = weights_.data();
  const RollingRows<Real> rolling(scratch, static_cast<std::size_t>(layout_.stride()),
                                  static_cast<std::size_t>(layout_.depth));
  const auto level_rows = [&](int j) {
    return std::pair{regions[j - 1].row_begin, regions[j - 1].row_end};
  };
  step_wavefront(n, band_begin, band_end, level_rows, [&](int j, std::int64_t r) {
    const Region& region = regions[j - 1];
    const auto input_rows = [&](std::int64_t rr, std::int64_t c) {
      if (j == 1) return std::pair{su + layout_.offset(rr, c), sv + layout_.offset(rr, c)};
      return std::pair<const Real*, const Real*>{rolling.row(j - 1, rr, 0) + c,
                                                 rolling.row(j - 1, rr, 1) + c};
    };
    const auto in = neighbourhood(r, region.col_begin, input_rows);
    Real* out_u =
        j == n ? du + layout_.offset(r, region.col_begin) : rolling.row(j, r, 0) + region.col_begin;
    Real* out_v =
        j == n ? dv + layout_.offset(r, region.col_begin) : rolling.row(j, r, 1) + region.col_begin;
    update_row<K, B>(in, region.cols(), ends_of(region), coefficients_, w, out_u, out_v);
  });
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
  const std::size_t per_band =
      RollingRows<Real>::size(static_cast<int>(n), static_cast<std::size_t>(layout_.stride()));
  if (chain_scratch_.size() < per_band * static_cast<std::size_t>(bands)) {
    chain_scratch_.assign(per_band * static_cast<std::size_t>(bands), Real(0));
  }
  dispatch_stencil_and_boundary(stencil_kind_, boundary_, [&]<StencilKind K, Boundary B>() {
#pragma omp parallel num_threads(bands) if (bands > 1)
    {
      const FlushSubnormals<Real> flush;
#pragma omp for schedule(static, 1)
      for (int b = 0; b < bands; ++b) {
        const std::int64_t begin = last.row_begin + last.rows() * b / bands;
        const std::int64_t end = last.row_begin + last.rows() * (b + 1) / bands;
        chain_band<K, B>(regions, begin, end, chain_scratch_.data() + per_band * b);
      }
    }
  });
  current_ = 1 - current_;
}

template class CpuSubdomain<float>;
template class CpuSubdomain<double>;

}  // namespace grayscott::cpu
