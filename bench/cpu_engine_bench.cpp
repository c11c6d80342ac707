// Times the CPU engine on the course's workload size (1080 x 1920, float32, Oono-Puri, zero-flux)
// side by side with a STREAM-like copy measured in the same process, so that the engine's effective
// memory traffic (16 bytes per cell-update in float32: read u and v, write u and v) can be quoted
// as a fraction of what this machine can move.
//
//   bench_cpu_engine --benchmark_repetitions=9 --benchmark_enable_random_interleaving=true
//                    --benchmark_report_aggregates_only=true
//
// (interleaving the repetitions keeps a load that drifts during the run from favouring one case).
//
// Counters: bytes_per_second (effective traffic), cell_updates/s, copy_bytes_per_s (the copy
// measured just before and just after the engine, median of 3 each), fraction_of_copy (effective
// traffic over that copy bandwidth); for BM_Copy itself, bytes_per_second counts the bytes read
// plus the bytes written, as STREAM does.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cpu/streaming_copy.hpp"
#include "engine/cpu/subnormals.hpp"
#include "engine/engine.hpp"
#include "engine/host_buffer.hpp"
#include "pipeline/image_queue.hpp"

namespace {

using grayscott::HostBuffer;

// 64 MiB per array: far beyond the last-level cache, so the copy runs from memory.
constexpr std::size_t copy_elements = std::size_t(16) << 20;

struct CopyArrays {
  // Huge pages, as the engine's grids have: the reference for the engine's traffic is the best
  // copy this machine does with the same kind of pages.
  HostBuffer<float> from = HostBuffer<float>::huge_pages(copy_elements),
                    to = HostBuffer<float>::huge_pages(copy_elements);
  CopyArrays() {
    // First touch by the threads that copy, with the copy's own schedule.
    const auto n = static_cast<std::int64_t>(copy_elements);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      from[static_cast<std::size_t>(i)] = static_cast<float>(i % 1024);
      to[static_cast<std::size_t>(i)] = 0.0f;
    }
  }
  void copy() {
    const float* __restrict src = from.data();
    float* __restrict dst = to.data();
    const auto n = static_cast<std::int64_t>(copy_elements);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
  static double bytes() { return 2.0 * sizeof(float) * copy_elements; }
};

CopyArrays& copy_arrays() {
  static CopyArrays arrays;
  return arrays;
}

double median_copy_bandwidth(CopyArrays& arrays, int runs) {
  std::vector<double> rates;
  arrays.copy();  // warm-up
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    arrays.copy();
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    rates.push_back(CopyArrays::bytes() / dt.count());
  }
  std::nth_element(rates.begin(), rates.begin() + runs / 2, rates.end());
  return rates[static_cast<std::size_t>(runs / 2)];
}

void BM_Copy(benchmark::State& state) {
  CopyArrays& arrays = copy_arrays();
  arrays.copy();
  for (auto _ : state) {
    arrays.copy();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(static_cast<double>(state.iterations()) * CopyArrays::bytes()));
}

// One image of the course's workload per iteration: advance(32).
// The CPU engine on the course's grid (the seed preset's defaults: 1080 x 1920, Oono-Puri,
// zero-flux), holding its initial state.
template <class Real>
struct CourseEngine {
  grayscott::Problem problem = [] {
    grayscott::Problem p;
    p.precision = sizeof(Real) == 4 ? grayscott::Precision::Single : grayscott::Precision::Double;
    p.validate();
    return p;
  }();
  std::unique_ptr<grayscott::cpu::CpuEngine<Real>> engine;

  explicit CourseEngine(int fuse_steps) {
    grayscott::EngineOptions options;
    options.backend = "cpu";
    options.fuse_steps = fuse_steps;
    const grayscott::Parameters params[1] = {problem.params};
    engine = std::make_unique<grayscott::cpu::CpuEngine<Real>>(problem, params, options);
    std::vector<Real> u(cells()), v(cells());
    grayscott::fill_seed<Real>(problem.grid, u, v);
    engine->load(0, u, v);
  }
  std::size_t cells() const { return static_cast<std::size_t>(problem.grid.cells()); }
};

