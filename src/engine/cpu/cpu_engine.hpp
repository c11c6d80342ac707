// The CPU backend: OpenMP threads over rows (and batch members), a vectorised inner loop, no
// allocation while stepping, and results bitwise identical for any thread count and fuse depth.
// Two paths: one step per sweep over the grid (fuse_steps = 1), or several steps per sweep by
// temporal blocking (fuse_steps > 1: each thread carries its band of rows through the steps in a
// wavefront of rows kept in its cache, reading and writing the grid once per pass).
#pragma once

#include <span>
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
  void set_rates(std::size_t member, const Parameters& rates) override;
  bool freeze(std::size_t member) override;
  void home_state() override;
  void capture(FieldSet fields) override;
  void read_captured(std::size_t member, Real* u, Real* v) override;
  bool copy_state(std::size_t member, Real* u, Real* v) override;
  typename Engine<Real>::StateView state() override;

  // The deepest fusion accepted: beyond it the rolling rows outgrow any core's cache.
  static constexpr int max_fuse_steps = 64;

  int threads() const { return threads_; }
  // Steps fused per pass over the grid: the option given, or the automatic choice for 0.
  int fuse_steps() const { return fuse_steps_; }
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
  struct Member {
    Coefficients<Real> coefficients;
    Real* u[2];  // ping-pong: [current] holds the state; this member's part of state_u_
    Real* v[2];
    HostBuffer<Real> captured_u, captured_v;
  };

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

  Grid grid_;
  Boundary boundary_;
  StencilKind stencil_kind_;
  std::vector<Real> weights_;
  std::vector<Member> members_;
  // The members stepped, in order: all but those frozen (freeze()).
  std::vector<std::size_t> stepping_;
  // Every member's fields in one array per buffer, member after member: one stride from a member
  // to the next, so a batch's state is one (members, rows, cols) array (see state()).
  HostBuffer<Real> state_u_[2], state_v_[2];
  int threads_;
  int fuse_steps_;
  std::size_t scratch_row_stride_ = 0;           // one rolling row, padded to a cache line
  std::vector<HostBuffer<Real>> scratch_;        // per thread: the fused path's rolling rows
  std::vector<std::vector<Band>> thread_bands_;  // per thread: its bands, for the fused path
  int current_ = 0;
  FieldSet captured_{false, false};
  // A batch of members small enough for a core's cache: each thread takes whole members through
  // all the steps of an advance, one member at a time (see advance_members_in_cache).
  bool members_in_cache_ = false;
};

}  // namespace grayscott::cpu
