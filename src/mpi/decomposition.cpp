#include "mpi/decomposition.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

namespace grayscott::mpi {

Extent block_extent(std::int64_t n, int parts, int index) {
  const std::int64_t base = n / parts, extra = n % parts;
  const std::int64_t begin = index * base + std::min<std::int64_t>(index, extra);
  return {begin, base + (index < extra ? 1 : 0)};
}

ProcessGrid parse_process_grid(std::string_view text) {
  const auto bad = [&] {
    return InvalidInput("decomposition: expected ROWSxCOLS of ranks (e.g. 2x2), got '" +
                        std::string(text) + "'");
  };
  const auto x = text.find('x');
  if (x == std::string_view::npos) throw bad();
  ProcessGrid g;
  const auto parse = [&](std::string_view part, int& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty() || out <= 0) {
      throw bad();
    }
  };
  parse(text.substr(0, x), g.rows);
  parse(text.substr(x + 1), g.cols);
  return g;
}

ProcessGrid choose_process_grid(int ranks, const Grid& grid, std::optional<ProcessGrid> forced,
                                int halo_depth) {
  if (grid.volume()) {
    throw InvalidInput("depth " + std::to_string(grid.depth) +
                       ": a volume is not split over MPI ranks in this build; run it in one "
                       "process (a sweep of volumes spreads its members over ranks)");
  }
  // The thinnest block must hold a full halo for its neighbours.
  const auto fits = [&](ProcessGrid g) {
    return grid.rows / g.rows >= halo_depth && grid.cols / g.cols >= halo_depth;
  };
  const auto too_small = [&](const std::string& split) {
    return InvalidInput("a " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) +
                        " grid is too small for " + split + ": every block needs at least " +
                        std::to_string(halo_depth) + " row(s) and column(s)");
  };
  if (forced) {
    const ProcessGrid g = *forced;
    if (g.ranks() != ranks) {
      throw InvalidInput("decomposition " + std::to_string(g.rows) + "x" + std::to_string(g.cols) +
                         " needs " + std::to_string(g.ranks()) + " ranks, but the run has " +
                         std::to_string(ranks));
    }
    if (!fits(g)) throw too_small(std::to_string(g.rows) + "x" + std::to_string(g.cols) + " ranks");
    return g;
  }
  int dims[2] = {0, 0};
  MPI_Dims_create(ranks, 2, dims);  // dims[0] >= dims[1]
  const ProcessGrid preferred =
      grid.cols > grid.rows ? ProcessGrid{dims[1], dims[0]} : ProcessGrid{dims[0], dims[1]};
  if (fits(preferred)) return preferred;
  // A grid too thin for the squarest split (4x1 cells on 4 ranks) may still take another: of those
  // that fit, the one with the fewest cells on the cuts between blocks, the halo traffic.
  std::optional<ProcessGrid> best;
  std::int64_t best_cut = 0;
  for (int rows = 1; rows <= ranks; ++rows) {
    if (ranks % rows != 0) continue;
    const ProcessGrid g{rows, ranks / rows};
    if (!fits(g)) continue;
    const std::int64_t cut = (g.rows - 1) * grid.cols + (g.cols - 1) * grid.rows;
    if (!best || cut < best_cut) best = g, best_cut = cut;
  }
  if (!best) throw too_small(std::to_string(ranks) + " ranks in any split");
  return *best;
}

Decomposition::Decomposition(MPI_Comm comm, const Grid& grid, Boundary boundary,
                             ProcessGrid process_grid)
    : process_grid_(process_grid), grid_(grid), periodic_(boundary == Boundary::Periodic) {
  const int dims[2] = {process_grid.rows, process_grid.cols};
  const int periods[2] = {periodic_ ? 1 : 0, periodic_ ? 1 : 0};
  // No reordering: rank 0 stays rank 0 (it reports and writes the XDMF file).
  if (MPI_Cart_create(comm, 2, dims, periods, 0, &cart_) != MPI_SUCCESS || cart_ == MPI_COMM_NULL) {
    throw std::runtime_error("MPI: cannot create the Cartesian process grid");
  }
  MPI_Comm_set_errhandler(cart_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(cart_, &rank_);
  MPI_Cart_coords(cart_, rank_, 2, coords_);
  rows_ = block_extent(grid.rows, process_grid.rows, coords_[0]);
  cols_ = block_extent(grid.cols, process_grid.cols, coords_[1]);
  for (int dr = -1; dr <= 1; ++dr) {
    for (int dc = -1; dc <= 1; ++dc) {
      int at[2] = {coords_[0] + dr, coords_[1] + dc};
      bool outside = false;
      for (int d = 0; d < 2; ++d) {
        if (at[d] < 0 || at[d] >= dims[d]) {
          if (periodic_)
            at[d] = (at[d] + dims[d]) % dims[d];
          else
            outside = true;
        }
      }
      int neighbour = MPI_PROC_NULL;
      if (!outside) MPI_Cart_rank(cart_, at, &neighbour);
      neighbours_[dr + 1][dc + 1] = neighbour;
    }
  }
}

Decomposition::~Decomposition() {
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

}  // namespace grayscott::mpi
