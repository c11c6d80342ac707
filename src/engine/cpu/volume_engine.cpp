#include "engine/cpu/volume_engine.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cpu/streaming_copy.hpp"
#include "engine/cpu/subnormals.hpp"
#include "engine/cpu/wavefront.hpp"

namespace grayscott::cpu {

namespace {
std::int64_t l2_cache_bytes() {
  constexpr std::int64_t default_l2_bytes = 512 * 1024;
  const long reported_l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return reported_l2 > 0 ? reported_l2 : default_l2_bytes;
}
}  // namespace

template <class Real>
VolumeEngine<Real>::VolumeEngine(const Problem& problem, std::span<const Parameters> member_params,
                                 const EngineOptions& options)
    : VolumeEngine(problem, member_params, checked(problem, options),
                   options.threads > 0
                       ? options.threads
                       : CpuEngine<Real>::automatic_threads(problem.grid, member_params.size())) {}

template <class Real>
const EngineOptions& VolumeEngine<Real>::checked(const Problem& problem,
                                                 const EngineOptions& options) {
  if (options.threads < 0) throw InvalidInput("threads must be a positive integer");
  if (options.fuse_steps < 0 || options.fuse_steps > max_fuse_steps) {
    throw InvalidInput("fuse must be 0 (the backend's best) or a whole number from 1 to " +
                       std::to_string(max_fuse_steps) + " for a volume on the CPU, got " +
                       std::to_string(options.fuse_steps));
  }
  if (!problem.stencil.three_dimensional()) {
    throw InvalidInput(
        "the CPU volume engine steps a volume's stencil (seven-point, "
        "nineteen-point), not " +
        problem.stencil.name());
  }
  return options;
}

template <class Real>
VolumeEngine<Real>::VolumeEngine(const Problem& problem, std::span<const Parameters> member_params,
                                 const EngineOptions& options, int threads)
    : Base(problem, member_params, threads,
           options.fuse_steps > 0
               ? options.fuse_steps
               : automatic_fuse_steps(problem.grid, member_params.size(), threads),
           &HostBuffer<Real>::huge_pages) {
  // Tiles of rows whose three planes of u and v take at most a quarter of a core's L2 cache, at
  // least 4 rows (a tile's rows above and below are re-read at its edges).
  const std::int64_t row_bytes = grid_.cols * static_cast<std::int64_t>(sizeof(Real));
  tile_rows_ = std::clamp<std::int64_t>(l2_cache_bytes() / 4 / (6 * row_bytes), 4,
                                        std::max<std::int64_t>(grid_.rows, 1));
  // First touch by the threads that will step each line: the one-step path's static schedule.
  this->zero_state();

  // The fused path's rolling planes (3 planes of u and v per intermediate level), each thread's
  // own, touched first by that thread.
  if (fuse_steps_ > 1) {
    // Tiles whose rolling planes (with the margins of rows recomputed beside them) fill at most
    // half of a core's L2 cache, at least 8 rows; then as many tiles of the batch as make a
    // multiple of the threads, each as tall as that count allows: 256 rows in tiles of 50 left
    // one thread 150 rows and the other 106.
    const std::int64_t margins = 2 * (fuse_steps_ - 1);
    const std::int64_t fit = l2_cache_bytes() / 2 / ((fuse_steps_ - 1) * 6 * row_bytes) - margins;
    const std::int64_t rows = std::max<std::int64_t>(grid_.rows, 1);
    const std::int64_t tallest =
        std::clamp<std::int64_t>(fit, std::min<std::int64_t>(rows, 8), rows);
    const auto batch = static_cast<std::int64_t>(std::max<std::size_t>(members_.size(), 1));
    const std::int64_t tiles = (rows + tallest - 1) / tallest;
    const std::int64_t shares = (batch * tiles + threads_ - 1) / threads_ * threads_;
    const std::int64_t even_tiles = std::min(rows, (shares + batch - 1) / batch);
    fused_tile_rows_ = (rows + even_tiles - 1) / even_tiles;
    constexpr std::int64_t line = 64 / sizeof(Real);
    scratch_plane_stride_ = static_cast<std::size_t>(
        ((fused_tile_rows_ + margins) * grid_.cols + line - 1) / line * line);
    const std::size_t scratch_size = RollingRows<Real>::size(fuse_steps_, scratch_plane_stride_);
    for (int t = 0; t < threads_; ++t) thread_tiles_.push_back(tiles_of(t, threads_));
    scratch_.resize(static_cast<std::size_t>(threads_));
    for (auto& buffer : scratch_) buffer = HostBuffer<Real>(scratch_size);
#pragma omp parallel num_threads(threads_)
    {
      HostBuffer<Real>& mine = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
      std::fill_n(mine.data(), mine.size(), Real(0));
    }
  }
}

// Fusing divides the memory traffic per step by the depth, at the price of the rolling planes
// (six planes of a tile per intermediate level) and of the rows recomputed at the tiles' edges
// (2 (depth - 1) rows per tile at the first level, fewer above). Measured with `grayscott bench
// --preset 3d` (256^3, seven-point, 2 threads, Intel Xeon with 2 MiB of L2 per core, copy
// bandwidth 22-23 GB/s), Gcell-updates/s by depth: float32 1: 0.75, 2: 0.95, 3: 1.20, 4: 1.31,
// 5: 1.20, 6: 1.18 (the tiles shrink as the levels grow); float64 1: 0.49, 2: 0.53, 3: 0.57,
// 4: 0.55. The choice: depth 4 or less, the deepest whose tiles keep at least 8 (depth - 1) rows
// in half of a core's L2 cache (there: 4 in float32, 3 in float64); a volume whose rows are too
// wide for depth 2 is stepped one step per pass.
template <class Real>
int VolumeEngine<Real>::automatic_fuse_steps(const Grid& grid, std::size_t, int) {
  const std::int64_t row_bytes = grid.cols * static_cast<std::int64_t>(sizeof(Real));
  for (std::int64_t depth = 4; depth >= 2; --depth) {
    const std::int64_t fit = l2_cache_bytes() / 2 / ((depth - 1) * 6 * row_bytes) - 2 * (depth - 1);
    if (fit >= 8 * (depth - 1)) return static_cast<int>(depth);
  }
  return 1;
}

template <class Real>
std::vector<typename VolumeEngine<Real>::Tile> VolumeEngine<Real>::tiles_of(int thread,
                                                                            int team) const {
  const std::int64_t tiles = (grid_.rows + fused_tile_rows_ - 1) / fused_tile_rows_;
  const auto pairs = static_cast<std::int64_t>(stepping_.size()) * tiles;
  const std::int64_t share = pairs / team, extra = pairs % team;
  const std::int64_t begin = thread * share + std::min<std::int64_t>(thread, extra);
  const std::int64_t end = begin + share + (thread < extra ? 1 : 0);
  std::vector<Tile> out;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t row_begin = i % tiles * fused_tile_rows_;
    out.push_back({stepping_[static_cast<std::size_t>(i / tiles)], row_begin,
                   std::min(grid_.rows, row_begin + fused_tile_rows_)});
  }
  return out;
}

