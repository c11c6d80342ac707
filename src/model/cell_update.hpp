// The per-cell arithmetic of one explicit-Euler step, written once for every backend: the CPU
// engine, its tests and the CUDA kernels all call these functions, so the GPU runs exactly the
// arithmetic that the CPU tests pin.
#pragma once

#include <cmath>
#include <type_traits>

#include "model/host_device.hpp"
#include "model/model.hpp"

namespace grayscott {

// The weights of a built-in stencil, the one table of them every kernel uses (Stencil's tables
// in model.cpp and the references hold the same numbers; tests/model checks they agree): one
// weight for the nearest neighbours (a plane's four edges, a volume's six faces), one for the
// diagonal ones (a plane's four corners, a nineteen-point volume's twelve edges; zero where the
// stencil has none), and their sum over every neighbour (the centre's weight, its sign changed).
// A custom stencil has none here: its table is read at run time (custom_laplacian()).
struct FoldedWeights {
  double nearest = 0, diagonal = 0, sum = 0;
};
// Host and device: a kernel's compile-time branches read it.
GRAYSCOTT_HD constexpr FoldedWeights folded_weights(StencilKind kind) {
  switch (kind) {
    case StencilKind::OonoPuri:
      return {0.5, 0.25, 4 * (0.5 + 0.25)};
    case StencilKind::Pretty:
      return {1.0, 1.0, 8.0};
    case StencilKind::FivePoint:
      return {1.0, 0.0, 4.0};
    case StencilKind::SevenPoint:
      return {1.0 / 6, 0.0, 6 * (1.0 / 6)};
    case StencilKind::NineteenPoint:
      return {1.0 / 18, 1.0 / 36, 6 * (1.0 / 18) + 12 * (1.0 / 36)};
    case StencilKind::Custom:
      break;
  }
  return {};
}

// The model's rates and the Fixed boundary's outside values, converted once to the run's
// precision. The outside values travel with the rates so that every kernel that has a member's
// coefficients has them too.
//
// A built-in stencil's update is folded: u + dt * (Du * lap_u - u v^2 + F (1 - u)) is
//   u_centre * u + dt F + u_nearest * (sum of the nearest) + u_diagonal * (sum of the diagonal)
//   - dt * u v^2,
// and v's likewise with F + k and no constant term, the products of rates and weights computed here
// in double precision and rounded once. It takes about half the operations of the written form
// (cell_arithmetic() counts them). Each term is rounded at the size of u rather than of the change
// dt * (...), so a float32 step rounds more than the written form: over the Python course's 340
// steps on 64x96, 9.9e-6 from float64 where the written form drifts 1.0e-6 (docs/model.md); where
// dt (F + Du sum(w)) <= 1 (the course's rates among them) every term but the reaction's is
// positive, so no difference of nearly equal numbers is rounded.
template <class Real>
struct Coefficients {
  Real feed, kill, du, dv, dt;
  Real outside_u, outside_v;
  Real dt_feed;
  Real u_centre, u_nearest, u_diagonal;
  Real v_centre, v_nearest, v_diagonal;

  static Coefficients from(const Parameters& p, const Outside& outside, StencilKind kind) {
    Coefficients c{};
    c.outside_u = static_cast<Real>(outside.u);
    c.outside_v = static_cast<Real>(outside.v);
    c.set_rates(p, kind);
    return c;
  }
  // New rates, the same outside values (rates change between steps; the boundary does not).
  Coefficients with_rates(const Parameters& p, StencilKind kind) const {
    Coefficients c = *this;
    c.set_rates(p, kind);
    return c;
  }

