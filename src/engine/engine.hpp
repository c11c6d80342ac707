// The one small interface every backend implements: a batch of simulations that share a
// grid, stencil and boundary, each with its own rates, stepped in place where the backend keeps
// its state. Front ends (run, sweep, bench) drive it and never see a backend's internals.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/statistics.hpp"
#include "model/model.hpp"

namespace grayscott {

struct EngineOptions {
  std::string backend = "auto";  // a registered backend's name (engine/registry.hpp), or "auto"
  int threads = 0;               // host backends: 0 = OpenMP's default
  int fuse_steps = 0;            // steps fused per pass over the grid; 0 = the backend's best
  int device = 0;                // device backends: the device ordinal
};

template <class Real>
class Engine {
 public:
  using real_type = Real;
  virtual ~Engine() = default;

  // The name of the backend that runs it, for attributes and messages.
  virtual std::string backend() const = 0;
  virtual std::size_t members() const = 0;

  // Sets member m's state (rows*cols values each, row-major). Upload once, before stepping.
  virtual void load(std::size_t member, std::span<const Real> u, std::span<const Real> v) = 0;
  // Advances every member by `steps` explicit-Euler steps. May return before the work is done.
  virtual void advance(std::int64_t steps) = 0;
  // Member m's rates from the next step on (the grid, stencil and boundary stay).
  virtual void set_rates(std::size_t member, const Parameters& rates) = 0;
  // Stops stepping member m: its state stays what it is now while the others go on (a sweep's
  // member that settled). Returns false where the backend cannot leave a member out of its
  // batch's steps: the member is then stepped on with the others.
  virtual bool freeze(std::size_t member) {
    (void)member;
    return false;
  }
  // Puts the current state back into the buffers that state() showed after load(), where an
  // advance left it in the others (a copy on the engine's threads or stream), so that the views
  // a front end holds of them stay current from advance to advance (the Python module's arrays).
  virtual void home_state() = 0;
  // Waits for the work that other libraries queued on this engine's device, on their own streams,
  // through views of its state (a CuPy or PyTorch write to the Python module's arrays), so that
  // the next steps start from it. Nothing to wait for on the host.
  virtual void finish_foreign_work() {}
  // Returns once the steps queued so far are done (a device's queue): where a benchmark's clock
  // stops, without the copy of an image. The host's steps are done when advance() returns.
  virtual void finish_steps() {}
  // Readies everything an advance of `steps` will need (a device backend records its launch
  // graphs), without stepping, so that a benchmark's clock starts after it. Optional: advance()
  // does it on first use.
  virtual void prepare(std::int64_t steps) { (void)steps; }
  // Freezes the current state as the next image to read, without waiting for it; stepping may go
  // on at once. Only the fields named are kept.
  virtual void capture(FieldSet fields) = 0;
  // Waits for the last captured image and copies member m's fields into u and v (rows*cols each;
  // a field not captured, or a null pointer, is skipped).
  virtual void read_captured(std::size_t member, Real* u, Real* v) = 0;
  // Copies member m's current state into u and v (rows*cols values each; a null pointer is
  // skipped), once the steps queued so far are done. Returns true when it found every value it
  // copied finite, false when one is not or when it did not look (a run stops at its first
  // non-finite image: a check made while copying reads the image once). By default a capture
  // read back at once, unchecked; a backend whose state is in host memory copies straight from it,
  // with its own threads (the run pipeline reads every image of a host engine so).
  virtual bool copy_state(std::size_t member, Real* u, Real* v) {
    capture({u != nullptr, v != nullptr});
    read_captured(member, u, v);
    return false;
  }

  // From now on every capture() also measures the statistics of the image it freezes
  // (analysis/statistics.hpp) with this histogram, where the state lives: a device's reduction
  // kernel, so that the image's u need not travel. The change is measured against the image
  // captured before; the first against the state now when `change_from_now`, else it has none.
  // Returns false where the backend does not (the caller measures a copy of the image on the
  // host). No histogram: captures measure nothing any more.
  virtual bool measure_captures(const std::optional<analysis::HistogramSpec>& histogram,
                                bool change_from_now) {
    (void)histogram;
    (void)change_from_now;
    return false;
  }
  // Each member's sums of the image captured last (waiting for them as read_captured waits).
  virtual std::vector<analysis::ImageSums> captured_statistics() { return {}; }

  // Where the current state lives, for front ends that read or change it in place (the Python
  // module's arrays): every member's u and v, rows*cols values each, row-major, member m at
  // offset m * member_stride. Waits for the steps queued so far. The pointers stay valid while
  // the engine lives, but they hold the current state only until the next advance or load: the
  // engine steps between two buffers (see home_state).
  struct StateView {
    Real* u = nullptr;
    Real* v = nullptr;
    std::size_t member_stride = 0;  // values from one member's field to the next member's
    bool on_device = false;         // device memory, not host memory
    int device = 0;                 // the device ordinal when on_device
  };
  virtual StateView state() = 0;
};

// An engine of the backend chosen for `options.backend` (engine/registry.hpp's choose_backend;
// `auto` says on stderr, in one line, why it passed over a preferred backend). `member_params`
// holds each member's rates (size = batch); the grid, stencil and boundary come from `problem`.
// Throws InvalidInput (bad request) or std::runtime_error (backend unavailable).
template <class Real>
std::unique_ptr<Engine<Real>> make_engine(const Problem& problem,
                                          std::span<const Parameters> member_params,
                                          const EngineOptions& options);

// Fills u, v with the model's initial seed (see seed_rectangle).
template <class Real>
void fill_seed(const Grid& grid, std::span<Real> u, std::span<Real> v);

}  // namespace grayscott
