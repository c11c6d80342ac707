// The per-cell arithmetic of one explicit-Euler step, written once for every backend: the CPU
// engine, its tests and the CUDA kernels all call these functions, so the GPU runs exactly the
// arithmetic that the CPU tests pin.
#pragma once

#include "model/model.hpp"

// A backend that compiles these for a device defines GRAYSCOTT_DEVICE_CODE in its device sources
// (the CUDA backend does, in its CMakeLists.txt); every other compilation sees plain inline host
// functions.
#if defined(GRAYSCOTT_DEVICE_CODE)
#define GRAYSCOTT_HD __host__ __device__ __forceinline__
#define GRAYSCOTT_UNROLL _Pragma("unroll")
#else
#define GRAYSCOTT_HD inline __attribute__((always_inline))
// As far as the longest loop it marks (a volume's eighteen neighbours): a shorter count leaves GCC
// a loop inside the vector loops, which then stay scalar.
#define GRAYSCOTT_UNROLL _Pragma("GCC unroll 18")
#endif

namespace grayscott {

// The model's rates and the Fixed boundary's outside values, converted once to the run's
// precision. The outside values travel with the rates so that every kernel that has a member's
// coefficients has them too.
template <class Real>
struct Coefficients {
  Real feed, kill, du, dv, dt;
  Real outside_u, outside_v;

