// One rank's block of the grid with a ghost frame `depth` cells wide, and the operations the
// distributed engine needs from whatever computes on it. The CPU implementation is
// CpuSubdomain; a GPU one (one device per rank) implements the same five operations on device
// memory, and the distributed engine and the halo exchange stay as they are.
#pragma once

#include <cstdint>
#include <span>

#include "model/model.hpp"

namespace grayscott::mpi {

// Local cell coordinates: owned cells are rows [0, rows) x cols [0, cols); ghosts extend them by
// `depth` on every side (index -depth .. rows + depth - 1).
struct LocalLayout {
  std::int64_t rows = 0, cols = 0, depth = 1;
  std::int64_t stride() const { return cols + 2 * depth; }
  std::int64_t padded_rows() const { return rows + 2 * depth; }
  std::size_t padded_cells() const { return static_cast<std::size_t>(padded_rows() * stride()); }
  std::int64_t offset(std::int64_t r, std::int64_t c) const {
    return (r + depth) * stride() + (c + depth);
  }
};

// A rectangle of local cells, half-open; may reach into the ghost frame.
struct Region {
  std::int64_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  bool empty() const { return row_end <= row_begin || col_end <= col_begin; }
  std::int64_t cells() const { return empty() ? 0 : (row_end - row_begin) * (col_end - col_begin); }
};

// Where this block touches the grid's edge (non-periodic boundaries only: a periodic grid has no
// edge, its ghosts hold the wrapped-around cells).
struct GlobalEdges {
  bool top = false, bottom = false, left = false, right = false;
};

template <class Real>
class SubdomainStepper {
 public:
  virtual ~SubdomainStepper() = default;

  // Sets the owned cells (rows*cols each, row-major) of the current state.
  virtual void load(std::span<const Real> u, std::span<const Real> v) = 0;
  // Copies the owned cells of the current state out (a null pointer skips that field).
  virtual void read_owned(Real* u, Real* v) = 0;
  // Copies `region` of the current state into `buffer` (u's cells, then v's, row-major); done when
  // it returns, so the buffer can be sent.
  virtual void pack(const Region& region, Real* buffer) = 0;
  // The reverse: fills `region` of the current state (ghost cells) from `buffer`.
  virtual void unpack(const Region& region, const Real* buffer) = 0;
  // Computes the next state of every cell in `region` from the current state. May run
  // asynchronously (a GPU stream); regions of one step do not overlap.
  virtual void step(const Region& region) = 0;
  // Makes the next state current (after every region of one step was computed).
  virtual void swap() = 0;
  // Waits for asynchronous work (none on the CPU).
  virtual void synchronize() {}
};

}  // namespace grayscott::mpi
