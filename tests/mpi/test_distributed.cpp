// The MPI pieces, run under mpiexec with 1 to 4 ranks: the decomposition's arithmetic, the halo
// exchange (every ghost cell holds its neighbour's value, corners included), and the distributed
// engine against the single-process CPU engine, bitwise, for every boundary, stencil, halo depth
// and process grid of the run's rank count. Each with the CPU blocks, with the CUDA blocks'
// kernels run on the host (gpu/kernel_emulation.hpp), and with CUDA blocks where a device is. And
// the engine a front end steps over the ranks (pipeline::make_distributed_engine) on a volume.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <sstream>
#include <type_traits>
#include <vector>

#include "engine/cuda/kernel_emulation.hpp"
// (the kernels first: the emulation's macros must not reach other headers)
#include "engine/cuda/cuda_backend.hpp"
#include "engine/engine.hpp"
#include "engine/registry.hpp"
#include "engine_test_support.hpp"
#include "model/initial_state.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/distributed_engine.hpp"
#include "mpi/halo_exchange.hpp"
#include "mpi/session.hpp"
#include "pipeline/distributed_run.hpp"

using namespace grayscott;
using namespace grayscott::mpi;

namespace {

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Every process grid for this many ranks: 1xP, ..., Px1.
std::vector<ProcessGrid> process_grids(int ranks) {
  std::vector<ProcessGrid> grids;
  for (int r = 1; r <= ranks; ++r) {
    if (ranks % r == 0) grids.push_back({r, ranks / r});
  }
  return grids;
}

// `name` as a GoogleTest parameter name: every character but letters and digits made '_'.
std::string test_name(std::string name) {
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

// A failure on any rank fails the test on every rank (and rank 0 prints it).
void expect_on_all_ranks(bool ok, const std::string& what) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_TRUE(all == 1) << what;
}

TEST(Decomposition, BlocksCoverTheGridAndDifferByAtMostOne) {
  for (std::int64_t n : {1, 7, 37, 64, 1080}) {
    for (int parts = 1; parts <= std::min<std::int64_t>(n, 9); ++parts) {
      std::int64_t next = 0, smallest = n, largest = 0;
      for (int i = 0; i < parts; ++i) {
        const Extent e = block_extent(n, parts, i);
        EXPECT_EQ(e.begin, next);
        next = e.end();
        smallest = std::min(smallest, e.size), largest = std::max(largest, e.size);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

TEST(Decomposition, ParsesAndChecksProcessGrids) {
  const ProcessGrid g = parse_process_grid("2x3");
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.cols, 3);
  for (const char* bad : {"", "2", "2x", "x3", "0x4", "2x-1", "2*3", "2x3x1", "ax2"}) {
    EXPECT_THROW(parse_process_grid(bad), InvalidInput) << bad;
  }
  EXPECT_THROW(choose_process_grid(4, {10, 10}, ProcessGrid{1, 3}, 1), InvalidInput);
  EXPECT_THROW(choose_process_grid(4, {3, 10}, ProcessGrid{4, 1}, 1), InvalidInput);
  EXPECT_THROW(choose_process_grid(2, {3, 10}, ProcessGrid{2, 1}, 2), InvalidInput);
  const ProcessGrid wide = choose_process_grid(2, {10, 40}, std::nullopt, 1);
  EXPECT_EQ(wide.rows, 1);
  EXPECT_EQ(wide.cols, 2);
  const ProcessGrid tall = choose_process_grid(2, {40, 10}, std::nullopt, 1);
  EXPECT_EQ(tall.rows, 2);
  EXPECT_EQ(tall.cols, 1);
}

// The automatic split is the factorisation whose blocks hold a halo with the fewest cut cells, on a
// tie MPI_Dims_create's squarest, and refuses only when none fits.
TEST(Decomposition, AutomaticSplitCutsTheFewestCells) {
  const auto split = [](int ranks, Grid grid, int halo_depth) {
    const ProcessGrid g = choose_process_grid(ranks, grid, std::nullopt, halo_depth);
    return std::to_string(g.rows) + "x" + std::to_string(g.cols);
  };
  EXPECT_EQ(split(4, {4, 1}, 1), "4x1");  // 2x2 leaves blocks of no column
  EXPECT_EQ(split(4, {1, 4}, 1), "1x4");
  // A thin grid is cut across its length: 1x4 cuts 3 x 3 cells, 2x2 (the squarest) 43 + 3.
  EXPECT_EQ(split(4, {3, 43}, 1), "1x4");
  EXPECT_EQ(split(4, {2, 1000}, 1), "1x4");
  EXPECT_EQ(split(4, {3, 43}, 2), "1x4");
  // Of 3x4 (cutting 2 x 100 + 3 x 4 cells), 2x6 (100 + 5 x 4) and 1x12 (11 x 4): 1x12.
  EXPECT_EQ(split(12, {4, 100}, 1), "1x12");
  EXPECT_EQ(split(12, {4, 100}, 2), "1x12");
  // A square-ish grid keeps the squarest split, more ranks along its longer side; on a tie (a
  // square grid, 1x4 and 4x1 cutting alike) MPI_Dims_create's.
  EXPECT_EQ(split(4, {1080, 1920}, 1), "2x2");
  EXPECT_EQ(split(8, {1080, 1920}, 1), "2x4");
  EXPECT_EQ(split(2, {1080, 1920}, 1), "1x2");
  EXPECT_EQ(split(2, {64, 64}, 1), "2x1");
  try {
    choose_process_grid(5, {4, 4}, std::nullopt, 1);
    FAIL() << "5 ranks split a 4x4 grid";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "a 4x4 grid is too small for 5 ranks in any split: every block needs at least 1 "
              "row(s) and column(s)");
  }
  EXPECT_THROW(choose_process_grid(4, {4, 1}, ProcessGrid{2, 2}, 1), InvalidInput);
}

// A volume is split PLANESxROWSxCOLS: given so, or the split with the fewest cells on its cuts;
// a plane's RxC, a split thinner than a cell and a deeper halo are refused in one line.
TEST(Decomposition, SplitsVolumes) {
  const ProcessGrid given = parse_decomposition("2x1x3");
  EXPECT_EQ(given.planes, 2);
  EXPECT_EQ(given.rows, 1);
  EXPECT_EQ(given.cols, 3);
  EXPECT_EQ(given.axes, 3);
  EXPECT_EQ(given.text(), "2x1x3");
  EXPECT_EQ(parse_decomposition("2x3").axes, 2);
  for (const char* bad : {"", "2", "2x1x1x1", "0x1x1", "2x1x", "x1x1", "2x-1x1"}) {
    EXPECT_THROW(parse_decomposition(bad), InvalidInput) << bad;
  }
  const auto split = [](int ranks, Grid grid) {
    return choose_process_grid(ranks, grid, std::nullopt, 1).text();
  };
  // 13 rows, 11 columns, 5 planes: cutting the rows cuts 5 x 11 cells, the columns 5 x 13, the
  // planes 13 x 11.
  EXPECT_EQ(split(2, {13, 11, 5}), "1x2x1");
  EXPECT_EQ(split(3, {13, 11, 7}), "1x3x1");
  EXPECT_EQ(split(5, {4, 4, 40}), "5x1x1");
  EXPECT_EQ(split(8, {16, 16, 16}), "2x2x2");
  // Among splits that cut as many cells, the planes first, then the rows: blocks keep whole rows.
  EXPECT_EQ(split(2, {16, 16, 16}), "2x1x1");
  EXPECT_EQ(split(4, {16, 16, 16}), "2x2x1");
  EXPECT_EQ(split(2, {16, 16, 2}), "1x2x1");  // a cut between planes: 256 cells; rows, cols: 32
  EXPECT_EQ(split(4, {1, 1, 4}), "4x1x1");    // blocks of one cell
  try {
    choose_process_grid(6, {13, 11, 5}, ProcessGrid{1, 1, 6, 3}, 1);
    FAIL() << "6 planes of blocks split 5 planes";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "a 5x13x11 volume is too small for 6x1x1 ranks: every block needs at least one "
              "plane, row and column");
  }
  EXPECT_THROW(choose_process_grid(5, {2, 1, 2}, std::nullopt, 1), InvalidInput);
  EXPECT_THROW(choose_process_grid(4, {8, 8, 8}, ProcessGrid{2, 2}, 1), InvalidInput);
  EXPECT_THROW(choose_process_grid(2, {8, 8, 8}, ProcessGrid{1, 1, 3, 3}, 1), InvalidInput);
  EXPECT_THROW(choose_process_grid(2, {8, 8, 8}, std::nullopt, 2), InvalidInput);
  EXPECT_THROW(choose_process_grid(2, {8, 8}, ProcessGrid{1, 1, 2, 3}, 1), InvalidInput);
}

// The CUDA block's kernels (region steps, halo packing and unpacking) run on the host, with the
// launch geometry and arguments of engine/cuda/cuda_subdomain.cu, for a plane's block and a
// volume's. Every buffer starts as NaN, so a ghost cell read before it was received (or beyond a
// non-periodic edge, or a volume's corner that no stencil reads) poisons the result.
template <class Real>
class KernelsOnHostSubdomain final : public SubdomainStepper<Real> {
 public:
  KernelsOnHostSubdomain(const Problem& problem, const LocalLayout& layout, GlobalEdges edges)
      : layout_(layout),
        edges_(edges),
        boundary_(problem.boundary),
        kind_(problem.stencil.kind),
        coefficients_(
            Coefficients<Real>::from(problem.params, problem.outside, problem.stencil.kind)) {
    for (int k = 0; k < 9; ++k) weights_.w[k] = static_cast<Real>(problem.stencil.weights[k]);
    for (int b = 0; b < 2; ++b) {
      u_[b].assign(layout.padded_cells(), Real(NAN));
      v_[b].assign(layout.padded_cells(), Real(NAN));
    }
  }
  void load(std::span<const Real> u, std::span<const Real> v) override {
    const std::int64_t planes = layout_.volume() ? layout_.planes : 1;
    for (std::int64_t z = 0; z < planes; ++z) {
      for (std::int64_t r = 0; r < layout_.rows; ++r) {
        const auto from = (z * layout_.rows + r) * layout_.cols;
        const auto to = layout_.offset(z, r, 0);
        std::copy_n(u.data() + from, layout_.cols, &u_[current_][to]);
        std::copy_n(v.data() + from, layout_.cols, &v_[current_][to]);
      }
    }
  }
  void read(const Region& region, Real* u, Real* v) override {
    for (std::int64_t z = region.plane_begin; z < region.plane_end; ++z) {
      for (std::int64_t r = region.row_begin; r < region.row_end; ++r) {
        const auto to =
            ((z - region.plane_begin) * region.rows() + r - region.row_begin) * region.cols();
        const auto from = layout_.offset(z, r, region.col_begin);
        if (u) std::copy_n(&u_[current_][from], region.cols(), u + to);
        if (v) std::copy_n(&v_[current_][from], region.cols(), v + to);
      }
    }
  }
  void plan_halos(const HaloPlan& plan) override {
    send_table_ = cuda::detail::message_table(plan.send);
    receive_regions_ = plan.receive;
    send_.assign(message_offset(plan.send, plan.send.size()), Real(NAN));
    receive_.assign(message_offset(plan.receive, plan.receive.size()), Real(NAN));
  }
  Real* send_area() override { return send_.data(); }
  Real* receive_area() override { return receive_.data(); }
  void pack_halos() override { launch_messages<true>(send_table_, send_.data()); }
  void unpack_halos(std::size_t first, std::size_t last) override {
    if (first >= last) return;
    const std::span<const Region> messages(receive_regions_.data() + first, last - first);
    launch_messages<false>(cuda::detail::message_table(messages),
                           receive_.data() + message_offset(receive_regions_, first));
  }
  void step(const Region& region) override {
    namespace k = cuda::detail;
    if (region.empty()) return;
    if (layout_.volume()) {
      const auto args = k::volume_block_args<Real>(u_[current_].data(), v_[current_].data(),
                                                   u_[1 - current_].data(), v_[1 - current_].data(),
                                                   coefficients_, layout_, edges_, region);
      k::dispatch_volume_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
        kernel_emulation::launch_sequential(
            {k::blocks(region.cols(), k::region_block_x),
             k::blocks(region.rows(), k::region_block_y), k::volume_region_grid_z(region.planes())},
            {k::region_block_x, k::region_block_y, 1},
            [&] { k::volume_region_step_kernel<K, B, Real>(args); });
      });
      return;
    }
    const auto args = k::block_args<Real>(u_[current_].data(), v_[current_].data(),
                                          u_[1 - current_].data(), v_[1 - current_].data(),
                                          coefficients_, weights_, layout_, edges_, region);
    dispatch_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
      kernel_emulation::launch_sequential({k::blocks(region.cols(), k::region_block_x),
                                           k::blocks(region.rows(), k::region_block_y), 1},
                                          {k::region_block_x, k::region_block_y, 1},
                                          [&] { k::region_step_kernel<K, B, Real>(args); });
    });
  }
  void step_frame(const Region& outer, const Region& inner) override {
    namespace k = cuda::detail;
    if (layout_.volume()) {
      SubdomainStepper<Real>::step_frame(outer, inner);  // as cuda_subdomain.cu
      return;
    }
    const k::Frame frame{k::cell_range(outer), k::cell_range(inner)};
    if (frame.cells() == 0) return;
    const auto args = k::block_args<Real>(u_[current_].data(), v_[current_].data(),
                                          u_[1 - current_].data(), v_[1 - current_].data(),
                                          coefficients_, weights_, layout_, edges_, outer);
    dispatch_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
      kernel_emulation::launch_sequential({k::blocks(frame.cells(), k::frame_block), 1, 1},
                                          {k::frame_block, 1, 1},
                                          [&] { k::frame_step_kernel<K, B, Real>(args, frame); });
    });
  }
  void swap() override { current_ = 1 - current_; }

 private:
  template <bool Pack>
  void launch_messages(const cuda::detail::MessageTable& table, Real* packed) {
    if (table.count == 0) return;
    kernel_emulation::launch_sequential(
        {cuda::detail::message_blocks(table), static_cast<unsigned>(table.count), 1},
        {cuda::detail::message_block, 1, 1}, [&] {
          cuda::detail::message_kernel<Pack, Real>(u_[current_].data(), v_[current_].data(),
                                                   cuda::detail::padded_layout(layout_), table,
                                                   packed);
        });
  }

  LocalLayout layout_;
  GlobalEdges edges_;
  Boundary boundary_;
  StencilKind kind_;
  Coefficients<Real> coefficients_;
  cuda::detail::StencilWeights<Real> weights_{};
  std::vector<Real> u_[2], v_[2], send_, receive_;
  cuda::detail::MessageTable send_table_;
  std::vector<Region> receive_regions_;
  int current_ = 0;
};

