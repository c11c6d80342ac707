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

#include "engine/cpu/host_batch.hpp"
#include "engine/cpu/volume_kernel.hpp"

namespace grayscott::cpu {

template <class Real>
class VolumeEngine final : public HostBatch<Real, VolumeEngine<Real>> {
  using Base = HostBatch<Real, VolumeEngine<Real>>;
  friend Base;

 public:
  VolumeEngine(const Problem& problem, std::span<const Parameters> member_params,
               const EngineOptions& options);

  void advance(std::int64_t steps) override;

  // The deepest fusion accepted: each level keeps six planes of a tile in the thread's cache, and
  // the tiles' recomputed margins grow with the depth.
  static constexpr int max_fuse_steps = 16;

  // The automatic choice of fuse_steps for this volume, batch and thread count (volume_engine.cpp).
  static int automatic_fuse_steps(const Grid& grid, std::size_t members, int threads);

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

  VolumeEngine(const Problem& problem, std::span<const Parameters> member_params,
               const EngineOptions& options, int threads);
  // The options, or InvalidInput for threads or a fuse depth out of range or a plane's stencil
  // (before any memory is taken).
  static const EngineOptions& checked(const Problem& problem, const EngineOptions& options);

  // HostBatch's order of a member's lines: line(i) below.
  std::int64_t member_lines() const { return grid_.depth * grid_.rows; }
  std::size_t line_offset(std::int64_t i) const {
    const Line at = line(i);
    return static_cast<std::size_t>((at.plane * grid_.rows + at.row) * grid_.cols);
  }
  void split_work();

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

  std::int64_t tile_rows_ = 1;
  std::int64_t fused_tile_rows_ = 1;             // the rows of a fused pass's tile
  std::size_t scratch_plane_stride_ = 0;         // one rolling plane of a tile and its margins
  std::vector<HostBuffer<Real>> scratch_;        // per thread: the fused path's rolling planes
  std::vector<std::vector<Tile>> thread_tiles_;  // per thread: its tiles, for the fused path
};

}  // namespace grayscott::cpu
