#include "engine/cpu/cpu_volume_block.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/cpu/subnormals.hpp"
#include "engine/padded_volume_cell.hpp"

namespace grayscott::cpu {

namespace {

using namespace volume_detail;

// One row of a block: cells [0, cols) of the row whose neighbourhood is `in` (pointers at the
// row's first cell). A side of the row whose end is a ghost cell (`ghost_left`, `ghost_right`)
// reads it as any other neighbour; at the volume's edge the boundary rule stands in, as for the
// ends of a whole row in update_volume_row.
template <StencilKind K, Boundary B, unsigned Sides, class Real>
void update_block_row_with(const VolumeRowNeighbourhood<Real>& in, std::int64_t cols,
                           bool ghost_left, bool ghost_right, const Coefficients<Real>& c,
                           Real* out_u, Real* out_v) {
  if (shifted_volume_row<K, B, Sides>(in, cols, ghost_left, ghost_right, c, out_u, out_v)) return;
  const std::int64_t j0 = ghost_left ? 0 : 1, j1 = ghost_right ? cols : cols - 1;
  if (j1 > j0) update_volume_span<K, B, Sides>(in.u, in.v, j0, j1, c, out_u, out_v);
  if constexpr (B != Boundary::Periodic) {
    const auto end_cell = [&](std::int64_t j) {
      update_volume_cell<K, B, Sides>(
          in.u, in.v, j,
          [&](int dc) {
            const std::int64_t k = j + dc;
            return (k >= 0 || ghost_left) && (k < cols || ghost_right);
          },
          [&](int dc) { return j + dc; }, c, out_u, out_v);
    };
    if (!ghost_left) end_cell(0);
    if (!ghost_right && (cols > 1 || ghost_left)) end_cell(cols - 1);
  }
}

template <StencilKind K, Boundary B, class Real>
void update_block_row(const VolumeRowNeighbourhood<Real>& in, std::int64_t cols, bool ghost_left,
                      bool ghost_right, const Coefficients<Real>& c, Real* out_u, Real* out_v) {
  const unsigned sides = sides_in_memory(in);
  if (sides == AllSides) {
    update_block_row_with<K, B, AllSides>(in, cols, ghost_left, ghost_right, c, out_u, out_v);
    return;
  }
  if constexpr (B != Boundary::Periodic) {
    dispatch_sides(sides, [&]<unsigned Sides>() {
      update_block_row_with<K, B, Sides>(in, cols, ghost_left, ghost_right, c, out_u, out_v);
    });
  } else {
    throw std::logic_error("a periodic volume's block has every neighbour in memory");
  }
}

}  // namespace

template <class Real>
CpuVolumeBlock<Real>::CpuVolumeBlock(const Problem& problem, const Parameters& params,
                                     const LocalLayout& layout, GlobalEdges edges, int threads)
    : Base(problem, params, layout, edges, threads) {}

template <class Real>
void CpuVolumeBlock<Real>::copy(const Region& region, Real* field, Real* values,
                                bool into_field) const {
  const std::int64_t width = region.cols();
  for (std::int64_t z = region.plane_begin; z < region.plane_end; ++z) {
    if (width == 1) {
      // A column face or edge of the halo: one value a row, element by element rather than a
      // copy call each.
      const std::int64_t stride = layout_.stride();
      Real* cell = field + layout_.offset(z, region.row_begin, region.col_begin);
      for (std::int64_t r = region.row_begin; r < region.row_end; ++r, cell += stride) {
        if (into_field)
          *cell = *values++;
        else
          *values++ = *cell;
      }
      continue;
    }
    for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
      Real* cells = field + layout_.offset(z, r, region.col_begin);
      if (into_field)
        std::copy_n(values, width, cells);
      else
        std::copy_n(cells, width, values);
      values += width;
    }
  }
}

template <class Real>
void CpuVolumeBlock<Real>::load(std::span<const Real> u, std::span<const Real> v) {
  const Region owned{0, layout_.rows, 0, layout_.cols, 0, layout_.planes};
  if (u.size() != static_cast<std::size_t>(owned.cells()) || v.size() != u.size()) {
    throw InvalidInput("load: expected " + std::to_string(owned.cells()) +
                       " values per field (the block's)");
  }
  write(owned, u.data(), v.data());
}