// The blocks a distributed engine can step on.
enum class BlockKind { Cpu, KernelsOnHost, Cuda };

const char* to_string(BlockKind kind) {
  return kind == BlockKind::Cpu             ? "cpu"
         : kind == BlockKind::KernelsOnHost ? "kernels_on_host"
                                            : "cuda";
}

// Skips the test (on every rank alike) when `kind` is Cuda and no device is usable.
bool skip_without_device(BlockKind kind) {
  std::string why;
  if (kind != BlockKind::Cuda || cuda::available(&why)) return false;
  std::printf("skipped: no usable CUDA device: %s\n", why.c_str());
  return true;
}

template <class Real>
SubdomainFactory<Real> block_factory(BlockKind kind, const Problem& problem) {
  return [kind, problem](const LocalLayout& layout,
                         GlobalEdges edges) -> std::unique_ptr<SubdomainStepper<Real>> {
    switch (kind) {
      case BlockKind::Cpu:  // a plane's CpuSubdomain or a volume's CpuVolumeBlock
        return find_backend("cpu").make_block<Real>(problem, layout, edges, SubdomainOptions{2});
      case BlockKind::KernelsOnHost:
        return std::make_unique<KernelsOnHostSubdomain<Real>>(problem, layout, edges);
      case BlockKind::Cuda:
        break;
    }
    return cuda::make_subdomain<Real>(problem, layout, edges, 0, false);
  };
}

