// The CPU backend's engine for volumes (Grid::depth > 1), beside CpuEngine for planes, with its
// contracts: batches of members with their own rates, freezing, ping-pong buffers shown through
// state(), no allocation while stepping, float32 subnormals flushed, and results bitwise identical
// for any thread count and fuse depth. OpenMP threads over (member, plane, row) lines, a
// vectorised loop over each row's columns (volume_kernel.hpp). Two paths: one step per sweep
// (fuse_steps = 1), or several steps per sweep by temporal blocking (fuse_steps > 1: each thread
// carries a tile of rows of every plane through the steps in a wavefront of planes, the 2.5D
// scheme of wavefront.hpp with a tile's plane where the plane engine has a row).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/cpu/volume_kernel.hpp"
#include "engine/engine.hpp"
#include "engine/host_buffer.hpp"

namespace grayscott::cpu {

template <class Real>
class VolumeEngine final : public Engine<Real> {
 public:
  VolumeEngine(const Problem& problem, std::span<const Parameters> member_params,
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

  // The deepest fusion accepted: each level keeps six planes of a tile in the thread's cache, and
  // the tiles' recomputed margins grow with the depth.
  static constexpr int max_fuse_steps = 16;

  int threads() const { return threads_; }
  // Steps fused per pass over the volume: the option given, or the automatic choice for 0.
  int fuse_steps() const { return fuse_steps_; }
  // The automatic choice of fuse_steps for this volume, batch and thread count (volume_engine.cpp).
  static int automatic_fuse_steps(const Grid& grid, std::size_t members, int threads);

 private:
  struct Member {
    Coefficients<Real> coefficients;
    Real* u[2];  // ping-pong: [current] holds the state; this member's part of state_u_
    Real* v[2];
    HostBuffer<Real> captured_u, captured_v;
  };

  // The fused path's unit of work: rows [row_begin, row_end) of every plane of one member.
  struct Tile {
    std::size_t member;
    std::int64_t row_begin, row_end;
  };

  // A member's line i (0 .. depth * rows) in the order the sweeps take them: tiles of tile_rows_
  // rows, each tile through every plane before the next, so that the rows of the planes below and
  // above a row are still in the core's cache when it is stepped (plane after plane, the plane
  // below was read two planes' worth of traffic earlier: more than an L2 cache holds).
  struct Line {
    std::int64_t plane, row;
  };
  Line line(std::int64_t i) const {
    const std::int64_t full = grid_.depth * tile_rows_;  // the lines of a full tile
    const std::int64_t tile = i / full, first_row = tile * tile_rows_;
    const std::int64_t height = std::min(tile_rows_, grid_.rows - first_row);
    const std::int64_t in_tile = i - tile * full;
    return {in_tile / height, first_row + in_tile % height};
  }

  // The three planes around plane z (below, at, above) of the field at `base`: null beyond a
  // non-periodic edge, wrapped on a periodic volume.
  void planes_around(const Real* base, std::int64_t z, const Real* (&planes)[3]) const;
  // Row r of the next step of the plane whose three planes around are `pu`, `pv`, into the plane
  // at out_u, out_v.
  template <StencilKind K, Boundary B>
  void step_row(const Real* const (&pu)[3], const Real* const (&pv)[3], std::int64_t row,
                const Coefficients<Real>& c, Real* out_u, Real* out_v) const;
  template <StencilKind K, Boundary B>
  void advance_one_step_sweeps(std::int64_t steps);
  template <StencilKind K, Boundary B>
  void advance_fused(std::int64_t steps);
  template <StencilKind K, Boundary B>
  void fused_tile(const Tile& tile, int depth, int src, Real* scratch);
  // The tiles of thread `thread` out of `team`: OpenMP's static split of the (member, tile) pairs
  // of the members stepped.
  std::vector<Tile> tiles_of(int thread, int team) const;

  Grid grid_;
  Boundary boundary_;
  StencilKind stencil_kind_;
  std::vector<Member> members_;
  std::vector<std::size_t> stepping_;  // the members stepped, in order: all but those frozen
  // Every member's fields in one array per buffer, member after member (see state()).
  HostBuffer<Real> state_u_[2], state_v_[2];
  int threads_;
  int fuse_steps_;
  std::int64_t tile_rows_ = 1;
  std::int64_t fused_tile_rows_ = 1;             // the rows of a fused pass's tile
  std::size_t scratch_plane_stride_ = 0;         // one rolling plane of a tile and its margins
  std::vector<HostBuffer<Real>> scratch_;        // per thread: the fused path's rolling planes
  std::vector<std::vector<Tile>> thread_tiles_;  // per thread: its tiles, for the fused path
  int current_ = 0;
  FieldSet captured_{false, false};
};

}  // namespace grayscott::cpu
