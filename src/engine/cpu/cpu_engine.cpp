#include "engine/cpu/cpu_engine.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "engine/cpu/streaming_copy.hpp"
#include "engine/cpu/subnormals.hpp"
#include "engine/cpu/wavefront.hpp"

namespace grayscott::cpu {

template <class Real>
CpuEngine<Real>::CpuEngine(const Problem& problem, std::span<const Parameters> member_params,
                           const EngineOptions& options)
    : CpuEngine(problem, member_params, checked(options),
                options.threads > 0 ? options.threads
                                    : automatic_threads(problem.grid, member_params.size())) {}

template <class Real>
const EngineOptions& CpuEngine<Real>::checked(const EngineOptions& options) {
  if (options.threads < 0) throw InvalidInput("threads must be a positive integer");
  if (options.fuse_steps < 0 || options.fuse_steps > max_fuse_steps) {
    throw InvalidInput("fuse must be 0 (the backend's best) or a whole number from 1 to " +
                       std::to_string(max_fuse_steps) + " on the CPU, got " +
                       std::to_string(options.fuse_steps));
  }
  return options;
}

template <class Real>
CpuEngine<Real>::CpuEngine(const Problem& problem, std::span<const Parameters> member_params,
                           const EngineOptions& options, int threads)
    : Base(problem, member_params, threads,
           options.fuse_steps > 0
               ? options.fuse_steps
               : automatic_fuse_steps(problem.grid, member_params.size(), threads),
           // A grid streamed through memory gets huge pages (fewer TLB misses); a batch stepped
           // member by member from the cache gets ordinary pages, which keep its four fields out
           // of each other's cache sets (see HostBuffer::small_pages).
           options.fuse_steps == 0 &&
                   steps_members_in_cache(problem.grid, member_params.size(), threads)
               ? &HostBuffer<Real>::small_pages
               : &HostBuffer<Real>::huge_pages),
      weights_(problem.stencil.weights.begin(), problem.stencil.weights.end()),
      members_in_cache_(options.fuse_steps == 0 &&
                        steps_members_in_cache(problem.grid, member_params.size(), threads)) {
  // First touch by the threads and rows that will step them: the same static schedule as advance().
  this->zero_state();
  const std::int64_t cols = grid_.cols;

  // The fused path's rolling rows (3 rows of u and v per intermediate level), each thread's own,
  // touched first by that thread.
  if (fuse_steps_ > 1) {
    constexpr std::size_t line = 64 / sizeof(Real);
    scratch_row_stride_ = (static_cast<std::size_t>(cols) + line - 1) / line * line;
    const std::size_t scratch_size = RollingRows<Real>::size(fuse_steps_, scratch_row_stride_);
    for (int t = 0; t < threads_; ++t) thread_bands_.push_back(bands_of(t, threads_));
    scratch_.resize(static_cast<std::size_t>(threads_));
    for (auto& buffer : scratch_) buffer = HostBuffer<Real>(scratch_size);
#pragma omp parallel num_threads(threads_)
    {
      HostBuffer<Real>& mine = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
      std::fill_n(mine.data(), mine.size(), Real(0));
    }
  }
}

// Deeper fusion divides the memory traffic and the synchronisations per step by the depth, at the
// price of the rolling rows (6 rows per intermediate level) and of the rows recomputed at band
// edges (about depth - 1 rows per band and step). The choice: as deep as possible, up to 16 (past
// it the gain measured on the seed preset is within noise), while the rolling rows fill at most
// half of a core's L2 cache and the recomputed rows stay under 1/16 of a band. On the seed preset
// (1080 x 1920, 2 threads, 1 MiB L2) that is 12 in float32 and 6 in float64; small grids get 1.
namespace {
std::int64_t l2_cache_bytes() {
  constexpr std::int64_t default_l2_bytes = 512 * 1024;
  const long reported_l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return reported_l2 > 0 ? reported_l2 : default_l2_bytes;
}
}  // namespace

template <class Real>
int CpuEngine<Real>::automatic_threads(const Grid& grid, std::size_t members) {
  // A thread per 4096 cells at most: on a smaller grid the team's barriers cost more than the
  // cells, and threads spinning at them take the cores the writer thread needs (100000 images of
  // 1x1 on two cores took a minute, and seconds on one thread).
  constexpr std::int64_t cells_per_thread = 4096;
  const std::int64_t useful = std::max<std::int64_t>(
      1, grid.cells() * static_cast<std::int64_t>(members) / cells_per_thread);
  return static_cast<int>(std::min<std::int64_t>(omp_get_max_threads(), useful));
}

template <class Real>
bool CpuEngine<Real>::steps_members_in_cache(const Grid& grid, std::size_t members, int threads) {
  const std::int64_t member_bytes = 4 * grid.cells() * static_cast<std::int64_t>(sizeof(Real));
  return static_cast<std::int64_t>(members) >= 4 * std::max(threads, 1) &&
         member_bytes <= l2_cache_bytes() / 2;
}

template <class Real>
int CpuEngine<Real>::automatic_fuse_steps(const Grid& grid, std::size_t members, int threads) {
  constexpr std::int64_t deepest = 16;
  const std::int64_t l2_bytes = l2_cache_bytes();
  const std::int64_t level_bytes = 6 * grid.cols * static_cast<std::int64_t>(sizeof(Real));
  const std::int64_t levels_in_cache = (l2_bytes / 2) / std::max<std::int64_t>(level_bytes, 1);
  const std::int64_t band_rows =
      static_cast<std::int64_t>(members) * grid.rows / std::max(threads, 1);
  const std::int64_t depth = std::min({deepest, levels_in_cache + 1, band_rows / 16});
  return static_cast<int>(std::max<std::int64_t>(depth, 1));
}

template <class Real>
std::vector<typename CpuEngine<Real>::Band> CpuEngine<Real>::bands_of(int thread, int team) const {
  // OpenMP's static schedule without a chunk size: the first (pairs % team) threads get one more.
  // Over the members stepped: a frozen member's rows go to nobody.
  const std::int64_t rows = grid_.rows;
  const auto pairs = static_cast<std::int64_t>(stepping_.size()) * rows;
  const std::int64_t share = pairs / team, extra = pairs % team;
  const std::int64_t begin = thread * share + std::min<std::int64_t>(thread, extra);
  const std::int64_t end = begin + share + (thread < extra ? 1 : 0);
  std::vector<Band> bands;
  for (std::int64_t i = begin; i < end;) {
    const std::int64_t index = i / rows, row = i % rows;
    const std::int64_t row_end = std::min(rows, row + (end - i));
    bands.push_back({stepping_[static_cast<std::size_t>(index)], row, row_end});
    i += row_end - row;
  }
  return bands;
}

template <class Real>
RowNeighbourhood<Real> CpuEngine<Real>::neighbourhood(const Real* u, const Real* v,
                                                      std::int64_t row) const {
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  RowNeighbourhood<Real> n{};
  // The row itself is always in the grid; a row above or below beyond a non-periodic edge is
  // absent (update_row applies the boundary rule), a periodic grid's wraps.
  for (int d = 0; d < 3; ++d) {
    std::int64_t r = row + d - 1;
    if (boundary_ == Boundary::Periodic) r = (r + rows) % rows;
    if (r >= 0 && r < rows) {
      n.u[d] = u + r * cols;
      n.v[d] = v + r * cols;
    }
  }
  return n;
}

template <class Real>
template <StencilKind K, Boundary B>
void CpuEngine<Real>::step_row(Member& member, int src, int dst, std::int64_t row) const {
  const std::int64_t cols = grid_.cols;
  const auto in = neighbourhood(member.u[src], member.v[src], row);
  update_row<K, B>(in, cols, RowEnds{}, member.coefficients, weights_.data(),
                   member.u[dst] + row * cols, member.v[dst] + row * cols);
}

template <class Real>
template <StencilKind K, Boundary B>
void CpuEngine<Real>::advance_one_step_sweeps(std::int64_t steps) {
  const std::int64_t rows = grid_.rows;
  const auto nmembers = static_cast<std::int64_t>(stepping_.size());
  const int start = current_;
#pragma omp parallel num_threads(threads_)
  {
    const FlushSubnormals<Real> flush;
    for (std::int64_t s = 0; s < steps; ++s) {
      const int src = (start + static_cast<int>(s % 2)) % 2, dst = 1 - src;
#pragma omp for collapse(2) schedule(static)
      for (std::int64_t m = 0; m < nmembers; ++m) {
        for (std::int64_t r = 0; r < rows; ++r) {
          step_row<K, B>(members_[stepping_[static_cast<std::size_t>(m)]], src, dst, r);
        }
      }
    }
  }
  current_ = static_cast<int>((start + steps) % 2);
}

// Temporal blocking (wavefront.hpp): each pass advances a band of output rows by `depth` steps
// while reading the grid once and writing it once.
template <class Real>
template <StencilKind K, Boundary B>
void CpuEngine<Real>::fused_band(const Band& band, int depth, int src, Real* scratch) {
  const std::int64_t rows = grid_.rows, cols = grid_.cols;
  Member& member = members_[band.member];
  const Real* src_u = member.u[src];
  const Real* src_v = member.v[src];
  Real* dst_u = member.u[1 - src];
  Real* dst_v = member.v[1 - src];
  constexpr bool periodic = B == Boundary::Periodic;
  const RollingRows<Real> rolling(scratch, scratch_row_stride_);
  const Real* w = weights_.data();
  // Every level may have the grid's rows; a periodic grid's rows outside it stand for their
  // periodic images.
  constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max() / 4;
  const auto level_rows = [&](int) {
    return periodic ? std::pair{-unbounded, unbounded} : std::pair{std::int64_t{0}, rows};
  };
  step_wavefront(depth, band.row_begin, band.row_end, level_rows, [&](int l, std::int64_t r) {
    RowNeighbourhood<Real> in{};
    for (int d = 0; d < 3; ++d) {
      const std::int64_t row = r + d - 1;
      if (!periodic && (row < 0 || row >= rows)) continue;  // beyond the edge: absent
      if (l == 1) {
        const std::int64_t wrapped = periodic ? ((row % rows) + rows) % rows : row;
        in.u[d] = src_u + wrapped * cols;
        in.v[d] = src_v + wrapped * cols;
      } else {
        in.u[d] = rolling.row(l - 1, row, 0);
        in.v[d] = rolling.row(l - 1, row, 1);
      }
    }
    Real* out_u = l == depth ? dst_u + r * cols : rolling.row(l, r, 0);
    Real* out_v = l == depth ? dst_v + r * cols : rolling.row(l, r, 1);
    update_row<K, B>(in, cols, RowEnds{}, member.coefficients, w, out_u, out_v);
  });
}

template <class Real>
template <StencilKind K, Boundary B>
void CpuEngine<Real>::advance_fused(std::int64_t steps) {
  const int depth = fuse_steps_;
  const std::int64_t passes = steps / depth + (steps % depth != 0 ? 1 : 0);
  const int start = current_;
#pragma omp parallel num_threads(threads_)
  {
    const FlushSubnormals<Real> flush;
    const int thread = omp_get_thread_num(), team = omp_get_num_threads();
    // The bands split in advance, unless OpenMP gave fewer threads than asked for.
    std::vector<Band> fewer_threads_bands;
    if (team != threads_) fewer_threads_bands = bands_of(thread, team);
    const std::vector<Band>& bands =
        team == threads_ ? thread_bands_[static_cast<std::size_t>(thread)] : fewer_threads_bands;
    Real* scratch = scratch_[static_cast<std::size_t>(thread)].data();
    int src = start;
    for (std::int64_t pass = 0; pass < passes; ++pass) {
      const auto pass_depth = static_cast<int>(std::min<std::int64_t>(depth, steps - pass * depth));
      for (const Band& band : bands) fused_band<K, B>(band, pass_depth, src, scratch);
      src = 1 - src;
#pragma omp barrier
    }
  }
  current_ = static_cast<int>((start + passes) % 2);
}

// A batch of small members (the course's vmap lesson): streaming the whole batch through memory
// once per step (or per fused pass) is bound by the memory bandwidth, while one member's fields
// fit in a core's cache. So each thread takes whole members, the same static split of members as
// the first touch, and carries each through every step of the advance before the next: the
// member's rows stay in cache from step to step. (Fusing the steps within a member as well, one
// band of all its rows, measured 0.93 of this on 128x128 members: from cache, the steps are bound
// by arithmetic, not by traffic.) The rows between the first and the last go through one loop
// (update_inside_rows), without a neighbourhood or a dispatch per row, which a 64-wide member's row
// felt; each row rounds as update_row rounds it in the other paths, so the result is bitwise the
// same.
template <class Real>
template <StencilKind K, Boundary B>
void CpuEngine<Real>::advance_members_in_cache(std::int64_t steps) {
  const std::int64_t rows = grid_.rows;
  const auto nmembers = static_cast<std::int64_t>(stepping_.size());
  const int start = current_;
#pragma omp parallel num_threads(threads_)
  {
    const FlushSubnormals<Real> flush;
#pragma omp for schedule(static)
    for (std::int64_t m = 0; m < nmembers; ++m) {
      Member& member = members_[stepping_[static_cast<std::size_t>(m)]];
      for (std::int64_t s = 0; s < steps; ++s) {
        const int src = (start + static_cast<int>(s % 2)) % 2, dst = 1 - src;
        // The first and last rows meet the grid's edge (or wrap); the rows between, one loop.
        step_row<K, B>(member, src, dst, 0);
        update_inside_rows<K, B>(member.u[src], member.v[src], 1, rows - 1, grid_.cols,
                                 member.coefficients, weights_.data(), member.u[dst],
                                 member.v[dst]);
        if (rows > 1) step_row<K, B>(member, src, dst, rows - 1);
      }
    }
  }
  current_ = static_cast<int>((start + steps) % 2);
}

template <class Real>
void CpuEngine<Real>::advance(std::int64_t steps) {
  if (steps <= 0) return;
  dispatch_stencil_and_boundary(stencil_kind_, boundary_, [&]<StencilKind K, Boundary B>() {
    if (members_in_cache_) {
      advance_members_in_cache<K, B>(steps);
    } else if (fuse_steps_ == 1) {
      advance_one_step_sweeps<K, B>(steps);
    } else {
      advance_fused<K, B>(steps);
    }
  });
}

template <class Real>
void CpuEngine<Real>::split_work() {
  for (int t = 0; t < static_cast<int>(thread_bands_.size()); ++t)
    thread_bands_[static_cast<std::size_t>(t)] = bands_of(t, threads_);
}

template <class Real>
void CpuEngine<Real>::capture(FieldSet fields) {
  Base::capture(fields);
  if (test_only_fault_on_capture && fields.u) {
    for (Member& member : members_) {
      test_only_fault_on_capture(
          fuse_steps_, {member.captured_u.data(), static_cast<std::size_t>(grid_.cells())});
    }
  }
}

template class CpuEngine<float>;
template class CpuEngine<double>;

}  // namespace grayscott::cpu
