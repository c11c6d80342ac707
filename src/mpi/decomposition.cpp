#include "mpi/decomposition.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

namespace grayscott::mpi {

Extent block_extent(std::int64_t n, int parts, int index) {
  const std::int64_t base = n / parts, extra = n % parts;
  const std::int64_t begin = index * base + std::min<std::int64_t>(index, extra);
  return {begin, base + (index < extra ? 1 : 0)};
}

std::string ProcessGrid::text() const {
  const std::string plane = std::to_string(rows) + "x" + std::to_string(cols);
  return axes == 3 ? std::to_string(planes) + "x" + plane : plane;
}

namespace {

// "AxB" or "AxBxC" of positive whole numbers, as many parts as `most` at most; none when the text
// is not so.
std::optional<std::vector<int>> parse_parts(std::string_view text, std::size_t most) {
  std::vector<int> parts;
  std::size_t at = 0;
  while (true) {
    const std::size_t x = text.find('x', at);
    const std::string_view part = text.substr(at, x == std::string_view::npos ? x : x - at);
    int out = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty() || out <= 0) {
      return std::nullopt;
    }
    parts.push_back(out);
    if (x == std::string_view::npos) break;
    at = x + 1;
  }
  if (parts.size() < 2 || parts.size() > most) return std::nullopt;
  return parts;
}

}  // namespace

ProcessGrid parse_process_grid(std::string_view text) {
  const auto parts = parse_parts(text, 2);
  if (!parts) {
    throw InvalidInput("decomposition: expected ROWSxCOLS of ranks (e.g. 2x2), got '" +
                       std::string(text) + "'");
  }
  return ProcessGrid{(*parts)[0], (*parts)[1]};
}

ProcessGrid parse_decomposition(std::string_view text) {
  const auto parts = parse_parts(text, 3);
  if (!parts) {
    throw InvalidInput(
        "decomposition: expected ROWSxCOLS of ranks (e.g. 2x2), or a volume's "
        "PLANESxROWSxCOLS (e.g. 2x1x1), got '" +
        std::string(text) + "'");
  }
  if (parts->size() == 2) return ProcessGrid{(*parts)[0], (*parts)[1]};
  return ProcessGrid{(*parts)[1], (*parts)[2], (*parts)[0], 3};
}

namespace {

// A volume's split: PLANESxROWSxCOLS of ranks, each block at least a cell thick along every axis.
ProcessGrid choose_volume_grid(int ranks, const Grid& grid, std::optional<ProcessGrid> forced) {
  const auto fits = [&](ProcessGrid g) {
    return grid.depth / g.planes >= 1 && grid.rows / g.rows >= 1 && grid.cols / g.cols >= 1;
  };
  if (forced) {
    const ProcessGrid g = *forced;
    if (g.axes != 3) {
      throw InvalidInput("decomposition " + g.text() + ": a volume (" + grid.text() +
                         ") is split PLANESxROWSxCOLS of ranks (e.g. " + std::to_string(ranks) +
                         "x1x1)");
    }
    if (g.ranks() != ranks) {
      throw InvalidInput("decomposition " + g.text() + " needs " + std::to_string(g.ranks()) +
                         " ranks, but the run has " + std::to_string(ranks));
    }
    if (!fits(g)) {
      throw InvalidInput("a " + grid.text() + " volume is too small for " + g.text() +
                         " ranks: every block needs at least one plane, row and column");
    }
    return g;
  }
  // Of the splits that fit, the one with the fewest cells on the cuts between blocks (the halo
  // traffic); among equals the one that splits the planes most, then the rows: its blocks keep
  // their rows whole, the vectors' direction, and a cut between planes is one contiguous face
  // (docs/cluster.md: a cube on 2 ranks steps far faster split 2x1x1 than 1x1x2).
  std::optional<ProcessGrid> best;
  std::int64_t best_cut = 0;
  for (int planes = ranks; planes >= 1; --planes) {
    if (ranks % planes != 0) continue;
    for (int rows = ranks / planes; rows >= 1; --rows) {
      if ((ranks / planes) % rows != 0) continue;
      const ProcessGrid g{rows, ranks / planes / rows, planes, 3};
      if (!fits(g)) continue;
      const std::int64_t cut = (g.planes - 1) * grid.rows * grid.cols +
                               (g.rows - 1) * grid.depth * grid.cols +
                               (g.cols - 1) * grid.depth * grid.rows;
      if (!best || cut < best_cut) best = g, best_cut = cut;
    }
  }
  if (!best) {
    throw InvalidInput("a " + grid.text() + " volume is too small for " + std::to_string(ranks) +
                       " ranks in any split: every block needs at least one plane, row and "
                       "column");
  }
  return *best;
}

}  // namespace

