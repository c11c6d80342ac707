// One block of a grid that is split over many processes, with a ghost frame `depth` cells wide,
// and the operations the distributed engine (src/mpi) needs from the backend that computes on it.
// Each backend implements it where it keeps its state: cpu::CpuSubdomain in host memory,
// cuda::make_subdomain on a device, where only the halo messages leave device memory. The
// decomposition, the halo exchange and the parallel output know nothing of either.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model.hpp"

namespace grayscott {

// Local cell coordinates: owned cells are rows [0, rows) x cols [0, cols); ghosts extend them by
// `depth` on every side (index -depth .. rows + depth - 1). A block of a volume (planes > 0) owns
// planes [0, planes) of such rows and columns, with `depth` ghost planes on either side, stored
// plane after plane; a plane's block has planes = 0 and one plane, index 0.
struct LocalLayout {
  std::int64_t rows = 0, cols = 0, depth = 1;
  std::int64_t planes = 0;
  bool volume() const { return planes > 0; }
  std::int64_t stride() const { return cols + 2 * depth; }
  std::int64_t padded_rows() const { return rows + 2 * depth; }
  std::int64_t padded_planes() const { return volume() ? planes + 2 * depth : 1; }
  std::int64_t plane_stride() const { return padded_rows() * stride(); }
  std::size_t padded_cells() const {
    return static_cast<std::size_t>(padded_planes() * padded_rows() * stride());
  }
  std::int64_t offset(std::int64_t r, std::int64_t c) const {
    return (r + depth) * stride() + (c + depth);
  }
  // Cell (z, r, c) of a volume's block; of a plane's, z is 0, its one plane.
  std::int64_t offset(std::int64_t z, std::int64_t r, std::int64_t c) const {
    return (volume() ? z + depth : z) * plane_stride() + offset(r, c);
  }
};

// Throws InvalidInput unless a block of `grid` can be laid out as `layout`: a plane's for a
// plane; for a volume a volume's, its halo one cell deep (a volume's blocks exchange every step).
// Every backend's factory asks before it makes a block.
inline void check_block_layout(const Grid& grid, const LocalLayout& layout) {
  if (grid.volume() != layout.volume()) {
    throw InvalidInput(grid.volume() ? "a volume's MPI block needs a layout with its planes"
                                     : "a plane's MPI block was given a volume's layout");
  }
  if (layout.volume() && layout.depth != 1) {
    throw InvalidInput("a volume's block needs its planes and a halo depth of 1");
  }
}

// A rectangle of local cells, half-open; may reach into the ghost frame. In a volume's block, the
// same rectangle in planes [plane_begin, plane_end); a plane's regions keep the one plane [0, 1).
struct Region {
  std::int64_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  std::int64_t plane_begin = 0, plane_end = 1;
  bool empty() const {
    return row_end <= row_begin || col_end <= col_begin || plane_end <= plane_begin;
  }
  std::int64_t rows() const { return empty() ? 0 : row_end - row_begin; }
  std::int64_t cols() const { return empty() ? 0 : col_end - col_begin; }
  std::int64_t planes() const { return empty() ? 0 : plane_end - plane_begin; }
  std::int64_t cells() const { return planes() * rows() * cols(); }
};

// Where this block touches the grid's edge (non-periodic boundaries only: a periodic grid has no
// edge, its ghosts hold the wrapped-around cells). A volume's block also has a front (plane 0)
// and a back (the last plane).
struct GlobalEdges {
  bool top = false, bottom = false, left = false, right = false;
  bool front = false, back = false;
};

// The halo messages of one exchange. Message i carries `send[i]`'s cells of u then of v,
// row-major (a volume's plane after plane), at offset message_offset(send, i) of the send area;
// `receive[i]` likewise fills ghost cells from the receive area.
struct HaloPlan {
  std::vector<Region> send, receive;
};

// Where message i of `regions` starts in its area (values, not bytes), and the area's size at i ==
// regions.size().
inline std::size_t message_offset(std::span<const Region> regions, std::size_t i) {
  std::size_t offset = 0;
  for (std::size_t j = 0; j < i; ++j) offset += static_cast<std::size_t>(2 * regions[j].cells());
  return offset;
}

template <class Real>
class SubdomainStepper {
 public:
  virtual ~SubdomainStepper() = default;