// What each kind of block that runs here packs from (u, v) for `plan`, and the ghost regions it
// reads back after unpacking its own messages as the received ones (each region's u, then v):
// after message 0 alone (`first_alone`, as the exchange unpacks the messages a block sends itself
// first) and after the rest (`ghosts`).
struct PackedBytes {
  std::vector<std::vector<double>> packed, first_alone, ghosts;
};

std::vector<double> ghost_cells(SubdomainStepper<double>& block, const HaloPlan& plan) {
  std::vector<double> cells;
  for (const Region& r : plan.receive) {
    std::vector<double> gu(r.cells()), gv(r.cells());
    block.read(r, gu.data(), gv.data());
    cells.insert(cells.end(), gu.begin(), gu.end());
    cells.insert(cells.end(), gv.begin(), gv.end());
  }
  return cells;
}

PackedBytes pack_with_every_block(const Problem& problem, const LocalLayout& layout,
                                  const HaloPlan& plan, const std::vector<double>& u,
                                  const std::vector<double>& v) {
  PackedBytes out;
  for (BlockKind kind : {BlockKind::Cpu, BlockKind::KernelsOnHost, BlockKind::Cuda}) {
    if (kind == BlockKind::Cuda && !cuda::available(nullptr)) continue;
    const auto block = block_factory<double>(kind, problem)(layout, GlobalEdges{});
    block->load(u, v);
    block->plan_halos(plan);
    block->pack_halos();
    const std::size_t values = message_offset(plan.send, plan.send.size());
    out.packed.emplace_back(values);
    if (block->messages_in_device_memory()) continue;
    std::copy_n(block->send_area(), values, out.packed.back().data());
    // Received messages: the sent ones, so each ghost region must read back as its message.
    std::copy_n(block->send_area(), values, block->receive_area());
    block->unpack_halos(0, 1);
    out.first_alone.push_back(ghost_cells(*block, plan));
    block->unpack_halos(1, plan.receive.size());
    out.ghosts.push_back(ghost_cells(*block, plan));
  }
  return out;
}