ProcessGrid choose_process_grid(int ranks, const Grid& grid, std::optional<ProcessGrid> forced,
                                int halo_depth) {
  if (grid.volume()) {
    if (halo_depth > 1) {
      throw InvalidInput("halo-depth " + std::to_string(halo_depth) + ": a volume (" + grid.text() +
                         ") split over MPI ranks exchanges its halo every step (halo depth 1)");
    }
    return choose_volume_grid(ranks, grid, forced);
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
    if (g.axes != 2) {
      throw InvalidInput("decomposition " + g.text() + ": a plane (" + grid.text() +
                         ") is split ROWSxCOLS of ranks");
    }
    if (g.ranks() != ranks) {
      throw InvalidInput("decomposition " + std::to_string(g.rows) + "x" + std::to_string(g.cols) +
                         " needs " + std::to_string(g.ranks()) + " ranks, but the run has " +
                         std::to_string(ranks));
    }
    if (!fits(g)) throw too_small(std::to_string(g.rows) + "x" + std::to_string(g.cols) + " ranks");
    return g;
  }
  // Of the splits that fit, the one with the fewest cells on the cuts between blocks (the halo
  // traffic); on a tie the squarest, MPI_Dims_create's, with more ranks along the longer side. A
  // thin grid is cut across its length only (2x1000 on 4 ranks: 1x4, blocks of 2x250, not 2x2's
  // blocks one row thick).
  const auto cut_of = [&](ProcessGrid g) {
    return std::int64_t{g.rows - 1} * grid.cols + std::int64_t{g.cols - 1} * grid.rows;
  };
  int dims[2] = {0, 0};
  MPI_Dims_create(ranks, 2, dims);  // dims[0] >= dims[1]
  const ProcessGrid squarest =
      grid.cols > grid.rows ? ProcessGrid{dims[1], dims[0]} : ProcessGrid{dims[0], dims[1]};
  std::optional<ProcessGrid> best;
  if (fits(squarest)) best = squarest;
  for (int rows = 1; rows <= ranks; ++rows) {
    if (ranks % rows != 0) continue;
    const ProcessGrid g{rows, ranks / rows};
    if (fits(g) && (!best || cut_of(g) < cut_of(*best))) best = g;
  }
  if (!best) throw too_small(std::to_string(ranks) + " ranks in any split");
  return *best;
}

Decomposition::Decomposition(MPI_Comm comm, const Grid& grid, Boundary boundary,
                             ProcessGrid process_grid)
    : process_grid_(process_grid), grid_(grid), periodic_(boundary == Boundary::Periodic) {
  // A plane's topology has two axes (rows, cols); a volume's three (planes, rows, cols).
  const bool volume = grid.volume();
  const int axes = volume ? 3 : 2;
  const int all_dims[3] = {process_grid.planes, process_grid.rows, process_grid.cols};
  const int* const dims = volume ? all_dims : all_dims + 1;
  const int periods[3] = {periodic_ ? 1 : 0, periodic_ ? 1 : 0, periodic_ ? 1 : 0};
  // No reordering: rank 0 stays rank 0 (it reports and writes the XDMF file).
  if (MPI_Cart_create(comm, axes, dims, periods, 0, &cart_) != MPI_SUCCESS ||
      cart_ == MPI_COMM_NULL) {
    throw std::runtime_error("MPI: cannot create the Cartesian process grid");
  }
  MPI_Comm_set_errhandler(cart_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(cart_, &rank_);
  MPI_Cart_coords(cart_, rank_, axes, volume ? coords_ : coords_ + 1);
  if (volume) planes_ = block_extent(grid.depth, process_grid.planes, coords_[0]);
  rows_ = block_extent(grid.rows, process_grid.rows, coords_[1]);
  cols_ = block_extent(grid.cols, process_grid.cols, coords_[2]);
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dr = -1; dr <= 1; ++dr) {
      for (int dc = -1; dc <= 1; ++dc) {
        int& neighbour = neighbours_[dz + 1][dr + 1][dc + 1];
        neighbour = MPI_PROC_NULL;
        if (!volume && dz != 0) continue;
        int at[3] = {coords_[0] + dz, coords_[1] + dr, coords_[2] + dc};
        bool outside = false;
        for (int d = 0; d < 3; ++d) {
          if (at[d] < 0 || at[d] >= all_dims[d]) {
            if (periodic_)
              at[d] = (at[d] + all_dims[d]) % all_dims[d];
            else
              outside = true;
          }
        }
        if (!outside) MPI_Cart_rank(cart_, volume ? at : at + 1, &neighbour);
      }
    }
  }
}

Decomposition::~Decomposition() {
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

void check_one_process_decomposition(const std::string& text, const Grid& grid, bool launched) {
  if (text.empty()) return;
  const ProcessGrid g = parse_decomposition(text);
  if (!launched && g.ranks() != 1) {
    throw InvalidInput("decomposition " + text + " needs an MPI launcher (mpirun -n P, srun)");
  }
  choose_process_grid(1, grid, g, 1);
}

}  // namespace grayscott::mpi
