#include "engine/engine.hpp"

#include <cstdio>

#include "engine/registry.hpp"
#include "model/initial_state.hpp"

namespace grayscott {

template <class Real>
std::unique_ptr<Engine<Real>> make_engine(const Problem& problem,
                                          std::span<const Parameters> member_params,
                                          const EngineOptions& options) {
  problem.validate();
  if (member_params.empty()) throw InvalidInput("an engine needs at least one member");
  const BackendChoice choice = choose_backend(options, problem, member_params.size());
  if (!choice.notice.empty()) std::fprintf(stderr, "grayscott: %s\n", choice.notice.c_str());
  return choice.backend->make<Real>(problem, member_params, options);
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