  static Coefficients from(const Parameters& p, const Outside& outside) {
    return {static_cast<Real>(p.feed),   static_cast<Real>(p.kill), static_cast<Real>(p.du),
            static_cast<Real>(p.dv),     static_cast<Real>(p.dt),   static_cast<Real>(outside.u),
            static_cast<Real>(outside.v)};
  }
  // New rates, the same outside values (rates change between steps; the boundary does not).
  Coefficients with_rates(const Parameters& p) const {
    Coefficients c = from(p, Outside{});
    c.outside_u = outside_u;
    c.outside_v = outside_v;
    return c;
  }
};

// The built-in weight tables, known at compile time so that kernels fold them into constants.
template <StencilKind K>
GRAYSCOTT_HD constexpr double builtin_weight(int k) {
  if constexpr (K == StencilKind::OonoPuri) {
    return (k == 4) ? 0.0 : (k % 2 == 0) ? 0.25 : 0.5;
  } else if constexpr (K == StencilKind::Pretty) {
    return (k == 4) ? 0.0 : 1.0;
  } else {  // FivePoint: the four edges
    return (k % 2 == 1) ? 1.0 : 0.0;
  }
}

// The Laplacian: the sum over the 8 neighbours of w_k * (n_k - centre). A neighbour that
// "contributes nothing" is passed as the centre value: its difference is exactly +0, so passing it
// and skipping it round identically. `w` is read only for StencilKind::Custom.
//
// Built-in stencils are specialised (the course's lesson: a 3x3 stencil beats a generic
// convolution): neighbours of equal weight are summed first, then multiplied once, and zero
// weights are skipped, so oono-puri costs 17 operations instead of 24 and five-point 7. The
// differences n_k - centre are kept rather than sum(w n) - (sum w) centre: in smooth regions they
// are exact, where the factored form would cancel. Every backend calls this one function, so every
// path rounds alike.
template <StencilKind K, class Real>
GRAYSCOTT_HD Real laplacian(const Real (&n)[9], const Real* w) {
  const Real centre = n[4];
  if constexpr (K == StencilKind::Custom) {
    Real sum = Real(0);
    GRAYSCOTT_UNROLL
    for (int k = 0; k < 9; ++k) {
      if (k != 4) sum += w[k] * (n[k] - centre);
    }
    return sum;
  } else {
    const Real edges = ((n[1] - centre) + (n[3] - centre)) + ((n[5] - centre) + (n[7] - centre));
    constexpr double corner_weight = builtin_weight<K>(0), edge_weight = builtin_weight<K>(1);
    if constexpr (corner_weight == 0.0) {
      return edge_weight == 1.0 ? edges : static_cast<Real>(edge_weight) * edges;
    } else {
      const Real corners =
          ((n[0] - centre) + (n[2] - centre)) + ((n[6] - centre) + (n[8] - centre));
      if constexpr (corner_weight == edge_weight) {
        return corner_weight == 1.0 ? corners + edges
                                    : static_cast<Real>(edge_weight) * (corners + edges);
      } else {
        return static_cast<Real>(corner_weight) * corners + static_cast<Real>(edge_weight) * edges;
      }
    }
  }
}

// A volume's Laplacian, scaled as Stencil::seven_point() and nineteen_point() say: from the
// centre, its six face neighbours (along depth, rows and columns, the lower one first) and, for
// nineteen-point only, its twelve edge neighbours (n[6] to n[17], in any order: they share one
// weight). The differences n_k - centre are kept as in the plane's laplacian(); a neighbour that
// contributes nothing is passed as the centre.
template <StencilKind K, class Real>
GRAYSCOTT_HD Real volume_laplacian(Real centre, const Real (&n)[18]) {
  static_assert(K == StencilKind::SevenPoint || K == StencilKind::NineteenPoint);
  const Real faces = ((n[0] - centre) + (n[1] - centre)) + ((n[2] - centre) + (n[3] - centre)) +
                     ((n[4] - centre) + (n[5] - centre));
  if constexpr (K == StencilKind::SevenPoint) {
    return static_cast<Real>(1.0 / 6) * faces;
  } else {
    Real edges = (n[6] - centre) + (n[7] - centre);
    GRAYSCOTT_UNROLL
    for (int k = 8; k < 18; k += 2) edges += (n[k] - centre) + (n[k + 1] - centre);
    return static_cast<Real>(1.0 / 18) * faces + static_cast<Real>(1.0 / 36) * edges;
  }
}

// One explicit-Euler step of the reaction-diffusion equations for one cell.
template <class Real>
GRAYSCOTT_HD void react(Real u, Real v, Real lap_u, Real lap_v, const Coefficients<Real>& c,
                        Real& u_next, Real& v_next) {
  const Real uvv = u * v * v;
  u_next = u + c.dt * (c.du * lap_u - uvv + c.feed * (Real(1) - u));
  v_next = v + c.dt * (c.dv * lap_v + uvv - (c.feed + c.kill) * v);
}

// The floating-point operations of one cell update as laplacian() and react() above are written for
// stencil `kind`, the figure `bench` divides by the arithmetic peak. Each addition, subtraction and
// multiplication counts one; a fused multiply-add would count two, but no build contracts a*b+c
// (-ffp-contract=off, nvcc --fmad=false), so there are none. The Laplacian, per field: the four
// edge differences n_k - centre and the three additions that sum them (7), the corners' likewise
// (7 more where their weight is not zero), then the weights: one multiplication per distinct
// weight other than 1, and an addition where corners and edges are weighted apart (oono-puri
// 7 + 7 + 3 = 17, pretty 7 + 7 + 1 = 15, five-point 7); a custom table takes a difference, a
// multiplication and an addition per neighbour (24). react(): u*v*v 2, u's update 7 (du*lap_u,
// - uvv, 1 - u, feed*(..), +, dt*(..), u + ..), v's 6 (dv*lap_v, + uvv, (feed+kill)*v, -, dt*(..),
// v + ..): 15; feed + kill is the same for every cell of a row, computed once per row by the
// compiled loops, and not counted. So oono-puri 2 x 17 + 15 = 49, pretty 45, five-point 29,
// custom 63. tests/model/test_model.cpp counts them again by running these functions on a number
// type that counts its operations.
constexpr int laplacian_flops(StencilKind kind) {
  if (kind == StencilKind::Custom) return 8 * 3;
  // A volume's, as volume_laplacian() is written: six face differences and five additions, one
  // multiplication (12); nineteen-point adds twelve edge differences and eleven additions, a
  // multiplication and the sum of the two (12 + 25 = 37).
  if (kind == StencilKind::SevenPoint) return 12;
  if (kind == StencilKind::NineteenPoint) return 37;
  const auto weight = [kind](int k) {
    return kind == StencilKind::OonoPuri ? builtin_weight<StencilKind::OonoPuri>(k)
           : kind == StencilKind::Pretty ? builtin_weight<StencilKind::Pretty>(k)
                                         : builtin_weight<StencilKind::FivePoint>(k);
  };
  const double corner = weight(0), edge = weight(1);
  if (corner == 0.0) return 7 + (edge == 1.0 ? 0 : 1);
  if (corner == edge) return 7 + 7 + 1 + (edge == 1.0 ? 0 : 1);
  return 7 + 7 + 3;
}
inline constexpr int react_flops = 15;
constexpr int flops_per_cell_update(StencilKind kind) {
  return 2 * laplacian_flops(kind) + react_flops;
}

// Calls f.template operator()<K>() with the stencil kind as a compile-time constant (host code:
// every backend picks its specialised kernels with it).
template <class F>
decltype(auto) dispatch_stencil(StencilKind kind, F&& f) {
  switch (kind) {
    case StencilKind::OonoPuri:
      return f.template operator()<StencilKind::OonoPuri>();
    case StencilKind::Pretty:
      return f.template operator()<StencilKind::Pretty>();
    case StencilKind::FivePoint:
      return f.template operator()<StencilKind::FivePoint>();
    case StencilKind::Custom:
      break;
    case StencilKind::SevenPoint:
    case StencilKind::NineteenPoint:
      // Problem::validate() keeps a volume's stencil off a plane's kernels.
      throw std::logic_error("a volume's stencil reached a plane's kernel");
  }
  return f.template operator()<StencilKind::Custom>();
}

// Calls f.template operator()<B>() with the boundary rule as a compile-time constant.
template <class F>
decltype(auto) dispatch_boundary(Boundary boundary, F&& f) {
  switch (boundary) {
    case Boundary::ZeroFlux:
      return f.template operator()<Boundary::ZeroFlux>();
    case Boundary::Periodic:
      return f.template operator()<Boundary::Periodic>();
    case Boundary::Fixed:
      break;
  }
  return f.template operator()<Boundary::Fixed>();
}

// Calls f.template operator()<K, B>() with the stencil and the boundary rule as compile-time
// constants: what every backend's kernels are specialised for.
template <class F>
decltype(auto) dispatch_stencil_and_boundary(StencilKind kind, Boundary boundary, F&& f) {
  return dispatch_boundary(boundary, [&]<Boundary B>() -> decltype(auto) {
    return dispatch_stencil(
        kind, [&]<StencilKind K>() -> decltype(auto) { return f.template operator()<K, B>(); });
  });
}

}  // namespace grayscott