template <class Real>
void BM_Advance(benchmark::State& state) {
  CourseEngine<Real> course(static_cast<int>(state.range(0)));
  grayscott::cpu::CpuEngine<Real>& engine = *course.engine;
  const std::size_t cells = course.cells();
  constexpr std::int64_t steps_per_image = 32;
  engine.advance(steps_per_image);  // warm-up
  // The copy bandwidth just before and just after, so that a load which changes during the run
  // (a shared machine) weighs on both sides of the fraction alike.
  const double copy_before = median_copy_bandwidth(copy_arrays(), 3);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) engine.advance(steps_per_image);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  const double copy_bytes_per_s = 0.5 * (copy_before + median_copy_bandwidth(copy_arrays(), 3));

  const double updates =
      static_cast<double>(state.iterations()) * steps_per_image * static_cast<double>(cells);
  const double bytes = updates * 4.0 * sizeof(Real);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["cell_updates"] = benchmark::Counter(updates, benchmark::Counter::kIsRate);
  state.counters["copy_bytes_per_s"] = copy_bytes_per_s;
  state.counters["fraction_of_copy"] = bytes / elapsed.count() / copy_bytes_per_s;
  state.counters["fuse_steps"] = engine.fuse_steps();
}

// The copy of one image out of the engine (v of 1080 x 1920 floats, just stepped) into an image
// buffer the run reuses, as the run loop makes it after every image, with the finite check:
// stores:1 the engine's copy (streaming stores, engine/cpu/streaming_copy.hpp), stores:0 the same
// split of rows with ordinary stores, as it was. bytes_per_second counts the bytes read plus the
// bytes written, as BM_Copy does.
//   bench_cpu_engine --benchmark_filter=CopyImage
void BM_CopyImage(benchmark::State& state) {
  CourseEngine<float> course(0);
  grayscott::cpu::CpuEngine<float>& engine = *course.engine;
  const std::size_t cells = course.cells();
  grayscott::pipeline::ImageBuffer<float> image(cells);
  const bool streaming = state.range(0) == 1;
  const std::int64_t rows = course.problem.grid.rows, cols = course.problem.grid.cols;
  for (auto _ : state) {
    state.PauseTiming();
    engine.advance(32);
    state.ResumeTiming();
    bool finite = true;
    if (streaming) {
      finite = engine.copy_state(0, nullptr, image.data());
    } else {
      const float* from = engine.state().v;
#pragma omp parallel for schedule(static) reduction(&& : finite)
      for (std::int64_t r = 0; r < rows; ++r) {
        finite =
            grayscott::cpu::copy_finite(from + r * cols, cols, image.data() + r * cols) && finite;
      }
    }
    benchmark::DoNotOptimize(finite);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(
      2.0 * sizeof(float) * static_cast<double>(cells) * static_cast<double>(state.iterations())));
}