// Unpacking is the inverse of packing, message by message: after message 0 alone its ghosts hold
// it and no other message's do yet; after the rest every ghost holds its message.
void expect_unpacked_as_packed(const PackedBytes& bytes, const HaloPlan& plan) {
  const auto first = static_cast<std::ptrdiff_t>(message_offset(plan.receive, 1));
  const std::vector<double>& sent = bytes.packed[0];
  for (const auto& g : bytes.first_alone) {
    EXPECT_TRUE(std::equal(g.begin(), g.begin() + first, sent.begin()));
    EXPECT_FALSE(std::equal(g.begin() + first, g.end(), sent.begin() + first))
        << "a message after the first was unpacked with it";
  }
  for (const auto& g : bytes.ghosts) EXPECT_EQ(g, sent);
}

// Every block packs a message as the interface says (u's cells, then v's, row-major, messages back
// to back), so blocks of different backends can trade halos; and unpacking is the inverse.
TEST(SubdomainMessages, EveryBlockPacksTheSameBytes) {
  Problem problem;
  problem.grid = {9, 11};
  const HaloPlan plan{{{0, 2, 0, 11}, {7, 9, 9, 11}, {3, 6, 0, 2}},
                      {{-2, 0, 0, 11}, {9, 11, 11, 13}, {3, 6, -2, 0}}};
  std::vector<double> u(99), v(99);
  std::iota(u.begin(), u.end(), 1.0);
  std::iota(v.begin(), v.end(), -200.0);
  const PackedBytes bytes = pack_with_every_block(problem, LocalLayout{9, 11, 2}, plan, u, v);
  const auto& packed = bytes.packed;
  ASSERT_GE(packed.size(), 2u);
  EXPECT_EQ(packed[0][0], u[0]);
  EXPECT_EQ(packed[0][22], v[0]);  // message 0: 2 x 11 cells of u, then of v
  for (std::size_t k = 1; k < packed.size(); ++k) EXPECT_EQ(packed[k], packed[0]) << k;
  expect_unpacked_as_packed(bytes, plan);
}

// The value a cell of the whole grid holds in the halo test: its global index (+1, so that 0
// means "not written"); v holds its negative.
double tag_of(std::int64_t r, std::int64_t c, std::int64_t cols) {
  return double(r * cols + c + 1);
}

struct HaloCase {
  Boundary boundary;
  int depth;
  BlockKind block;
};

class HaloExchangeTest : public ::testing::TestWithParam<HaloCase> {};

