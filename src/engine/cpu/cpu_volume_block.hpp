// The CPU implementation of a block of a volume split over MPI ranks: the volume engine's cell
// update (volume_kernel.hpp: gather_volume_neighbours, step_volume_cell) applied to the
// block with its ghost frame one cell deep, so every cell rounds exactly as in a single-process
// run. The ghost planes, rows and columns hold the neighbours' cells (or, on a periodic volume,
// the wrapped-around ones); beyond a non-periodic face of the volume the boundary rule stands in.
// Halo messages live in host memory.
#pragma once

#include <span>
#include <vector>

#include "engine/cpu/host_subdomain.hpp"
#include "engine/cpu/volume_kernel.hpp"
#include "engine/host_buffer.hpp"
#include "engine/subdomain.hpp"

namespace grayscott::cpu {

template <class Real>
class CpuVolumeBlock final : public HostSubdomain<Real> {
 public:
  // `layout`: a volume's (planes > 0, depth 1; make_cpu_block checks it, check_block_layout).
  // `edges`: which of the block's six faces are the volume's (non-periodic boundaries).
  // `threads`: OpenMP threads (> 0).
  CpuVolumeBlock(const Problem& problem, const Parameters& params, const LocalLayout& layout,
                 GlobalEdges edges, int threads);

  void load(std::span<const Real> u, std::span<const Real> v) override;
  void read(const Region& region, Real* u, Real* v) override;
  void step(const Region& region) override;
  // Its rim's columns are stepped cell by cell (step_narrow): about 40 % of a 192x192x96 block's
  // interior step per side on the 2-core Xeon this was measured on, more than a halo exchange
  // waits for.
  bool column_rims_costly() const override { return true; }

 protected:
  void write(const Region& region, const Real* u, const Real* v) override;

 private:
  template <StencilKind K, Boundary B>
  void step_with(const Region& region);
  // step_with() for a region at most two columns wide, cell by cell.
  template <StencilKind K, Boundary B>
  void step_narrow(const Region& region);
  // Copies `region` of field `field` to `out` (to: false) or from it (to: true), plane after
  // plane, row-major.
  void copy(const Region& region, Real* field, Real* values, bool into_field) const;

  using Base = HostSubdomain<Real>;
  using Base::boundary_, Base::coefficients_, Base::current_, Base::edges_, Base::layout_,
      Base::stencil_kind_, Base::threads_, Base::u_, Base::v_;
};

}  // namespace grayscott::cpu