// One output row of one step, in cache, on one thread: what a batch of narrow members costs per
// cell, and why it was slow.
//   bench_cpu_engine --benchmark_filter='Row|Member'
// BM_RowKernel times the whole row (edge columns included), BM_RowInterior only the vectorised
// interior span: their difference is the two edge cells' share, which grows as rows narrow.
// BM_RowSubnormal is the cause of the batch's old gap and its cure: rows of v as a pattern's
// decaying tail has them (subnormal:1, 2^-120 down to 2^-149, mostly below float's smallest normal
// number) against ordinary ones (subnormal:0), with the flush-to-zero mode the engine sets
// (flush:1, engine/cpu/subnormals.hpp) and without it (flush:0).
template <bool WholeRow>
void row_kernel_bench(benchmark::State& state, bool subnormal_inputs = false) {
  using namespace grayscott;
  const auto cols = static_cast<std::int64_t>(state.range(0));
  std::vector<float> u(3 * static_cast<std::size_t>(cols)), v(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    u[i] = 1.0f - 0.01f * static_cast<float>(i % 7);
    // A decaying tail: from 2^-120 (normal) down to 2^-149 (the smallest subnormal number).
    v[i] = subnormal_inputs ? std::ldexp(1.0f, -120 - static_cast<int>(i % 30))
                            : 0.01f * static_cast<float>(1 + i % 5);
  }
  std::vector<float> out_u(static_cast<std::size_t>(cols)), out_v(out_u.size());
  const cpu::RowNeighbourhood<float> in{{u.data(), u.data() + cols, u.data() + 2 * cols},
                                        {v.data(), v.data() + cols, v.data() + 2 * cols}};
  const auto coefficients =
      Coefficients<float>::from(Parameters{}, Outside{}, StencilKind::OonoPuri);
  const Stencil stencil = Stencil::oono_puri();
  const std::vector<float> w(stencil.weights.begin(), stencil.weights.end());
  constexpr int rows_per_iteration = 64;
  for (auto _ : state) {
    for (int r = 0; r < rows_per_iteration; ++r) {
      if constexpr (WholeRow) {
        cpu::update_row<StencilKind::OonoPuri, Boundary::ZeroFlux>(
            in, cols, cpu::RowEnds{}, coefficients, w.data(), out_u.data(), out_v.data());
      } else {
        cpu::detail::update_span<StencilKind::OonoPuri, Boundary::ZeroFlux, true, true>(
            in, 1, cols - 1, coefficients, w.data(), out_u.data(), out_v.data());
      }
      benchmark::DoNotOptimize(out_u.data());
      benchmark::ClobberMemory();
    }
  }
  const double cells = static_cast<double>(WholeRow ? cols : cols - 2) * rows_per_iteration;
  state.counters["ns_per_cell"] =
      benchmark::Counter(cells * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
void BM_RowKernel(benchmark::State& state) { row_kernel_bench<true>(state); }
void BM_RowInterior(benchmark::State& state) { row_kernel_bench<false>(state); }
void BM_RowSubnormal(benchmark::State& state) {
  const bool subnormal = state.range(1) != 0, flush = state.range(2) != 0;
  if (flush) {
    const grayscott::cpu::FlushSubnormals<float> mode;
    row_kernel_bench<true>(state, subnormal);
  } else {
    row_kernel_bench<true>(state, subnormal);
  }
}

// A float grid of rows x cols in u and v (values away from the rest state) with its output arrays,
// and the Oono-Puri stencil's coefficients and weights at the model's default rates: what the
// row and member benchmarks step.
struct OonoPuriGrid {
  std::vector<float> u, v, out_u, out_v;
  grayscott::Coefficients<float> coefficients = grayscott::Coefficients<float>::from(
      grayscott::Parameters{}, grayscott::Outside{}, grayscott::StencilKind::OonoPuri);
  std::vector<float> w;
  explicit OonoPuriGrid(std::size_t cells) : u(cells), v(cells), out_u(cells), out_v(cells) {
    for (std::size_t i = 0; i < cells; ++i) {
      u[i] = 1.0f - 0.01f * static_cast<float>(i % 7);
      v[i] = 0.01f * static_cast<float>(1 + i % 5);
    }
    const grayscott::Stencil stencil = grayscott::Stencil::oono_puri();
    w.assign(stencil.weights.begin(), stencil.weights.end());
  }
};

// The rows of a grid as one unfused pass steps them, on one thread: eight rows of `cols` values
// of u and of v one after the other in memory (a course grid's rows where cols is 1920), each of
// the six inner rows through update_row into its own output row. Unlike BM_RowKernel, which steps
// one row again and again from three rows 4 KiB apart (cols:1024), the loads and stores are spread
// over the grid as the engine's are.
void BM_GridRows(benchmark::State& state) {
  using namespace grayscott;
  const auto cols = static_cast<std::int64_t>(state.range(0));
  constexpr std::int64_t rows = 8;
  const auto cells = static_cast<std::size_t>(rows * cols);
  OonoPuriGrid grid(cells);
  auto &u = grid.u, &v = grid.v, &out_u = grid.out_u, &out_v = grid.out_v;
  const auto& coefficients = grid.coefficients;
  const auto& w = grid.w;
  const auto row = [&](const std::vector<float>& field, std::int64_t r) {
    return field.data() + r * cols;
  };
  for (auto _ : state) {
    for (std::int64_t r = 1; r + 1 < rows; ++r) {
      const cpu::RowNeighbourhood<float> in{{row(u, r - 1), row(u, r), row(u, r + 1)},
                                            {row(v, r - 1), row(v, r), row(v, r + 1)}};
      cpu::update_row<StencilKind::OonoPuri, Boundary::ZeroFlux>(
          in, cols, cpu::RowEnds{}, coefficients, w.data(), out_u.data() + r * cols,
          out_v.data() + r * cols);
    }
    benchmark::DoNotOptimize(out_u.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_cell"] = benchmark::Counter(
      static_cast<double>((rows - 2) * cols) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One step of one small member in cache, on one thread, the way a batch steps it
// (CpuEngine::advance_members_in_cache): each row through update_row with its neighbourhood
// worked out (inside_loop:0, as the batch did), or the first and last rows so and the rows between
// through update_inside_rows (inside_loop:1, what it does now). Their difference is the per-row
// cost that weighs on 64-wide members.
void BM_MemberStep(benchmark::State& state) {
  using namespace grayscott;
  const auto rows = static_cast<std::int64_t>(state.range(0)), cols = rows;
  const bool inside_loop = state.range(1) != 0;
  const auto cells = static_cast<std::size_t>(rows * cols);
  OonoPuriGrid grid(cells);
  auto &u = grid.u, &v = grid.v, &out_u = grid.out_u, &out_v = grid.out_v;
  const auto& coefficients = grid.coefficients;
  const auto& w = grid.w;
  constexpr auto K = StencilKind::OonoPuri;
  constexpr auto B = Boundary::ZeroFlux;
  const auto row_alone = [&](std::int64_t r) {
    const cpu::RowNeighbourhood<float> in{{r > 0 ? &u[(r - 1) * cols] : nullptr, &u[r * cols],
                                           r + 1 < rows ? &u[(r + 1) * cols] : nullptr},
                                          {r > 0 ? &v[(r - 1) * cols] : nullptr, &v[r * cols],
                                           r + 1 < rows ? &v[(r + 1) * cols] : nullptr}};
    cpu::update_row<K, B>(in, cols, cpu::RowEnds{}, coefficients, w.data(), &out_u[r * cols],
                          &out_v[r * cols]);
  };
  const cpu::FlushSubnormals<float> mode;
  for (auto _ : state) {
    if (inside_loop) {
      row_alone(0);
      cpu::update_inside_rows<K, B>(u.data(), v.data(), 1, rows - 1, cols, coefficients, w.data(),
                                    out_u.data(), out_v.data());
      row_alone(rows - 1);
    } else {
      for (std::int64_t r = 0; r < rows; ++r) row_alone(r);
    }
    benchmark::DoNotOptimize(out_u.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_cell"] =
      benchmark::Counter(static_cast<double>(cells) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// A batch stepped as CpuEngine::advance_members_in_cache steps it, on one thread: 64 members of
// 128x128, each carried through 32 steps from a core's cache before the next, their fields in four
// arrays (u and v, two buffers each) allocated with huge pages (pages:1, what the engine did) or
// ordinary ones (pages:0, what it does now for such batches). With 2 MiB pages the four arrays
// start at the same offset of their pages, so a member's four fields fall into the same sets of
// the L2 cache; on an Intel Xeon (2 MiB L2) that stepped the batch 1.75x slower.
void BM_BatchPages(benchmark::State& state) {
  using namespace grayscott;
  const bool huge = state.range(0) != 0;
  constexpr std::int64_t rows = 128, cols = 128, members = 64, steps = 32;
  constexpr auto cells = static_cast<std::size_t>(rows * cols);
  const auto allocate = huge ? &HostBuffer<float>::huge_pages : &HostBuffer<float>::small_pages;
  HostBuffer<float> u[2] = {allocate(members * cells), allocate(members * cells)};
  HostBuffer<float> v[2] = {allocate(members * cells), allocate(members * cells)};
  for (int b = 0; b < 2; ++b) {
    for (std::size_t i = 0; i < members * cells; ++i) {
      u[b][i] = 1.0f - 0.01f * static_cast<float>(i % 7);
      v[b][i] = 0.01f * static_cast<float>(1 + i % 5);
    }
  }
  const auto coefficients =
      Coefficients<float>::from(Parameters{}, Outside{}, StencilKind::OonoPuri);
  const Stencil stencil = Stencil::oono_puri();
  const std::vector<float> w(stencil.weights.begin(), stencil.weights.end());
  constexpr auto K = StencilKind::OonoPuri;
  constexpr auto B = Boundary::ZeroFlux;
  const cpu::FlushSubnormals<float> mode;
  for (auto _ : state) {
    for (std::int64_t m = 0; m < members; ++m) {
      const std::size_t at = static_cast<std::size_t>(m) * cells;
      for (std::int64_t s = 0; s < steps; ++s) {
        const float* in_u = u[s % 2].data() + at;
        const float* in_v = v[s % 2].data() + at;
        float* out_u = u[1 - s % 2].data() + at;
        float* out_v = v[1 - s % 2].data() + at;
        const auto edge_row = [&](std::int64_t r) {
          const cpu::RowNeighbourhood<float> in{
              {r > 0 ? in_u + (r - 1) * cols : nullptr, in_u + r * cols,
               r + 1 < rows ? in_u + (r + 1) * cols : nullptr},
              {r > 0 ? in_v + (r - 1) * cols : nullptr, in_v + r * cols,
               r + 1 < rows ? in_v + (r + 1) * cols : nullptr}};
          cpu::update_row<K, B>(in, cols, cpu::RowEnds{}, coefficients, w.data(), out_u + r * cols,
                                out_v + r * cols);
        };
        edge_row(0);
        cpu::update_inside_rows<K, B>(in_u, in_v, 1, rows - 1, cols, coefficients, w.data(), out_u,
                                      out_v);
        edge_row(rows - 1);
      }
    }
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_cell"] = benchmark::Counter(
      static_cast<double>(cells * members * steps) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_MemberStep)->ArgNames({"rows", "inside_loop"})->ArgsProduct({{64, 128}, {0, 1}});
BENCHMARK(BM_BatchPages)->ArgName("pages")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GridRows)->ArgName("cols")->Arg(128)->Arg(512)->Arg(1920);
BENCHMARK(BM_RowKernel)->ArgName("cols")->Arg(64)->Arg(128)->Arg(1024)->Arg(4096);
BENCHMARK(BM_RowInterior)->ArgName("cols")->Arg(64)->Arg(128)->Arg(1024)->Arg(4096);
BENCHMARK(BM_RowSubnormal)
    ->ArgNames({"cols", "subnormal", "flush"})
    ->ArgsProduct({{128}, {0, 1}, {0, 1}});
BENCHMARK(BM_Copy)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CopyImage)
    ->ArgName("stores")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// 0 = the engine's automatic choice (reported in the fuse_steps counter).
BENCHMARK_TEMPLATE(BM_Advance, float)
    ->ArgName("fuse")
    ->Arg(1)
    ->Arg(0)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Advance, double)
    ->ArgName("fuse")
    ->Arg(1)
    ->Arg(0)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// The depths the automatic choice picks from, for tuning it: --benchmark_filter=FuseDepth
void BM_FuseDepth(benchmark::State& state) { BM_Advance<float>(state); }
BENCHMARK(BM_FuseDepth)
    ->ArgName("fuse")
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->Arg(4)
    ->Arg(6)
    ->Arg(8)
    ->Arg(12)
    ->Arg(16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("threads", std::to_string(omp_get_max_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
