#include "engine/engine.hpp"

#include <algorithm>

#include "engine/cpu/cpu_engine.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "model/initial_state.hpp"

namespace grayscott {

BackendKind parse_backend(std::string_view text) {
  if (text == "auto") return BackendKind::Auto;
  if (text == "cpu") return BackendKind::Cpu;
  if (text == "cuda") return BackendKind::Cuda;
  throw InvalidInput("backend: expected auto, cpu or cuda, got '" + std::string(text) + "'");
}

std::string_view to_string(BackendKind b) {
  switch (b) {
    case BackendKind::Auto:
      return "auto";
    case BackendKind::Cpu:
      return "cpu";
    case BackendKind::Cuda:
      return "cuda";
  }
  return "auto";
}

template <class Real>
std::unique_ptr<Engine<Real>> make_engine(const Problem& problem,
                                          std::span<const Parameters> member_params,
                                          const EngineOptions& options) {
  problem.validate();
  if (member_params.empty()) throw InvalidInput("an engine needs at least one member");
  BackendKind backend = options.backend;
  if (backend == BackendKind::Auto) {
    backend = cuda::available(nullptr) ? BackendKind::Cuda : BackendKind::Cpu;
  }
  if (backend == BackendKind::Cuda) return cuda::make_engine<Real>(problem, member_params, options);
  return std::make_unique<cpu::CpuEngine<Real>>(problem, member_params, options);
}

template <class Real>
void fill_seed(const Grid& grid, std::span<Real> u, std::span<Real> v) {
  fill_initial_state<Real>(grid, InitialState{}, u, v);
}

template std::unique_ptr<Engine<float>> make_engine(const Problem&, std::span<const Parameters>,
                                                    const EngineOptions&);
template std::unique_ptr<Engine<double>> make_engine(const Problem&, std::span<const Parameters>,
                                                     const EngineOptions&);
template void fill_seed(const Grid&, std::span<float>, std::span<float>);
template void fill_seed(const Grid&, std::span<double>, std::span<double>);

}  // namespace grayscott
