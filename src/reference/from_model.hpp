// The bridge from the model's types to the reference's, and the varied states every check starts
// from: what the tests and `grayscott bench` share when they hold an engine against the reference.
// The reference itself (reference.hpp) stays free of the model's code.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"
#include "reference/reference.hpp"
#include "reference/reference3d.hpp"

namespace grayscott {

inline reference::Boundary to_reference(Boundary b) {
  switch (b) {
    case Boundary::ZeroFlux:
      return reference::Boundary::ZeroFlux;
    case Boundary::Periodic:
      return reference::Boundary::Periodic;
    case Boundary::Fixed:
      return reference::Boundary::Fixed;
  }
  return reference::Boundary::ZeroFlux;
}

// The reference model of `problem`'s stencil and boundary with the rates `params` (a batch
// member's), or the problem's own.
inline reference::Model to_reference(const Problem& problem, const Parameters& params) {
  return {problem.stencil.weights,
          to_reference(problem.boundary),
          params.feed,
          params.kill,
          params.du,
          params.dv,
          params.dt,
          problem.outside.u,
          problem.outside.v};
}
inline reference::Model to_reference(const Problem& problem) {
  return to_reference(problem, problem.params);
}

// The volume's reference model of `problem` (a volume's stencil; a plane's runs as a volume one
// plane deep) with the rates `params`, or the problem's own.
inline reference::Model3 to_reference3(const Problem& problem, const Parameters& params) {
  const reference::Weights27 weights = problem.stencil.kind == StencilKind::SevenPoint
                                           ? reference::seven_point()
                                       : problem.stencil.kind == StencilKind::NineteenPoint
                                           ? reference::nineteen_point()
                                           : reference::in_plane(problem.stencil.weights);
  return {weights,          to_reference(problem.boundary),
          params.feed,      params.kill,
          params.du,        params.dv,
          params.dt,        problem.outside.u,
          problem.outside.v};
}
inline reference::Model3 to_reference3(const Problem& problem) {
  return to_reference3(problem, problem.params);
}

// A reproducible state with every cell different, so that a wrong neighbour, edge or boundary
// cannot hide in a uniform region. u in [0.3, 1], v in [0, 0.5].
inline reference::State varied_state(std::int64_t rows, std::int64_t cols, std::uint32_t seed = 1) {
  reference::State s{rows, cols, std::vector<double>(static_cast<std::size_t>(rows * cols)),
                     std::vector<double>(static_cast<std::size_t>(rows * cols))};
  std::uint32_t x = seed * 2654435761u + 12345u;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return static_cast<double>(x % 1000003u) / 1000003.0;
  };
  for (std::size_t i = 0; i < s.u.size(); ++i) {
    s.u[i] = 0.3 + 0.7 * next();
    s.v[i] = 0.5 * next();
  }
  return s;
}

// The same for a volume: varied_state's values, plane after plane.
inline reference::Volume varied_volume(std::int64_t depth, std::int64_t rows, std::int64_t cols,
                                       std::uint32_t seed = 1) {
  const reference::State plane = varied_state(depth * rows, cols, seed);
  return {depth, rows, cols, plane.u, plane.v};
}

}  // namespace grayscott