template <class Real>
void VolumeEngine<Real>::planes_around(const Real* base, std::int64_t z,
                                       const Real* (&planes)[3]) const {
  const std::int64_t depth = grid_.depth, plane = grid_.plane_cells();
  for (int d = 0; d < 3; ++d) {
    std::int64_t p = z + d - 1;
    if (boundary_ == Boundary::Periodic) p = (p % depth + depth) % depth;
    planes[d] = p >= 0 && p < depth ? base + p * plane : nullptr;
  }
}

template <class Real>
template <StencilKind K, Boundary B>
void VolumeEngine<Real>::step_row(const Real* const (&pu)[3], const Real* const (&pv)[3],
                                  std::int64_t row, const Coefficients<Real>& c, Real* out_u,
                                  Real* out_v) const {
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  VolumeRowNeighbourhood<Real> in{};
  for (int dr = 0; dr < 3; ++dr) {
    std::int64_t r = row + dr - 1;
    if constexpr (B == Boundary::Periodic) r = (r + rows) % rows;
    if (r < 0 || r >= rows) continue;  // beyond the edge: absent
    for (int dz = 0; dz < 3; ++dz) {
      if (pu[dz] == nullptr) continue;
      in.u[dz][dr] = pu[dz] + r * cols;
      in.v[dz][dr] = pv[dz] + r * cols;
    }
  }
  update_volume_row<K, B>(in, cols, c, out_u + row * cols, out_v + row * cols);
}

