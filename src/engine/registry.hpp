// The backend registry: everything the rest of the program may ask of a backend, without naming
// one. Each backend (one folder under src/engine/) implements `Backend` and registers it once, in
// its CMakeLists.txt (grayscott_register_backend); the front ends, the pipeline and the MPI driver
// only ever see this interface. docs/backends.md is the recipe for adding one.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/engine.hpp"
#include "engine/subdomain.hpp"
#include "model/model.hpp"

namespace grayscott {

// How fast the memory that a backend steps in copies, the roofline `bench` reports against.
struct CopyBandwidth {
  double bytes_per_s = 0;  // read + write counted
  std::string method;      // how it was measured, for the report
};

// How fast the processors that a backend steps with do arithmetic, the roofline `bench` reports
// beside the copy's: floating-point operations per second of the engine's precision.
struct ArithmeticPeak {
  double flops_per_s = 0;  // a fused multiply-add counted two operations
  std::string method;      // how it was measured, for the report
};

// How a block of a grid split over processes (engine/subdomain.hpp) is stepped.
struct SubdomainOptions {
  int threads = 1;                         // host backends: threads
  int device = 0;                          // device backends: the ordinal
  bool messages_in_device_memory = false;  // device backends: halos handed to MPI in device memory
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The name users type after --backend and that files record ("cpu", "cuda").
  virtual std::string_view name() const = 0;
  // `auto` tries the backends from the highest preference down.
  virtual int preference() const = 0;
  // True when the state lives in a device's memory (one device per engine), false for host
  // memory. Decides how batches are sized, how MPI ranks share the machine and what halos travel
  // through.
  virtual bool on_device() const = 0;

  // The devices this process sees, counted without creating a context on any (0 for a host
  // backend, and when the build or the machine has none).
  virtual int device_count() const = 0;
  // Whether this backend can run here, on `device` for a device backend (only that device is
  // touched); otherwise false with the reason in `why`.
  virtual bool available(int device, std::string* why) const = 0;
  // Lines for `grayscott info`, each printed after "<name>: ".
  virtual std::vector<std::string> describe() const = 0;
  // The memory free for state on `device`, in bytes (device backends; 0 for host backends).
  virtual std::uint64_t free_memory(int device) const = 0;

  // Empty when one engine of this backend can step `members` members of `problem`'s grid;
  // otherwise the reason, in one line (a launch limit, not the memory, which is only known when
  // the engine allocates it).
  virtual std::string refuses(const Problem& problem, std::size_t members) const = 0;
  // Empty when blocks of `problem`'s grid split over processes can be made (make_block);
  // otherwise the reason, in one line. `auto` over MPI ranks passes over a backend that refuses.
  virtual std::string refuses_blocks(const Problem& problem) const = 0;
  // The most members one engine takes for `problem`: a sweep runs in batches of at most this.
  virtual std::size_t members_per_engine(const Problem& problem) const = 0;
  // Steps fused per pass that `fuse_steps = 0` stands for, for `members` of `grid`; 0 when the
  // backend's default does not depend on the grid.
  virtual int default_fuse_steps(const Grid& grid, Precision precision, int threads,
                                 std::size_t members) const = 0;
  // The halo depth of a block of a grid split over processes when none is asked for.
  virtual int default_halo_depth(const Grid& block, Precision precision, int threads) const = 0;
  // Measures the copy bandwidth of the memory that `options` steps in.
  virtual CopyBandwidth copy_bandwidth(const EngineOptions& options) const = 0;
  // Measures the arithmetic peak, in `precision`, of what `options` steps with: as many
  // independent multiplications and additions as the engine's kernels can issue, compiled as they
  // are.
  virtual ArithmeticPeak arithmetic_peak(const EngineOptions& options,
                                         Precision precision) const = 0;
  // The kind of device memory that an MPI library may read directly ("cuda" for MPI's CUDA
  // extension), empty when halos always travel through host memory.
  virtual std::string_view mpi_device_memory() const = 0;

  // The factories: an engine for a batch of members, and one block of a grid split over
  // processes. Prefer the templates below; the tag selects the precision.
  virtual std::unique_ptr<Engine<float>> make_engine(std::type_identity<float>,
                                                     const Problem& problem,
                                                     std::span<const Parameters> member_params,
                                                     const EngineOptions& options) const = 0;
  virtual std::unique_ptr<Engine<double>> make_engine(std::type_identity<double>,
                                                      const Problem& problem,
                                                      std::span<const Parameters> member_params,
                                                      const EngineOptions& options) const = 0;
  virtual std::unique_ptr<SubdomainStepper<float>> make_subdomain(
      std::type_identity<float>, const Problem& problem, const LocalLayout& layout,
      GlobalEdges edges, const SubdomainOptions& options) const = 0;
  virtual std::unique_ptr<SubdomainStepper<double>> make_subdomain(
      std::type_identity<double>, const Problem& problem, const LocalLayout& layout,
      GlobalEdges edges, const SubdomainOptions& options) const = 0;

  template <class Real>
  std::unique_ptr<Engine<Real>> make(const Problem& problem,
                                     std::span<const Parameters> member_params,
                                     const EngineOptions& options) const {
    return make_engine(std::type_identity<Real>{}, problem, member_params, options);
  }
  template <class Real>
  std::unique_ptr<SubdomainStepper<Real>> make_block(const Problem& problem,
                                                     const LocalLayout& layout, GlobalEdges edges,
                                                     const SubdomainOptions& options) const {
    return make_subdomain(std::type_identity<Real>{}, problem, layout, edges, options);
  }
};

// Every backend of this build, in the order of their registration (src/engine/CMakeLists.txt).
std::span<const Backend* const> registered_backends();
// The same, from the most preferred down: the order in which `auto` tries them.
std::span<const Backend* const> preferred_backends();
// The backend called `name`; throws InvalidInput naming the choices.
const Backend& find_backend(std::string_view name);
// "auto, cpu or cuda": what --backend accepts.
std::string backend_choices();
// Throws InvalidInput unless `name` is "auto" or a registered backend.
void check_backend_name(std::string_view name);

// The backend that runs `members` members of `problem` for `options` (its backend and device).
// A named backend must be available and able to take the request (else std::runtime_error or
// InvalidInput with the reason). `auto` takes the most preferred backend that is available and
// takes the request; `notice` then says, in one line, why a preferred available backend was
// passed over (empty when none was).
struct BackendChoice {
  const Backend* backend = nullptr;
  std::string notice;
};
BackendChoice choose_backend(const EngineOptions& options, const Problem& problem,
                             std::size_t members);
// The same choice among `candidates`, most preferred first (the registry's rule, open to tests).
BackendChoice choose_backend(std::span<const Backend* const> candidates,
                             const EngineOptions& options, const Problem& problem,
                             std::size_t members);

}  // namespace grayscott
