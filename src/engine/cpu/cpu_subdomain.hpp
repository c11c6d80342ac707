// The CPU implementation of a block of a distributed grid: the serial engine's row kernel
// (update_row) applied to the block with its ghost frame, so every cell rounds exactly as in a
// single-process run. Halo messages live in host memory.
#pragma once

#include <span>
#include <vector>

#include "engine/cpu/host_subdomain.hpp"
#include "engine/cpu/row_kernel.hpp"
#include "engine/host_buffer.hpp"
#include "engine/subdomain.hpp"

namespace grayscott::cpu {

template <class Real>
class CpuSubdomain final : public HostSubdomain<Real> {
 public:
  // `edges`: where the block meets a non-periodic edge of the grid. `threads`: OpenMP threads (>
  // 0).
  CpuSubdomain(const Problem& problem, const Parameters& params, const LocalLayout& layout,
               GlobalEdges edges, int threads);

  void load(std::span<const Real> u, std::span<const Real> v) override;
  void read(const Region& region, Real* u, Real* v) override;
  void step(const Region& region) override;
  // Temporal blocking, as in the serial engine: see cpu_subdomain.cpp.
  void step_chain(std::span<const Region> regions) override;

 protected:
  void write(const Region& region, const Real* u, const Real* v) override;

 private:
  template <StencilKind K, Boundary B>
  void step_with(const Region& region);
  template <StencilKind K, Boundary B>
  void chain_band(std::span<const Region> regions, std::int64_t band_begin, std::int64_t band_end,
                  Real* scratch);
  // The rows around row `row` of a level's input (`rows_of` gives a row's u and v at column
  // `col_begin`), absent beyond the grid's edge.
  template <class RowsOf>
  RowNeighbourhood<Real> neighbourhood(std::int64_t row, std::int64_t col_begin,
                                       const RowsOf& rows_of) const;
  // Which ends of the region's rows are ghost cells and which the grid's edge.
  RowEnds ends_of(const Region& region) const;

  using Base = HostSubdomain<Real>;
  using Base::boundary_, Base::coefficients_, Base::current_, Base::edges_, Base::layout_,
      Base::stencil_kind_, Base::threads_, Base::u_, Base::v_;
  std::vector<Real> weights_;
  std::vector<Real> chain_scratch_;  // step_chain's rolling rows, per thread
};

}  // namespace grayscott::cpu