template <class Real>
template <StencilKind K, Boundary B>
void VolumeEngine<Real>::advance_one_step_sweeps(std::int64_t steps) {
  const std::int64_t depth = grid_.depth, rows = grid_.rows, plane = grid_.plane_cells();
  const std::int64_t member_lines = depth * rows;
  const auto lines = static_cast<std::int64_t>(stepping_.size()) * member_lines;
  const int start = current_;
#pragma omp parallel num_threads(threads_)
  {
    const FlushSubnormals<Real> flush;
    for (std::int64_t s = 0; s < steps; ++s) {
      const int src = (start + static_cast<int>(s % 2)) % 2, dst = 1 - src;
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < lines; ++i) {
        Member& member = members_[stepping_[static_cast<std::size_t>(i / member_lines)]];
        const Line at = line(i % member_lines);
        const std::int64_t z = at.plane, r = at.row;
        const Real* pu[3];
        const Real* pv[3];
        planes_around(member.u[src], z, pu);
        planes_around(member.v[src], z, pv);
        step_row<K, B>(pu, pv, r, member.coefficients, member.u[dst] + z * plane,
                       member.v[dst] + z * plane);
      }
    }
  }
  current_ = static_cast<int>((start + steps) % 2);
}

// Temporal blocking (wavefront.hpp, with a plane of a tile of rows where the plane engine has a
// row): each pass advances one tile of rows of every plane by `depth` steps, reading the volume
// once and writing it once. Level l's planes hold the tile's rows widened by the steps still to go
// after it (depth - l rows on each side, which the neighbouring tiles also compute), and roll
// through three planes per level, small enough for the core's L2 cache. Every row of every level
// goes through update_volume_row with the inputs a one-step sweep would give it, so the result is
// bitwise the same.
template <class Real>
template <StencilKind K, Boundary B>
void VolumeEngine<Real>::fused_tile(const Tile& tile, int depth, int src, Real* scratch) {
  const std::int64_t planes = grid_.depth, rows = grid_.rows, cols = grid_.cols;
  const std::int64_t plane = grid_.plane_cells();
  Member& member = members_[tile.member];
  constexpr bool periodic = B == Boundary::Periodic;
  const RollingRows<Real> rolling(scratch, scratch_plane_stride_);
  // Level l's rows; a periodic volume's rows outside it stand for their periodic images, as do
  // its planes outside it.
  const auto first_row = [&](int l) {
    const std::int64_t r = tile.row_begin - (depth - l);
    return periodic ? r : std::max<std::int64_t>(r, 0);
  };
  const auto end_row = [&](int l) {
    const std::int64_t r = tile.row_end + (depth - l);
    return periodic ? r : std::min(r, rows);
  };
  constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max() / 4;
  const auto level_planes = [&](int) {
    return periodic ? std::pair{-unbounded, unbounded} : std::pair{std::int64_t{0}, planes};
  };
  const auto wrap = [](std::int64_t i, std::int64_t n) { return ((i % n) + n) % n; };
  step_wavefront(depth, 0, planes, level_planes, [&](int l, std::int64_t p) {
    // The planes below, at and above p at level l - 1 (the source at level 1), and the row of each
    // that holds row 0 of the volume's row numbering.
    const Real* pu[3] = {nullptr, nullptr, nullptr};
    const Real* pv[3] = {nullptr, nullptr, nullptr};
    for (int d = 0; d < 3; ++d) {
      const std::int64_t q = p + d - 1;
      if (!periodic && (q < 0 || q >= planes)) continue;  // beyond the edge: absent
      if (l == 1) {
        pu[d] = member.u[src] + wrap(q, planes) * plane;
        pv[d] = member.v[src] + wrap(q, planes) * plane;
      } else {
        pu[d] = rolling.row(l - 1, q, 0);
        pv[d] = rolling.row(l - 1, q, 1);
      }
    }
    const std::int64_t below_first = l == 1 ? 0 : first_row(l - 1);
    Real* out_u = l == depth ? member.u[1 - src] + p * plane : rolling.row(l, p, 0);
    Real* out_v = l == depth ? member.v[1 - src] + p * plane : rolling.row(l, p, 1);
    const std::int64_t out_first = l == depth ? 0 : first_row(l);
    for (std::int64_t r = first_row(l); r < end_row(l); ++r) {
      VolumeRowNeighbourhood<Real> in{};
      for (int dr = 0; dr < 3; ++dr) {
        std::int64_t row = r + dr - 1;
        if (!periodic && (row < 0 || row >= rows)) continue;  // beyond the edge: absent
        if (l == 1 && periodic) row = wrap(row, rows);
        for (int dz = 0; dz < 3; ++dz) {
          if (pu[dz] == nullptr) continue;
          in.u[dz][dr] = pu[dz] + (row - below_first) * cols;
          in.v[dz][dr] = pv[dz] + (row - below_first) * cols;
        }
      }
      update_volume_row<K, B>(in, cols, member.coefficients, out_u + (r - out_first) * cols,
                              out_v + (r - out_first) * cols);
    }
  });
}

