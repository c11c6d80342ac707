// The volume engine's building block, as row_kernel.hpp is the plane engine's: one output row of
// one step of a volume, from the nine input rows around it (the planes above, at and below, each
// with its rows above, at and below). Every path of the volume engine (one step per sweep, fused
// steps, batches) is a loop over this function, so every path rounds identically. Each cell's
// neighbours are gathered by model/neighbourhood.hpp's gather_volume_neighbours and stepped by
// model/cell_update.hpp's step_volume_cell, the rules every backend's volume kernels use.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/cpu/row_kernel.hpp"
#include "model/cell_update.hpp"
#include "model/neighbourhood.hpp"

namespace grayscott::cpu {

// The rows around output row r of plane z, [dz + 1][dr + 1]: row r + dr of plane z + dz, for u and
// v. A null row lies beyond a non-periodic edge (a plane or a row outside the volume), where the
// boundary rule stands in for it; on a periodic volume the caller gives the wrapped rows. The
// corner rows ([0][0], [0][2], [2][0], [2][2]) are read by the nineteen-point stencil only.
template <class Real>
struct VolumeRowNeighbourhood {
  const Real* u[3][3];
  const Real* v[3][3];
};

namespace volume_detail {

// Which of the four sides of a row's neighbourhood are in memory, as a compile-time mask: the
// plane below (z - 1), the plane above (z + 1), the row before (r - 1), the row after (r + 1).
enum : unsigned { PlaneBelow = 1, PlaneAbove = 2, RowBefore = 4, RowAfter = 8, AllSides = 15 };

template <unsigned Sides>
GRAYSCOTT_HD constexpr bool row_in_memory(int dz, int dr) {
  const bool plane = dz < 0 ? (Sides & PlaneBelow) != 0 : dz > 0 ? (Sides & PlaneAbove) != 0 : true;
  const bool row = dr < 0 ? (Sides & RowBefore) != 0 : dr > 0 ? (Sides & RowAfter) != 0 : true;
  return plane && row;
}

// Cell j of the row: its neighbours gathered with the rows there or not as Sides says, and the
// columns as `column_inside(dc)` (in memory) and `column(dc)` (the index read, wrapped on a
// periodic volume) say.
template <StencilKind K, Boundary B, unsigned Sides, class Real, class ColumnInside, class Column>
GRAYSCOTT_HD void update_volume_cell(const Real* const (&u)[3][3], const Real* const (&v)[3][3],
                                     std::int64_t j, const ColumnInside& column_inside,
                                     const Column& column, const Coefficients<Real>& c,
                                     Real* __restrict out_u, Real* __restrict out_v) {
  static_assert(B != Boundary::Periodic || Sides == AllSides, "a periodic volume wraps");
  const Real cu = u[1][1][j], cv = v[1][1][j];
  Real nu[18], nv[18];
  gather_volume_neighbours<K, B>(
      cu, cv,
      [&](int dz, int dr, int dc)
          GRAYSCOTT_CPU_INLINE { return row_in_memory<Sides>(dz, dr) && column_inside(dc); },
      [&](int dz, int dr, int dc, Real& nu_k, Real& nv_k) GRAYSCOTT_CPU_INLINE {
        const std::int64_t k = column(dc);
        nu_k = u[dz + 1][dr + 1][k];
        nv_k = v[dz + 1][dr + 1][k];
      },
      c, nu, nv);
  step_volume_cell<K>(cu, cv, nu, nv, c, out_u[j], out_v[j]);
}

#if GRAYSCOTT_SHIFTED_SPAN
// Whether rows with the sides `Sides` in memory take shifted_volume_span().
template <StencilKind K, unsigned Sides, class Real>
inline constexpr bool has_shifted_volume_span =
    K == StencilKind::SevenPoint&& Sides == AllSides&& detail::has_shifted_span<K, Real>;
#endif

// Columns [j0, j1), whose left and right neighbours are in the row: the vectorised inner loop, in
// whole vectors as row_kernel.hpp's update_span.
template <StencilKind K, Boundary B, unsigned Sides, class Real>
inline void update_volume_span(const Real* const (&u)[3][3], const Real* const (&v)[3][3],
                               std::int64_t j0, std::int64_t j1, const Coefficients<Real>& c,
                               Real* __restrict out_u, Real* __restrict out_v) {
  const auto inside = [](int) GRAYSCOTT_CPU_INLINE { return true; };
  const auto cell = [&](std::int64_t j) GRAYSCOTT_CPU_INLINE {
    update_volume_cell<K, B, Sides>(
        u, v, j, inside, [j](int dc) GRAYSCOTT_CPU_INLINE { return j + dc; }, c, out_u, out_v);
  };
#if GRAYSCOTT_SHIFTED_SPAN
  // Seven-point rows with every neighbour row in memory: each row loaded once per vector
  // (shifted_span.hpp), bitwise the cell-by-cell loop.
  if constexpr (has_shifted_volume_span<K, Sides, Real>) {
    if (j1 - j0 >= detail::VectorOps<Real>::lanes) {
      const Real* row_u = u[1][1];
      const Real* row_v = v[1][1];
      detail::shifted_volume_span<Real>(u, v, j0, j1, row_u[j0 - 1], row_v[j0 - 1], row_u[j1],
                                        row_v[j1], c, out_u, out_v);
      return;
    }
  }
#endif
  detail::for_each_column<Real>(j0, j1, cell);
}

// The first (Left) or last (Right) cache line of a row, whose end at that side lies at the
// volume's edge, as one vector loop: whether a column neighbour lies beyond the edge depends on
// the lane alone, and a periodic row's other end is one index for the whole line.
template <StencilKind K, Boundary B, detail::RowSide Side, unsigned Sides, class Real>
inline void update_volume_edge_line(const Real* const (&u)[3][3], const Real* const (&v)[3][3],
                                    std::int64_t cols, const Coefficients<Real>& c,
                                    Real* __restrict out_u, Real* __restrict out_v) {
  constexpr int block = 64 / sizeof(Real);
  const std::int64_t line = Side == detail::RowSide::Left ? 0 : cols - block;
  const std::int64_t other_end = Side == detail::RowSide::Left ? cols - 1 : 0;
#pragma omp simd
  for (int lane = 0; lane < block; ++lane) {
    const std::int64_t j = line + lane;
    const auto beyond = [lane](int dc) GRAYSCOTT_CPU_INLINE {
      return Side == detail::RowSide::Left ? lane + dc < 0 : lane + dc >= block;
    };
    update_volume_cell<K, B, Sides>(
        u, v, j, [&](int dc) GRAYSCOTT_CPU_INLINE { return !beyond(dc); },
        [&](int dc) GRAYSCOTT_CPU_INLINE {
          return B == Boundary::Periodic && beyond(dc) ? other_end : j + dc;
        },
        c, out_u, out_v);
  }
}

// One cell at either end of a row narrower than two cache lines, every column checked.
template <StencilKind K, Boundary B, unsigned Sides, class Real>
inline void update_volume_end_cell(const Real* const (&u)[3][3], const Real* const (&v)[3][3],
                                   std::int64_t j, std::int64_t cols, const Coefficients<Real>& c,
                                   Real* out_u, Real* out_v) {
  update_volume_cell<K, B, Sides>(
      u, v, j, [&](int dc) GRAYSCOTT_CPU_INLINE { return j + dc >= 0 && j + dc < cols; },
      [&](int dc) GRAYSCOTT_CPU_INLINE { return wrap_near<std::int64_t>(j + dc, cols); }, c, out_u,
      out_v);
}

// A whole row in the shifted loop (shifted_span.hpp), its end cells included, where the loop takes
// it (seven-point, every neighbour row in memory, at least a vector of columns): the cells beside
// its ends are ghost cells (ghost_left, ghost_right: an MPI halo's) or stand for the volume's edge.
// Returns whether it stepped the row.
template <StencilKind K, Boundary B, unsigned Sides, class Real>
inline bool shifted_volume_row(const VolumeRowNeighbourhood<Real>& in, std::int64_t cols,
                               bool ghost_left, bool ghost_right, const Coefficients<Real>& c,
                               Real* out_u, Real* out_v) {
#if GRAYSCOTT_SHIFTED_SPAN
  if constexpr (has_shifted_volume_span<K, Sides, Real>) {
    if (cols < detail::VectorOps<Real>::lanes) return false;
    using detail::RowSide;
    const Real* row_u = in.u[1][1];
    const Real* row_v = in.v[1][1];
    const auto beside = [&](const Real* row, RowSide side, bool ghost, Real outside) {
      return detail::outside_cell<B>(row, row, cols, side, ghost, outside);
    };
    detail::shifted_volume_span<Real>(
        in.u, in.v, 0, cols, beside(row_u, RowSide::Left, ghost_left, c.outside_u),
        beside(row_v, RowSide::Left, ghost_left, c.outside_v),
        beside(row_u, RowSide::Right, ghost_right, c.outside_u),
        beside(row_v, RowSide::Right, ghost_right, c.outside_v), c, out_u, out_v);
    return true;
  }
#endif
  (void)in, (void)cols, (void)ghost_left, (void)ghost_right, (void)c, (void)out_u, (void)out_v;
  return false;
}

template <StencilKind K, Boundary B, unsigned Sides, class Real>
inline void update_volume_row_with(const VolumeRowNeighbourhood<Real>& in, std::int64_t cols,
                                   const Coefficients<Real>& c, Real* out_u, Real* out_v) {
  if (shifted_volume_row<K, B, Sides>(in, cols, false, false, c, out_u, out_v)) return;
  constexpr std::int64_t block = 64 / sizeof(Real);
  if (cols >= 2 * block) {
    update_volume_edge_line<K, B, detail::RowSide::Left, Sides>(in.u, in.v, cols, c, out_u, out_v);
    update_volume_edge_line<K, B, detail::RowSide::Right, Sides>(in.u, in.v, cols, c, out_u, out_v);
    if (cols > 2 * block)
      update_volume_span<K, B, Sides>(in.u, in.v, block, cols - block, c, out_u, out_v);
    return;
  }
  if (cols > 2) update_volume_span<K, B, Sides>(in.u, in.v, 1, cols - 1, c, out_u, out_v);
  update_volume_end_cell<K, B, Sides>(in.u, in.v, 0, cols, c, out_u, out_v);
  if (cols > 1) update_volume_end_cell<K, B, Sides>(in.u, in.v, cols - 1, cols, c, out_u, out_v);
}

// Which of the four sides of a row's neighbourhood are in memory (a null row is not).
template <class Real>
unsigned sides_in_memory(const VolumeRowNeighbourhood<Real>& in) {
  return (in.u[0][1] ? PlaneBelow : 0u) | (in.u[2][1] ? PlaneAbove : 0u) |
         (in.u[1][0] ? RowBefore : 0u) | (in.u[1][2] ? RowAfter : 0u);
}

// Calls f.template operator()<Sides>() with `sides` as a compile-time constant: the row kernels
// are specialised for the sides a row has, so that no test runs inside their loops. A volume has
// depth 2 at least: every plane has a plane below it, above it, or both.
template <class F>
void dispatch_sides(unsigned sides, F&& f) {
  const auto rows_around = [&]<unsigned Planes>() {
    switch (sides & (RowBefore | RowAfter)) {
      case RowBefore | RowAfter:
        return f.template operator()<Planes | RowBefore | RowAfter>();
      case RowBefore:
        return f.template operator()<Planes | RowBefore>();
      case RowAfter:
        return f.template operator()<Planes | RowAfter>();
      default:
        return f.template operator()<Planes>();
    }
  };
  switch (sides & (PlaneBelow | PlaneAbove)) {
    case PlaneBelow | PlaneAbove:
      return rows_around.template operator()<PlaneBelow | PlaneAbove>();
    case PlaneBelow:
      return rows_around.template operator()<PlaneBelow>();
    case PlaneAbove:
      return rows_around.template operator()<PlaneAbove>();
    default:
      return rows_around.template operator()<0u>();
  }
}

}  // namespace volume_detail

// Writes one row (`cols` cells) of the next step into out_u, out_v, which must not alias the
// input. B is the volume's boundary rule: what a null row and a row's ends stand for. The rows in
// memory are read once per row to pick a kernel without a test inside its loops.
template <StencilKind K, Boundary B, class Real>
inline void update_volume_row(const VolumeRowNeighbourhood<Real>& in, std::int64_t cols,
                              const Coefficients<Real>& c, Real* out_u, Real* out_v) {
  using namespace volume_detail;
  const unsigned sides = sides_in_memory(in);
  if (sides == AllSides) {
    update_volume_row_with<K, B, AllSides>(in, cols, c, out_u, out_v);
    return;
  }
  if constexpr (B != Boundary::Periodic) {
    dispatch_sides(sides, [&]<unsigned Sides>() {
      update_volume_row_with<K, B, Sides>(in, cols, c, out_u, out_v);
    });
  }
}

}  // namespace grayscott::cpu