  // Sets the owned cells (rows*cols each, row-major; a volume's planes*rows*cols, plane after
  // plane) of the current state.
  virtual void load(std::span<const Real> u, std::span<const Real> v) = 0;
  // Copies `region` of the current state (region.cells() values per field, row-major, plane after
  // plane) to the host;
  // a null pointer skips that field. Waits for any computation in flight.
  virtual void read(const Region& region, Real* u, Real* v) = 0;

  // Allocates the send and receive areas for `plan` (called once, before the first exchange).
  virtual void plan_halos(const HaloPlan& plan) = 0;
  // The areas the messages travel from and to: host memory, or device memory that a CUDA-aware
  // MPI reads and writes directly (messages_in_device_memory()).
  virtual Real* send_area() = 0;
  virtual Real* receive_area() = 0;
  virtual bool messages_in_device_memory() const { return false; }
  // Gathers every send region of the current state into the send area; done when it returns, so
  // the messages can be sent, and so is the previous unpack_halos(), so the receive area may be
  // overwritten.
  virtual void pack_halos() = 0;
  // Scatters messages [first, last) of the receive area into their ghost cells of the current
  // state; steps issued afterwards see them. (The exchange unpacks the messages a block sends
  // itself, around a periodic axis it spans alone, before the others have arrived.)
  virtual void unpack_halos(std::size_t first, std::size_t last) = 0;

  // Computes the next state of every cell in `region` from the current state. May run
  // asynchronously (a GPU stream); regions of one step do not overlap.
  virtual void step(const Region& region) = 0;
  // step() over the cells of `outer` that are not in `inner` (inner lies within outer): the rim
  // left around an interior computed earlier. A GPU does a plane's in one launch.
  // By default, step() over its slabs: a volume's planes of `outer` before and after `inner`,
  // then in inner's planes (a plane's one plane) the rows above and below it and the columns
  // beside it.
  virtual void step_frame(const Region& outer, const Region& inner) {
    const auto planes = [](Region r, std::int64_t begin, std::int64_t end) {
      r.plane_begin = begin, r.plane_end = end;
      return r;
    };
    const std::int64_t z0 = inner.plane_begin, z1 = inner.plane_end;
    step(planes(outer, outer.plane_begin, z0));
    step(planes(outer, z1, outer.plane_end));
    step({outer.row_begin, inner.row_begin, outer.col_begin, outer.col_end, z0, z1});
    step({inner.row_end, outer.row_end, outer.col_begin, outer.col_end, z0, z1});
    step({inner.row_begin, inner.row_end, outer.col_begin, inner.col_begin, z0, z1});
    step({inner.row_begin, inner.row_end, inner.col_end, outer.col_end, z0, z1});
  }
  // Whether a rim's columns (one cell in each row) cost far more per cell than rows do (a CPU
  // volume block steps them cell by cell): then the engine waits for the halo and steps its
  // region whole rather than step an interior while the halo travels and such columns after.
  virtual bool column_rims_costly() const { return false; }
  // Makes the next state current (after every region of one step was computed).
  virtual void swap() = 0;
  // Steps regions.size() times, step i computing regions[i] and making it current, as step() then
  // swap() would; each region lies within the one before grown by a cell (the shrinking regions
  // after a halo exchange). The CPU fuses them into one pass over the block.
  virtual void step_chain(std::span<const Region> regions) {
    for (const Region& region : regions) {
      step(region);
      swap();
    }
  }
  // Waits for asynchronous work (none on the CPU).
  virtual void synchronize() {}
};

}  // namespace grayscott