 private:
  void set_rates(const Parameters& p, StencilKind kind) {
    feed = static_cast<Real>(p.feed);
    kill = static_cast<Real>(p.kill);
    du = static_cast<Real>(p.du);
    dv = static_cast<Real>(p.dv);
    dt = static_cast<Real>(p.dt);
    const FoldedWeights w = folded_weights(kind);
    dt_feed = static_cast<Real>(p.dt * p.feed);
    u_centre = static_cast<Real>(1 - p.dt * p.feed - p.dt * p.du * w.sum);
    u_nearest = static_cast<Real>(p.dt * p.du * w.nearest);
    u_diagonal = static_cast<Real>(p.dt * p.du * w.diagonal);
    v_centre = static_cast<Real>(1 - p.dt * (p.feed + p.kill) - p.dt * p.dv * w.sum);
    v_nearest = static_cast<Real>(p.dt * p.dv * w.nearest);
    v_diagonal = static_cast<Real>(p.dt * p.dv * w.diagonal);
  }
};

// A custom stencil's Laplacian: the sum over the 8 neighbours of w_k * (n_k - centre). A neighbour
// that contributes nothing is passed as the centre value: its difference is exactly +0, so passing
// it and skipping it round identically.
template <class Real>
GRAYSCOTT_HD Real custom_laplacian(const Real (&n)[9], const Real* w) {
  const Real centre = n[4];
  Real sum = Real(0);
  GRAYSCOTT_UNROLL
  for (int k = 0; k < 9; ++k) {
    if (k != 4) sum += w[k] * (n[k] - centre);
  }
  return sum;
}

// One explicit-Euler step of the reaction-diffusion equations for one cell, as the model writes it:
// the custom stencil's update.
template <class Real>
GRAYSCOTT_HD void react(Real u, Real v, Real lap_u, Real lap_v, const Coefficients<Real>& c,
                        Real& u_next, Real& v_next) {
  const Real uvv = u * v * v;
  u_next = u + c.dt * (c.du * lap_u - uvv + c.feed * (Real(1) - u));
  v_next = v + c.dt * (c.dv * lap_v + uvv - (c.feed + c.kill) * v);
}

// a * b + c rounded once (IEEE 754's fusedMultiplyAdd), on the host and on a device alike: the
// folded update below calls it by name, so every backend rounds the same, whatever a compiler
// would contract on its own (none does: -ffp-contract=off, nvcc --fmad=false).
template <class Real>
GRAYSCOTT_HD Real multiply_add(Real a, Real b, Real c) {
#if defined(__CUDA_ARCH__)
  // fmaf for float by name: no promotion to double can slip in.
  if constexpr (std::is_same_v<Real, float>) {
    return fmaf(a, b, c);
  } else {
    return fma(a, b, c);
  }
#else
  return std::fma(a, b, c);
#endif
}

// The folded update (see Coefficients) from the sums of a cell's nearest and diagonal neighbours
// (the latter ignored where the stencil has none).
template <bool HasDiagonal, class Real>
GRAYSCOTT_HD void react_folded(Real u, Real v, Real nearest_u, Real diagonal_u, Real nearest_v,
                               Real diagonal_v, const Coefficients<Real>& c, Real& u_next,
                               Real& v_next) {
  const Real uvv = u * v * v;
  Real un = multiply_add(c.u_centre, u, c.dt_feed);
  Real vn = c.v_centre * v;
  if constexpr (HasDiagonal) {
    un = multiply_add(c.u_diagonal, diagonal_u, un);
    vn = multiply_add(c.v_diagonal, diagonal_v, vn);
  }
  un = multiply_add(c.u_nearest, nearest_u, un);
  vn = multiply_add(c.v_nearest, nearest_v, vn);
  u_next = multiply_add(-c.dt, uvv, un);
  v_next = multiply_add(c.dt, uvv, vn);
}

// One explicit-Euler step of a cell of a plane from its 3x3 neighbourhood (row-major, the cell at
// 4; a neighbour beyond a zero-flux edge passed as the cell itself): what every backend's plane
// kernels compute. Built-in stencils take the folded form (specialised: the course's lesson, a
// 3x3 stencil beats a generic convolution), neighbours of equal weight summed first, each
// column's pair (above + below) before the columns; a custom stencil takes custom_laplacian() and
// react().
template <StencilKind K, class Real>
GRAYSCOTT_HD void step_cell(const Real (&nu)[9], const Real (&nv)[9], const Real* w,
                            const Coefficients<Real>& c, Real& u_next, Real& v_next) {
  if constexpr (K == StencilKind::Custom) {
    react(nu[4], nv[4], custom_laplacian(nu, w), custom_laplacian(nv, w), c, u_next, v_next);
  } else {
    const auto nearest = [](const Real(&n)[9]) { return (n[1] + n[7]) + (n[3] + n[5]); };
    const auto diagonal = [](const Real(&n)[9]) { return (n[0] + n[6]) + (n[2] + n[8]); };
    constexpr bool has_diagonal = folded_weights(K).diagonal != 0.0;
    if constexpr (has_diagonal) {
      react_folded<true>(nu[4], nv[4], nearest(nu), diagonal(nu), nearest(nv), diagonal(nv), c,
                         u_next, v_next);
    } else {
      react_folded<false>(nu[4], nv[4], nearest(nu), Real(0), nearest(nv), Real(0), c, u_next,
                          v_next);
    }
  }
}

// One explicit-Euler step of a cell of a volume whose values are cu, cv, from its neighbours: the
// six faces (along depth, rows and columns, the lower one first), then for nineteen-point the
// twelve edges (in any order: they share one weight; model/neighbourhood.hpp's volume_offset()),
// folded as step_cell() folds a plane's.
template <StencilKind K, class Real>
GRAYSCOTT_HD void step_volume_cell(Real cu, Real cv, const Real (&nu)[18], const Real (&nv)[18],
                                   const Coefficients<Real>& c, Real& u_next, Real& v_next) {
  static_assert(K == StencilKind::SevenPoint || K == StencilKind::NineteenPoint);
  const auto faces = [](const Real(&n)[18]) {
    return ((n[0] + n[1]) + (n[2] + n[3])) + (n[4] + n[5]);
  };
  if constexpr (K == StencilKind::SevenPoint) {
    react_folded<false>(cu, cv, faces(nu), Real(0), faces(nv), Real(0), c, u_next, v_next);
  } else {
    const auto edges = [](const Real(&n)[18]) {
      Real sum = n[6] + n[7];
      GRAYSCOTT_UNROLL
      for (int k = 8; k < 18; k += 2) sum += n[k] + n[k + 1];
      return sum;
    };
    react_folded<true>(cu, cv, faces(nu), edges(nu), faces(nv), edges(nv), c, u_next, v_next);
  }
}

// The arithmetic of one cell update as step_cell() and step_volume_cell() are written for stencil
// `kind`, the figures `bench` sets against the arithmetic peak. Nothing is contracted behind the
// code's back (-ffp-contract=off, nvcc --fmad=false): the fused multiply-adds are the
// multiply_add() calls, and each counts two floating-point operations, every other addition,
// subtraction and multiplication one.
//   A built-in stencil, folded: per field, the sum of the nearest neighbours (a plane's four: 3
// additions; a volume's six faces: 5) and of the diagonal ones where the stencil has them (a
// plane's four corners: 3; a nineteen-point volume's twelve edges: 11); then u v^2 (2
// multiplications), u's three or four multiply-adds (centre + dt F, the diagonal sum, the nearest
// sum, - dt u v^2), v's product v_centre * v and two or three multiply-adds. Oono-puri and pretty:
// 12 additions, 3 multiplications, 7 multiply-adds (29 operations in 22 instructions); five-point
// 6, 3, 5 (19 in 14); seven-point 10, 3, 5 (23 in 18); nineteen-point 32, 3, 7 (49 in 42).
//   A custom table keeps custom_laplacian() and react(): a difference, a multiplication and an
//   addition
// per neighbour (24 per field) and react()'s 15 (u*v*v 2, u's update 7, v's 6; feed + kill, the
// same for every cell of a row, is computed once per row by the compiled loops and not counted):
// 63 operations, no multiply-add.
// tests/model/test_model.cpp counts them again by running the functions on a number type that
// counts its operations.
struct CellArithmetic {
  int additions = 0, multiplications = 0, multiply_adds = 0;
  constexpr int flops() const { return additions + multiplications + 2 * multiply_adds; }
  constexpr int instructions() const { return additions + multiplications + multiply_adds; }
};
constexpr CellArithmetic cell_arithmetic(StencilKind kind) {
  if (kind == StencilKind::Custom) return {2 * 16 + 7, 2 * 8 + 8, 0};  // 63: see above
  const FoldedWeights w = folded_weights(kind);
  const bool volume = kind == StencilKind::SevenPoint || kind == StencilKind::NineteenPoint;
  const bool diagonal = w.diagonal != 0.0;
  const int nearest_sum = volume ? 5 : 3;
  const int diagonal_sum = diagonal ? (volume ? 11 : 3) : 0;
  return {2 * (nearest_sum + diagonal_sum), 3, diagonal ? 7 : 5};
}
constexpr int flops_per_cell_update(StencilKind kind) { return cell_arithmetic(kind).flops(); }

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