TEST_P(HaloExchangeTest, GhostsHoldTheNeighboursCells) {
  const auto [boundary, depth, kind] = GetParam();
  if (skip_without_device(kind)) GTEST_SKIP() << "no usable CUDA device";
  const Grid grid{13, 17};
  Problem problem;
  problem.grid = grid;
  problem.boundary = boundary;
  for (const ProcessGrid pg : process_grids(world_size())) {
    if (grid.rows / pg.rows < depth || grid.cols / pg.cols < depth) continue;
    Decomposition d(MPI_COMM_WORLD, grid, boundary, pg);
    const LocalLayout layout{d.rows().size, d.cols().size, depth};
    const auto block_owner = block_factory<double>(kind, problem)(layout, d.edges());
    SubdomainStepper<double>& block = *block_owner;
    std::vector<double> u(layout.rows * layout.cols), v(u.size());
    for (std::int64_t r = 0; r < layout.rows; ++r) {
      for (std::int64_t c = 0; c < layout.cols; ++c) {
        const double t = tag_of(d.rows().begin + r, d.cols().begin + c, grid.cols);
        u[r * layout.cols + c] = t;
        v[r * layout.cols + c] = -t;
      }
    }
    block.load(u, v);
    HaloExchange<double> halo(d, layout, block);
    halo.start();
    halo.finish();

    // Read the whole padded block back.
    const Region padded{-depth, layout.rows + depth, -depth, layout.cols + depth};
    std::vector<double> all(2 * padded.cells());
    block.read(padded, all.data(), all.data() + padded.cells());
    const std::int64_t width = padded.col_end - padded.col_begin;
    std::ostringstream wrong;
    for (std::int64_t r = padded.row_begin; r < padded.row_end; ++r) {
      for (std::int64_t c = padded.col_begin; c < padded.col_end; ++c) {
        std::int64_t gr = d.rows().begin + r, gc = d.cols().begin + c;
        const bool outside = gr < 0 || gr >= grid.rows || gc < 0 || gc >= grid.cols;
        // Beyond a non-periodic edge nothing is received: the ghost keeps its initial value (zero,
        // or the NaN the host-run kernels' blocks start from).
        double expected_u = kind == BlockKind::KernelsOnHost ? NAN : 0.0;
        double expected_v = expected_u;
        if (!outside || boundary == Boundary::Periodic) {
          gr = (gr + grid.rows) % grid.rows, gc = (gc + grid.cols) % grid.cols;
          expected_u = tag_of(gr, gc, grid.cols);
          expected_v = -expected_u;
        }
        const auto i = (r - padded.row_begin) * width + (c - padded.col_begin);
        if (std::memcmp(&all[i], &expected_u, sizeof(double)) != 0 ||
            std::memcmp(&all[padded.cells() + i], &expected_v, sizeof(double)) != 0) {
          wrong << " (" << r << "," << c << ")=" << all[i];
        }
      }
    }
    expect_on_all_ranks(wrong.str().empty(),
                        "process grid " + std::to_string(pg.rows) + "x" + std::to_string(pg.cols) +
                            ", rank " + std::to_string(d.rank()) + " wrong:" + wrong.str());
    const std::uint64_t cells = 2 * (layout.rows + layout.cols) * depth + 4 * depth * depth;
    if (boundary == Boundary::Periodic) {
      // Every rank has all eight neighbours (possibly itself): the count is exact.
      EXPECT_EQ(halo.bytes_sent_per_exchange(), 2 * cells * sizeof(double));
      EXPECT_EQ(halo.messages_per_exchange(), 8);
    } else {
      EXPECT_LE(halo.bytes_sent_per_exchange(), 2 * cells * sizeof(double));
    }
  }
}