template <class Real>
void CpuVolumeBlock<Real>::read(const Region& region, Real* u, Real* v) {
  if (region.empty()) return;
  if (u) copy(region, u_[current_].data(), u, false);
  if (v) copy(region, v_[current_].data(), v, false);
}

template <class Real>
void CpuVolumeBlock<Real>::write(const Region& region, const Real* u, const Real* v) {
  copy(region, u_[current_].data(), const_cast<Real*>(u), true);
  copy(region, v_[current_].data(), const_cast<Real*>(v), true);
}

template <class Real>
template <StencilKind K, Boundary B>
void CpuVolumeBlock<Real>::step_with(const Region& region) {
  if (region.cols() <= 2) {
    step_narrow<K, B>(region);
    return;
  }
  const Real* su = u_[current_].data();
  const Real* sv = v_[current_].data();
  Real* du = u_[1 - current_].data();
  Real* dv = v_[1 - current_].data();
  const std::int64_t rows = region.rows(), width = region.cols();
  const std::int64_t lines = region.planes() * rows;
  // The grid's edge where the block meets it; ghost cells elsewhere.
  const bool ghost_left = !(edges_.left && region.col_begin == 0);
  const bool ghost_right = !(edges_.right && region.col_end == layout_.cols);
  // Small slabs (the rim around the interior) are not worth waking the thread team for.
  const bool parallel = threads_ > 1 && region.cells() >= 32768;
#pragma omp parallel num_threads(threads_) if (parallel)
  {
    const FlushSubnormals<Real> flush;
#pragma omp for schedule(static)
    for (std::int64_t line = 0; line < lines; ++line) {
      const std::int64_t z = region.plane_begin + line / rows;
      const std::int64_t r = region.row_begin + line % rows;
      VolumeRowNeighbourhood<Real> in{};
      for (int dz = -1; dz <= 1; ++dz) {
        const std::int64_t zz = z + dz;
        const bool plane_absent = (zz < 0 && edges_.front) || (zz >= layout_.planes && edges_.back);
        for (int dr = -1; dr <= 1; ++dr) {
          const std::int64_t rr = r + dr;
          const bool row_absent = (rr < 0 && edges_.top) || (rr >= layout_.rows && edges_.bottom);
          if (plane_absent || row_absent) continue;  // the boundary rule stands in
          const std::int64_t at = layout_.offset(zz, rr, region.col_begin);
          in.u[dz + 1][dr + 1] = su + at;
          in.v[dz + 1][dr + 1] = sv + at;
        }
      }
      const std::int64_t out = layout_.offset(z, r, region.col_begin);
      update_block_row<K, B>(in, width, ghost_left, ghost_right, coefficients_, du + out, dv + out);
    }
  }
}

template <class Real>
template <StencilKind K, Boundary B>
void CpuVolumeBlock<Real>::step_narrow(const Region& region) {
  // A column of the rim is as many one-cell rows as the block has rows and planes: each cell is
  // read from its neighbours' places in the padded block directly (engine/padded_volume_cell.hpp,
  // as the CUDA block does), without a row's setup (its nine rows' pointers, a division to find
  // the row). The same gathering and update as a row's, so the cells round alike.
  const Real* su = u_[current_].data();
  const Real* sv = v_[current_].data();
  Real* du = u_[1 - current_].data();
  Real* dv = v_[1 - current_].data();
  const PaddedVolumeBlock block = padded_volume_block(layout_, edges_);
  const FlushSubnormals<Real> flush;
  for (std::int64_t z = region.plane_begin; z < region.plane_end; ++z) {
    for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
      for (std::int64_t c = region.col_begin; c < region.col_end; ++c) {
        step_padded_volume_cell<K, B>(su, sv, du, dv, static_cast<int>(z), static_cast<int>(r),
                                      static_cast<int>(c), block, coefficients_);
      }
    }
  }
}

template <class Real>
void CpuVolumeBlock<Real>::step(const Region& region) {
  if (region.empty()) return;
  dispatch_boundary(boundary_, [&]<Boundary B>() {
    if (stencil_kind_ == StencilKind::SevenPoint)
      step_with<StencilKind::SevenPoint, B>(region);
    else
      step_with<StencilKind::NineteenPoint, B>(region);
  });
}

template class CpuVolumeBlock<float>;
template class CpuVolumeBlock<double>;

}  // namespace grayscott::cpu
