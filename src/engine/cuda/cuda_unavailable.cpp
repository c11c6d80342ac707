// Built when CUDA is off: every request for the GPU gets the reason.
#include <stdexcept>

#include "engine/cuda/cuda_backend.hpp"

namespace grayscott::cuda {

namespace {
constexpr const char* reason =
    "this grayscott was built without CUDA (rebuild it where nvcc is found, with CMake's "
    "GRAYSCOTT_CUDA=ON, through pip the config setting cmake.define.GRAYSCOTT_CUDA=ON)";
}

bool available(std::string* why, int) {
  if (why) *why = reason;
  return false;
}

int device_count() { return 0; }

std::vector<DeviceInfo> devices() { throw std::runtime_error(reason); }

std::uint64_t free_memory(int) { throw std::runtime_error(reason); }

double copy_bandwidth(int) { throw std::runtime_error(reason); }

double arithmetic_peak(int, bool) { throw std::runtime_error(reason); }

template <class Real>
std::unique_ptr<Engine<Real>> make_engine(const Problem&, std::span<const Parameters>,
                                          const EngineOptions&) {
  throw std::runtime_error(std::string("--backend cuda: ") + reason);
}

template std::unique_ptr<Engine<float>> make_engine(const Problem&, std::span<const Parameters>,
                                                    const EngineOptions&);
template std::unique_ptr<Engine<double>> make_engine(const Problem&, std::span<const Parameters>,
                                                     const EngineOptions&);

template <class Real>
std::unique_ptr<SubdomainStepper<Real>> make_subdomain(const Problem&, const LocalLayout&,
                                                       GlobalEdges, int, bool) {
  throw std::runtime_error(std::string("--backend cuda: ") + reason);
}

template std::unique_ptr<SubdomainStepper<float>> make_subdomain(const Problem&, const LocalLayout&,
                                                                 GlobalEdges, int, bool);
template std::unique_ptr<SubdomainStepper<double>> make_subdomain(const Problem&,
                                                                  const LocalLayout&, GlobalEdges,
                                                                  int, bool);

}  // namespace grayscott::cuda