std::vector<HaloCase> halo_cases() {
  std::vector<HaloCase> cases;
  for (BlockKind kind : {BlockKind::Cpu, BlockKind::KernelsOnHost, BlockKind::Cuda}) {
    for (const auto& [boundary, depth] :
         std::vector<std::pair<Boundary, int>>{{Boundary::ZeroFlux, 1},
                                               {Boundary::Periodic, 1},
                                               {Boundary::Fixed, 1},
                                               {Boundary::Periodic, 2},
                                               {Boundary::ZeroFlux, 3}}) {
      cases.push_back({boundary, depth, kind});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Boundaries, HaloExchangeTest, ::testing::ValuesIn(halo_cases()),
                         [](const ::testing::TestParamInfo<HaloCase>& param_info) {
                           return test_name(std::string(to_string(param_info.param.block)) + "_" +
                                            std::string(to_string(param_info.param.boundary)) +
                                            "_depth" + std::to_string(param_info.param.depth));
                         });

// ---------------------------------------------------------------------------------------------

struct EngineCase {
  Boundary boundary;
  Stencil stencil;
  int depth;
  Precision precision;
  BlockKind block;
  Grid grid{19, 23};  // uneven for every rank count up to 4 (19 = 4*4+3, 23 = 4*5+3)
};

class DistributedEngineTest : public ::testing::TestWithParam<EngineCase> {};

template <class Real>
void expect_bitwise_equal_to_serial(const EngineCase& ec) {
  Problem problem;
  problem.grid = ec.grid;
  problem.boundary = ec.boundary;
  problem.stencil = ec.stencil;
  problem.precision = ec.precision;
  problem.params = {0.03, 0.06, 0.2, 0.1, 0.5};
  problem.validate();
  const auto start = grayscott::testing::varied_state(problem.grid.rows, problem.grid.cols, 7);
  const std::vector<Real> u0(start.u.begin(), start.u.end()), v0(start.v.begin(), start.v.end());
  const std::int64_t steps = 7;  // not a multiple of the halo depths tested

  EngineOptions options;
  options.backend = "cpu";
  options.threads = 1;
  const Parameters params[1] = {problem.params};
  auto serial = make_engine<Real>(problem, params, options);
  serial->load(0, u0, v0);
  serial->advance(steps);
  serial->capture({true, true});
  std::vector<Real> su(u0.size()), sv(v0.size());
  serial->read_captured(0, su.data(), sv.data());

  for (const ProcessGrid pg : process_grids(world_size())) {
    if (problem.grid.rows / pg.rows < ec.depth || problem.grid.cols / pg.cols < ec.depth) continue;
    Decomposition d(MPI_COMM_WORLD, problem.grid, problem.boundary, pg);
    DistributedEngine<Real> engine(d, ec.depth, block_factory<Real>(ec.block, problem));
    const LocalLayout& l = engine.layout();
    std::vector<Real> bu(l.rows * l.cols), bv(bu.size());
    for (std::int64_t r = 0; r < l.rows; ++r) {
      for (std::int64_t c = 0; c < l.cols; ++c) {
        const auto g = (d.rows().begin + r) * problem.grid.cols + d.cols().begin + c;
        bu[r * l.cols + c] = u0[g], bv[r * l.cols + c] = v0[g];
      }
    }
    engine.load(bu, bv);
    engine.advance(3);  // split across calls: the state carries over
    engine.advance(steps - 3);
    engine.read_owned(bu.data(), bv.data());
    std::int64_t differing = 0;
    for (std::int64_t r = 0; r < l.rows; ++r) {
      for (std::int64_t c = 0; c < l.cols; ++c) {
        const auto g = (d.rows().begin + r) * problem.grid.cols + d.cols().begin + c;
        differing += std::memcmp(&bu[r * l.cols + c], &su[g], sizeof(Real)) != 0;
        differing += std::memcmp(&bv[r * l.cols + c], &sv[g], sizeof(Real)) != 0;
      }
    }
    expect_on_all_ranks(differing == 0, "process grid " + std::to_string(pg.rows) + "x" +
                                            std::to_string(pg.cols) + ": rank " +
                                            std::to_string(d.rank()) + " has " +
                                            std::to_string(differing) + " differing values");
    const HaloStatistics stats = engine.statistics();
    EXPECT_EQ(stats.exchanges,
              (3 + ec.depth - 1) / ec.depth + (steps - 3 + ec.depth - 1) / ec.depth);
  }
}

TEST_P(DistributedEngineTest, BitwiseEqualToTheSerialEngine) {
  const EngineCase ec = GetParam();
  if (skip_without_device(ec.block)) GTEST_SKIP() << "no usable CUDA device";
  if (ec.precision == Precision::Single)
    expect_bitwise_equal_to_serial<float>(ec);
  else
    expect_bitwise_equal_to_serial<double>(ec);
}

std::vector<EngineCase> engine_cases() {
  std::vector<EngineCase> cases;
  for (BlockKind kind : {BlockKind::Cpu, BlockKind::KernelsOnHost, BlockKind::Cuda}) {
    for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      for (int depth : {1, 2, 3}) {
        cases.push_back({b, Stencil::oono_puri(), depth, Precision::Single, kind});
      }
      cases.push_back({b, Stencil::five_point(), 1, Precision::Double, kind});
      cases.push_back({b, Stencil::custom({0.1, 0.7, 0.2, 0.4, 9.0, 0.6, 0.3, 0.5, 0.15}), 2,
                       Precision::Single, kind});
    }
  }
  // Deep halos: the CPU block fuses the steps after an exchange (4 levels), in one band on small
  // blocks and in two bands (two threads) on taller ones.
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    cases.push_back({b, Stencil::oono_puri(), 5, Precision::Single, BlockKind::Cpu});
    cases.push_back({b, Stencil::pretty(), 4, Precision::Double, BlockKind::Cpu, {83, 41}});
    cases.push_back(
        {b, Stencil::oono_puri(), 4, Precision::Single, BlockKind::KernelsOnHost, {83, 41}});
  }
  return cases;
}

std::string engine_case_name(const ::testing::TestParamInfo<EngineCase>& info) {
  return test_name(
      std::string(to_string(info.param.block)) + "_" + std::string(to_string(info.param.boundary)) +
      "_" + info.param.stencil.name() + "_depth" + std::to_string(info.param.depth) + "_" +
      std::string(to_string(info.param.precision)) + "_" + std::to_string(info.param.grid.rows) +
      "x" + std::to_string(info.param.grid.cols));
}

INSTANTIATE_TEST_SUITE_P(Cases, DistributedEngineTest, ::testing::ValuesIn(engine_cases()),
                         engine_case_name);

// ---------------------------------------------------------------------------------------------
// A volume's blocks, of every kind, against the single-process volume engine, bitwise: every
// PLANESxROWSxCOLS split of the run's rank count, on a volume whose blocks are uneven for 2 to 4
// ranks along any axis.

// Every split of `ranks` into planes x rows x cols.
std::vector<ProcessGrid> volume_process_grids(int ranks) {
  std::vector<ProcessGrid> grids;
  for (int p = 1; p <= ranks; ++p) {
    for (int r = 1; p * r <= ranks; ++r) {
      if (ranks % (p * r) == 0) grids.push_back({r, ranks / (p * r), p, 3});
    }
  }
  return grids;
}

struct VolumeCase {
  Boundary boundary;
  Stencil stencil;
  Precision precision;
  BlockKind block;
  // Rows as wide as a vector or more, and blocks of them, reach the CPU's vector row loop.
  std::int64_t cols = 9;
};

