// What the CUDA backend's volume tests share: volume problems, and the plain host loop that the
// volume kernels are held to bitwise, a step of every cell through the functions every backend
// shares (gather_volume_neighbours, step_volume_cell), with none of the kernels' tiles,
// slabs or launches. For float32, callers flush subnormals (cpu::FlushSubnormals), as the kernels
// do (nvcc --ftz=true).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "model/cell_update.hpp"
#include "model/model.hpp"
#include "model/neighbourhood.hpp"
#include "reference/from_model.hpp"

namespace grayscott::testing {

struct VolumeShape {
  std::int64_t depth, rows, cols;
  std::string text() const {
    return std::to_string(depth) + "x" + std::to_string(rows) + "x" + std::to_string(cols);
  }
};
inline void PrintTo(const VolumeShape& shape, std::ostream* os) { *os << shape.text(); }

// A stable volume problem whose rates exercise both reaction terms (those of the plane's tests).
inline Problem volume_problem(const VolumeShape& shape, const Stencil& stencil, Boundary boundary,
                              Precision precision = Precision::Single) {
  Problem problem;
  problem.grid.depth = shape.depth;
  problem.grid.rows = shape.rows;
  problem.grid.cols = shape.cols;
  problem.stencil = stencil;
  problem.boundary = boundary;
  problem.precision = precision;
  problem.params = {0.03, 0.06, 0.2, 0.1, 0.5};
  problem.validate();
  return problem;
}

// Calls f.template operator()<K, B>() with a volume's stencil and the boundary as constants.
template <class F>
void dispatch_volume(StencilKind kind, Boundary boundary, F&& f) {
  dispatch_boundary(boundary, [&]<Boundary B>() {
    if (kind == StencilKind::NineteenPoint) {
      f.template operator()<StencilKind::NineteenPoint, B>();
    } else {
      f.template operator()<StencilKind::SevenPoint, B>();
    }
  });
}

// One step of one member's volume, from u, v into u_out, v_out.
template <StencilKind K, Boundary B, class Real>
void host_volume_step(const Grid& grid, const Coefficients<Real>& coefficients,
                      const std::vector<Real>& u, const std::vector<Real>& v,
                      std::vector<Real>& u_out, std::vector<Real>& v_out) {
  const std::int64_t depth = grid.depth, rows = grid.rows, cols = grid.cols;
  const auto at = [&](std::int64_t z, std::int64_t r, std::int64_t c) {
    return static_cast<std::size_t>((z * rows + r) * cols + c);
  };
  for (std::int64_t z = 0; z < depth; ++z) {
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const Real cu = u[at(z, r, c)], cv = v[at(z, r, c)];
        Real nu[18], nv[18];
        gather_volume_neighbours<K, B>(
            cu, cv,
            [&](int dz, int dr, int dc) {
              return z + dz >= 0 && z + dz < depth && r + dr >= 0 && r + dr < rows && c + dc >= 0 &&
                     c + dc < cols;
            },
            [&](int dz, int dr, int dc, Real& nu_k, Real& nv_k) {
              const std::size_t n =
                  at(wrap_near(z + dz, depth), wrap_near(r + dr, rows), wrap_near(c + dc, cols));
              nu_k = u[n];
              nv_k = v[n];
            },
            coefficients, nu, nv);
        step_volume_cell<K>(cu, cv, nu, nv, coefficients, u_out[at(z, r, c)], v_out[at(z, r, c)]);
      }
    }
  }
}

// `steps` steps of one member's volume with the rates `params`, in place.
template <class Real>
void host_volume_steps(const Problem& problem, const Parameters& params, std::vector<Real>& u,
                       std::vector<Real>& v, std::int64_t steps) {
  const auto coefficients = Coefficients<Real>::from(params, problem.outside, problem.stencil.kind);
  std::vector<Real> u_next(u.size()), v_next(v.size());
  dispatch_volume(problem.stencil.kind, problem.boundary, [&]<StencilKind K, Boundary B>() {
    for (std::int64_t s = 0; s < steps; ++s) {
      host_volume_step<K, B>(problem.grid, coefficients, u, v, u_next, v_next);
      u.swap(u_next);
      v.swap(v_next);
    }
  });
}

template <class Real>
std::vector<Real> to_precision(const std::vector<double>& x) {
  return {x.begin(), x.end()};
}

}  // namespace grayscott::testing
