// The CPU backend: OpenMP threads over rows (and batch members), a vectorised inner loop, no
// allocation while stepping, and results bitwise identical for any thread count and fuse depth.
// Two paths: one step per sweep over the grid (fuse_steps = 1), or several steps per sweep by
// temporal blocking (fuse_steps > 1: each thread carries its band of rows through the steps in a
// wavefront of rows kept in its cache, reading and writing the grid once per pass).
#pragma once

#include <span>
#include <vector>

#include "engine/cpu/host_batch.hpp"
#include "engine/cpu/row_kernel.hpp"

namespace grayscott::cpu {

template <class Real>
class CpuEngine final : public HostBatch<Real, CpuEngine<Real>> {
  using Base = HostBatch<Real, CpuEngine<Real>>;
  friend Base;

 public:
  CpuEngine(const Problem& problem, std::span<const Parameters> member_params,
            const EngineOptions& options);

  void advance(std::int64_t steps) override;
  void capture(FieldSet fields) override;

  // The deepest fusion accepted: beyond it the rolling rows outgrow any core's cache.
  static constexpr int max_fuse_steps = 64;

  // The automatic choice of fuse_steps for this grid, batch and thread count (see cpu_engine.cpp).
  static int automatic_fuse_steps(const Grid& grid, std::size_t members, int threads);
  // Threads when none are asked for: all of OpenMP's, but no more than the grid can use.
  static int automatic_threads(const Grid& grid, std::size_t members);
  // Whether a batch steps member by member in cache: many members (4 per thread at least) whose
  // two buffers of u and v fill at most half of a core's L2 cache.
  static bool steps_members_in_cache(const Grid& grid, std::size_t members, int threads);

  // Test-only fault injection: when set, capture() hands it the fuse depth and each member's
  // captured u, which it may alter, so that a test can plant a fault at one depth and see the
  // checks refuse it (tests/test_bench.cpp). Null, and never set, outside the tests.
  static inline void (*test_only_fault_on_capture)(int fuse_steps, std::span<Real> u) = nullptr;

 private:
  using typename Base::Member;
  using Base::boundary_;
  using Base::current_;
  using Base::fuse_steps_;
  using Base::grid_;
  using Base::members_;
  using Base::stencil_kind_;
  using Base::stepping_;
  using Base::threads_;

  CpuEngine(const Problem& problem, std::span<const Parameters> member_params,
            const EngineOptions& options, int threads);
  // The options, or InvalidInput for threads or a fuse depth out of range (before any memory is
  // taken).
  static const EngineOptions& checked(const EngineOptions& options);

  // HostBatch's order of a member's lines: its rows, in order.
  std::int64_t member_lines() const { return grid_.rows; }
  std::size_t line_offset(std::int64_t row) const {
    return static_cast<std::size_t>(row * grid_.cols);
  }
  void split_work();

  // A thread's share of the rows of one member: the output rows [row_begin, row_end).
  struct Band {
    std::size_t member;
    std::int64_t row_begin, row_end;
  };

  template <StencilKind K, Boundary B>
  void advance_one_step_sweeps(std::int64_t steps);
  template <StencilKind K, Boundary B>
  void advance_fused(std::int64_t steps);
  template <StencilKind K, Boundary B>
  void advance_members_in_cache(std::int64_t steps);
  template <StencilKind K, Boundary B>
  void fused_band(const Band& band, int depth, int src, Real* scratch);
  RowNeighbourhood<Real> neighbourhood(const Real* u, const Real* v, std::int64_t row) const;
  // One step of one row of one member, from buffer src into buffer dst: the one-step path and the
  // in-cache batch path share it.
  template <StencilKind K, Boundary B>
  void step_row(Member& member, int src, int dst, std::int64_t row) const;
  // The bands of thread `thread` out of `team`: the same split of (member, row) pairs as a static
  // OpenMP schedule over them, so each thread steps the rows it touched first.
  std::vector<Band> bands_of(int thread, int team) const;

  std::vector<Real> weights_;
  std::size_t scratch_row_stride_ = 0;           // one rolling row, padded to a cache line
  std::vector<HostBuffer<Real>> scratch_;        // per thread: the fused path's rolling rows
  std::vector<std::vector<Band>> thread_bands_;  // per thread: its bands, for the fused path
  // A batch of members small enough for a core's cache: each thread takes whole members through
  // all the steps of an advance, one member at a time (see advance_members_in_cache).
  bool members_in_cache_ = false;
};

}  // namespace grayscott::cpu