class DistributedVolumeTest : public ::testing::TestWithParam<VolumeCase> {};

template <class Real>
void expect_volume_bitwise_equal_to_serial(const VolumeCase& vc) {
  Problem problem;
  problem.grid = Grid{7, vc.cols, 11};  // rows, cols, planes: 7 = 2*3+1 = 3*2+1 = 4+3, ...
  problem.boundary = vc.boundary;
  problem.stencil = vc.stencil;
  problem.precision = vc.precision;
  problem.params = {0.03, 0.06, 0.2, 0.1, 0.5};
  problem.validate();
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  std::vector<Real> u0(cells), v0(cells);
  fill_initial_state<Real>(problem.grid, InitialState{InitialKind::Noise, 11}, u0, v0);
  const std::int64_t steps = 5;

  EngineOptions options;
  options.backend = "cpu";
  options.threads = 1;
  const Parameters params[1] = {problem.params};
  auto serial = make_engine<Real>(problem, params, options);
  serial->load(0, u0, v0);
  serial->advance(steps);
  serial->capture({true, true});
  std::vector<Real> su(cells), sv(cells);
  serial->read_captured(0, su.data(), sv.data());

  const Grid& g = problem.grid;
  for (const ProcessGrid pg : volume_process_grids(world_size())) {
    Decomposition d(MPI_COMM_WORLD, g, problem.boundary, pg);
    DistributedEngine<Real> engine(d, 1, block_factory<Real>(vc.block, problem));
    const LocalLayout& l = engine.layout();
    const auto global = [&](std::int64_t z, std::int64_t r, std::int64_t c) {
      return static_cast<std::size_t>(
          ((d.planes().begin + z) * g.rows + d.rows().begin + r) * g.cols + d.cols().begin + c);
    };
    std::vector<Real> bu(static_cast<std::size_t>(l.planes * l.rows * l.cols)), bv(bu.size());
    for (std::int64_t z = 0; z < l.planes; ++z) {
      for (std::int64_t r = 0; r < l.rows; ++r) {
        for (std::int64_t c = 0; c < l.cols; ++c) {
          const auto i = static_cast<std::size_t>((z * l.rows + r) * l.cols + c);
          bu[i] = u0[global(z, r, c)], bv[i] = v0[global(z, r, c)];
        }
      }
    }
    engine.load(bu, bv);
    engine.advance(2);  // split across calls: the state carries over
    engine.advance(steps - 2);
    engine.read_owned(bu.data(), bv.data());
    std::int64_t differing = 0;
    for (std::int64_t z = 0; z < l.planes; ++z) {
      for (std::int64_t r = 0; r < l.rows; ++r) {
        for (std::int64_t c = 0; c < l.cols; ++c) {
          const auto i = static_cast<std::size_t>((z * l.rows + r) * l.cols + c);
          differing += std::memcmp(&bu[i], &su[global(z, r, c)], sizeof(Real)) != 0;
          differing += std::memcmp(&bv[i], &sv[global(z, r, c)], sizeof(Real)) != 0;
        }
      }
    }
    expect_on_all_ranks(differing == 0, "process grid " + pg.text() + ": rank " +
                                            std::to_string(d.rank()) + " has " +
                                            std::to_string(differing) + " differing values");
    EXPECT_EQ(engine.statistics().exchanges, steps);
  }
}

TEST_P(DistributedVolumeTest, BitwiseEqualToTheSerialEngine) {
  const VolumeCase vc = GetParam();
  if (skip_without_device(vc.block)) GTEST_SKIP() << "no usable CUDA device";
  if (vc.precision == Precision::Single)
    expect_volume_bitwise_equal_to_serial<float>(vc);
  else
    expect_volume_bitwise_equal_to_serial<double>(vc);
}

std::vector<VolumeCase> volume_cases() {
  std::vector<VolumeCase> cases;
  for (BlockKind kind : {BlockKind::Cpu, BlockKind::KernelsOnHost, BlockKind::Cuda}) {
    for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
      cases.push_back({b, Stencil::seven_point(), Precision::Single, kind});
      cases.push_back({b, Stencil::nineteen_point(), Precision::Double, kind});
    }
  }
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    for (Precision precision : {Precision::Single, Precision::Double})
      cases.push_back({b, Stencil::seven_point(), precision, BlockKind::Cpu, 37});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, DistributedVolumeTest, ::testing::ValuesIn(volume_cases()),
                         [](const ::testing::TestParamInfo<VolumeCase>& param_info) {
                           const VolumeCase& vc = param_info.param;
                           return test_name(
                               std::string(to_string(vc.block)) + "_" +
                               std::string(to_string(vc.boundary)) + "_" + vc.stencil.name() + "_" +
                               std::string(to_string(vc.precision)) +
                               (vc.cols == 9 ? "" : "_" + std::to_string(vc.cols) + "_columns"));
                         });