template <class Real>
template <StencilKind K, Boundary B>
void VolumeEngine<Real>::advance_fused(std::int64_t steps) {
  const int depth = fuse_steps_;
  const std::int64_t passes = steps / depth + (steps % depth != 0 ? 1 : 0);
  const int start = current_;
#pragma omp parallel num_threads(threads_)
  {
    const FlushSubnormals<Real> flush;
    const int thread = omp_get_thread_num(), team = omp_get_num_threads();
    // The tiles split in advance, unless OpenMP gave fewer threads than asked for.
    std::vector<Tile> fewer_threads_tiles;
    if (team != threads_) fewer_threads_tiles = tiles_of(thread, team);
    const std::vector<Tile>& tiles =
        team == threads_ ? thread_tiles_[static_cast<std::size_t>(thread)] : fewer_threads_tiles;
    Real* scratch = scratch_[static_cast<std::size_t>(thread)].data();
    int src = start;
    for (std::int64_t pass = 0; pass < passes; ++pass) {
      const auto pass_depth = static_cast<int>(std::min<std::int64_t>(depth, steps - pass * depth));
      for (const Tile& tile : tiles) fused_tile<K, B>(tile, pass_depth, src, scratch);
      src = 1 - src;
#pragma omp barrier
    }
  }
  current_ = static_cast<int>((start + passes) % 2);
}

template <class Real>
void VolumeEngine<Real>::advance(std::int64_t steps) {
  if (steps <= 0) return;
  const auto run = [&]<StencilKind K, Boundary B>() {
    if (fuse_steps_ == 1)
      advance_one_step_sweeps<K, B>(steps);
    else
      advance_fused<K, B>(steps);
  };
  dispatch_boundary(boundary_, [&]<Boundary B>() {
    if (stencil_kind_ == StencilKind::SevenPoint)
      run.template operator()<StencilKind::SevenPoint, B>();
    else
      run.template operator()<StencilKind::NineteenPoint, B>();
  });
}

template <class Real>
void VolumeEngine<Real>::split_work() {
  for (int t = 0; t < static_cast<int>(thread_tiles_.size()); ++t)
    thread_tiles_[static_cast<std::size_t>(t)] = tiles_of(t, threads_);
}

template class VolumeEngine<float>;
template class VolumeEngine<double>;

}  // namespace grayscott::cpu
