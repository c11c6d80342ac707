// How one grid is split over ranks: a 2D Cartesian process grid (rows x cols of ranks), each rank
// owning one block of cells; a volume's, a 3D one (planes x rows x cols of ranks). Blocks differ
// by at most one plane, row or column when the grid does not divide evenly. Periodic boundaries
// wrap around through the topology.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/subdomain.hpp"
#include "model/model.hpp"

namespace grayscott::mpi {

struct ProcessGrid {
  int rows = 1, cols = 1;
  int planes = 1;
  int axes = 2;  // 3: a volume's split, PLANESxROWSxCOLS
  int ranks() const { return planes * rows * cols; }
  std::string text() const;  // "RxC", or "PxRxC"
};

// A half-open index range [begin, begin + size).
struct Extent {
  std::int64_t begin = 0, size = 0;
  std::int64_t end() const { return begin + size; }
};

// Part `index` of `n` items split into `parts` blocks; the first n % parts blocks hold one more.
Extent block_extent(std::int64_t n, int parts, int index);

// "RxC" (e.g. "2x3"); throws InvalidInput.
ProcessGrid parse_process_grid(std::string_view text);
// --decomposition: a plane's "RxC", or a volume's "PxRxC" (e.g. "2x1x1"); throws InvalidInput.
ProcessGrid parse_decomposition(std::string_view text);

// The process grid for `ranks` ranks: `forced` if given (checked), otherwise MPI_Dims_create's
// most square factorisation with the larger factor along the grid's longer side (fewer halo cells)
// when every block is at least `halo_depth` cells thick along both axes, else the factorisation
// that is, with the fewest cells on the cuts between blocks. Throws InvalidInput when `forced`
// makes a block thinner than `halo_depth`, or when no factorisation fits. A volume (halo depth 1)
// is split PxRxC: `forced` must be of that form; otherwise the factorisation with the fewest cells
// on the cuts between blocks of those whose blocks are at least a cell thick along every axis.
ProcessGrid choose_process_grid(int ranks, const Grid& grid, std::optional<ProcessGrid> forced,
                                int halo_depth);

// A decomposition given to a run of one process (without a launcher, or on one rank): a
// malformed one named as such, then refused unless it is the one process's whole grid (1x1 of a
// plane, 1x1x1 of a volume), as ranks refuse a split; without a launcher (`launched` false), one of
// several ranks is said to need one. Empty: nothing asked. Throws InvalidInput.
void check_one_process_decomposition(const std::string& text, const Grid& grid, bool launched);

// This rank's place: a Cartesian communicator (periodic when the boundary is), its block, and its
// eight neighbours (MPI_PROC_NULL beyond a non-periodic edge); a volume's block, its 26.
class Decomposition {
 public:
  Decomposition(MPI_Comm comm, const Grid& grid, Boundary boundary, ProcessGrid process_grid);
  ~Decomposition();
  Decomposition(const Decomposition&) = delete;
  Decomposition& operator=(const Decomposition&) = delete;

  MPI_Comm comm() const { return cart_; }
  int rank() const { return rank_; }
  const ProcessGrid& process_grid() const { return process_grid_; }
  const Grid& grid() const { return grid_; }
  bool periodic() const { return periodic_; }
  int coord_plane() const { return coords_[0]; }
  int coord_row() const { return coords_[1]; }
  int coord_col() const { return coords_[2]; }
  // This rank's block, in global cell indices (a plane's planes: [0, 1)).
  Extent planes() const { return planes_; }
  Extent rows() const { return rows_; }
  Extent cols() const { return cols_; }
  // The rank in direction (drow, dcol), each in {-1, 0, 1}.
  int neighbour(int drow, int dcol) const { return neighbours_[1][drow + 1][dcol + 1]; }
  // A volume's: the rank in direction (dplane, drow, dcol) (MPI_PROC_NULL off a plane's axis).
  int neighbour(int dplane, int drow, int dcol) const {
    return neighbours_[dplane + 1][drow + 1][dcol + 1];
  }
  // Where this rank's block meets a non-periodic edge of the grid (none when periodic).
  GlobalEdges edges() const {
    if (periodic_) return {};
    return {rows_.begin == 0,          rows_.end() == grid_.rows, cols_.begin == 0,
            cols_.end() == grid_.cols, planes_.begin == 0,        planes_.end() == grid_.depth};
  }

 private:
  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0;
  ProcessGrid process_grid_;
  Grid grid_;
  bool periodic_ = false;
  int coords_[3] = {0, 0, 0};
  Extent planes_{0, 1}, rows_, cols_;
  int neighbours_[3][3][3];
};

}  // namespace grayscott::mpi