// A volume's block packs its messages as a plane's: u's cells, then v's, plane after plane, each
// row-major; the CPU's and the CUDA kernels' blocks alike, and unpacking is the inverse.
TEST(SubdomainMessages, EveryVolumeBlockPacksTheSameBytes) {
  Problem problem;
  problem.grid = Grid{5, 6, 4};
  problem.stencil = Stencil::seven_point();
  // A face, an edge and a plane's strip to send; ghosts of the same shapes to receive.
  const HaloPlan plan{{{0, 5, 0, 6, 3, 4}, {4, 5, 0, 6, 0, 1}, {1, 4, 5, 6, 1, 3}},
                      {{0, 5, 0, 6, 4, 5}, {5, 6, 0, 6, -1, 0}, {1, 4, 6, 7, 1, 3}}};
  std::vector<double> u(120), v(120);
  std::iota(u.begin(), u.end(), 1.0);
  std::iota(v.begin(), v.end(), -500.0);
  const PackedBytes bytes = pack_with_every_block(problem, LocalLayout{5, 6, 1, 4}, plan, u, v);
  const auto& packed = bytes.packed;
  ASSERT_GE(packed.size(), 2u);
  // Message 0: plane 3's 5 x 6 cells of u (from cell (3, 0, 0) = 91), then of v.
  EXPECT_EQ(packed[0][0], u[90]);
  EXPECT_EQ(packed[0][29], u[119]);
  EXPECT_EQ(packed[0][30], v[90]);
  // Message 2 starts after 60 + 12 values: rows 1..3 of column 5 in planes 1 and 2.
  EXPECT_EQ(packed[0][72], u[30 + 6 + 5]);
  EXPECT_EQ(packed[0][75], u[60 + 6 + 5]);
  for (std::size_t k = 1; k < packed.size(); ++k) EXPECT_EQ(packed[k], packed[0]) << k;
  expect_unpacked_as_packed(bytes, plan);
}

// ---------------------------------------------------------------------------------------------
// The engine a front end steps itself over the ranks (pipeline::make_distributed_engine, the
// Python module's under mpirun): a volume's blocks, as it places them, tile the volume, and each
// holds the serial engine's state of its block after steps, through load and state() alike.

template <class Real>
void expect_volume_blocks_of_the_serial_state(Boundary boundary) {
  Problem problem;
  problem.grid = Grid{5, 6, 9};  // planes cut on 2 to 4 ranks (2x1x1, 3x1x1, 2x1x2), unevenly
  problem.boundary = boundary;
  problem.stencil = Stencil::seven_point();
  problem.precision = std::is_same_v<Real, float> ? Precision::Single : Precision::Double;
  problem.params = {0.03, 0.06, 0.2, 0.1, 1.0};
  problem.validate();
  const InitialState initial{InitialKind::Noise, 5};
  const std::int64_t steps = 6;
  EngineOptions options;
  options.backend = "cpu";
  options.threads = 1;

  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  std::vector<Real> su(cells), sv(cells);
  fill_initial_state<Real>(problem.grid, initial, su, sv);
  const Parameters params[1] = {problem.params};
  auto serial = make_engine<Real>(problem, params, options);
  serial->load(0, su, sv);
  serial->advance(steps);
  serial->capture({true, true});
  serial->read_captured(0, su.data(), sv.data());

  const Session session;
  pipeline::BlockPlace place;
  auto engine = pipeline::make_distributed_engine<Real>(problem, options, session, place);
  std::vector<Real> u(static_cast<std::size_t>(place.cells())), v(u.size());
  fill_initial_volume_block<Real>(problem.grid, initial, place.plane_begin, place.row_begin,
                                  place.col_begin, place.planes, place.rows, place.cols, u, v);
  engine->load(0, u, v);
  engine->advance(2);  // split across calls: the state carries over
  engine->advance(steps - 2);
  engine->home_state();
  const auto state = engine->state();
  std::int64_t differing = state.member_stride == u.size() ? 0 : 1;
  for (std::int64_t z = 0; z < place.planes && differing == 0; ++z) {
    for (std::int64_t r = 0; r < place.rows; ++r) {
      for (std::int64_t c = 0; c < place.cols; ++c) {
        const auto local = static_cast<std::size_t>((z * place.rows + r) * place.cols + c);
        const auto global = static_cast<std::size_t>(
            ((place.plane_begin + z) * problem.grid.rows + place.row_begin + r) *
                problem.grid.cols +
            place.col_begin + c);
        differing += std::memcmp(&state.u[local], &su[global], sizeof(Real)) != 0;
        differing += std::memcmp(&state.v[local], &sv[global], sizeof(Real)) != 0;
      }
    }
  }
  std::int64_t covered = place.cells();
  MPI_Allreduce(MPI_IN_PLACE, &covered, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(covered, problem.grid.cells());
  expect_on_all_ranks(
      place.planes > 0 && differing == 0,
      "rank " + std::to_string(session.rank()) + " (planes " + std::to_string(place.plane_begin) +
          "+" + std::to_string(place.planes) + ", rows " + std::to_string(place.row_begin) + "+" +
          std::to_string(place.rows) + ", cols " + std::to_string(place.col_begin) + "+" +
          std::to_string(place.cols) + ") has " + std::to_string(differing) + " differing values");
}

TEST(DistributedGridEngine, AVolumesBlocksHoldTheSerialState) {
  for (Boundary b : {Boundary::ZeroFlux, Boundary::Periodic, Boundary::Fixed}) {
    expect_volume_blocks_of_the_serial_state<float>(b);
    expect_volume_blocks_of_the_serial_state<double>(b);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // One report: rank 0 prints; failures on other ranks reach it through expect_on_all_ranks.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    std::unique_ptr<::testing::TestEventListener> silenced(
        listeners.Release(listeners.default_result_printer()));
  }
  const int result = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
