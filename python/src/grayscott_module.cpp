// grayscott._core: the engines and the run pipeline for Python. The state stays where the engine
// keeps it; `u` and `v` are views of it (NumPy arrays on the CPU, DLPack capsules of device
// memory on a GPU); `run` is the pipeline of `grayscott run` (pipeline/run.hpp), not a copy of it.
// The Python package (python/grayscott/__init__.py) adds the conveniences written in Python.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "app/version.hpp"
#include "engine/engine.hpp"
#include "engine/registry.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"
#include "pipeline/sweep.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace grayscott::python {
namespace {

using AnyEngine = std::variant<std::unique_ptr<Engine<float>>, std::unique_ptr<Engine<double>>>;

AnyEngine make_any_engine(const Problem& problem, std::span<const Parameters> members,
                          const EngineOptions& options) {
  if (problem.precision == Precision::Single) return make_engine<float>(problem, members, options);
  return make_engine<double>(problem, members, options);
}

// Runs `work(n)` until `steps` steps are done, in slices of about 50 ms with the GIL released,
// checking for Ctrl-C between slices: KeyboardInterrupt is raised within about 0.1 s, after a
// whole slice, so the state is that of the last step done. `done` counts the steps as they
// complete. `slice` (steps per slice) carries over from call to call: a loop of short advances
// settles on one engine call each, so the engine fuses its steps as it would without slicing
// (the results never depend on the slicing).
template <class Work>
void advance_interruptibly(std::int64_t steps, std::int64_t& slice, Work&& work,
                           std::int64_t& done) {
  using Clock = std::chrono::steady_clock;
  constexpr double target_seconds = 0.05;
  while (steps > 0) {
    const std::int64_t n = std::min(std::max<std::int64_t>(slice, 1), steps);
    const auto start = Clock::now();
    {
      nb::gil_scoped_release unlocked;
      work(n);
    }
    done += n;
    steps -= n;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (n == slice && seconds < target_seconds / 2)
      slice = std::min<std::int64_t>(slice * 2, std::int64_t(1) << 30);
    else if (seconds > target_seconds * 2 && slice > 1)
      slice = std::max<std::int64_t>(slice / 2, 1);
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
}

InitialState parse_initial(const std::string& init, std::uint64_t seed) {
  return InitialState{parse_initial_kind(init), seed};
}

Problem make_problem(std::int64_t rows, std::int64_t cols, double feed, double kill, double du,
                     double dv, double dt, const std::string& stencil, const std::string& boundary,
                     const std::string& precision) {
  Problem problem;
  problem.grid = {rows, cols};
  problem.params = {feed, kill, du, dv, dt};
  problem.stencil = Stencil::parse(stencil);
  problem.boundary = parse_boundary(boundary);
  problem.precision = parse_precision(precision);
  problem.validate();
  return problem;
}

EngineOptions make_options(const std::string& backend, std::optional<int> threads, int fuse_steps,
                           int device) {
  EngineOptions options;
  check_backend_name(backend);
  options.backend = backend;
  if (threads && *threads <= 0) throw InvalidInput("threads must be a positive integer");
  options.threads = threads.value_or(0);
  options.fuse_steps = fuse_steps;
  options.device = device;
  return options;
}

// What the Python side needs to build a view of one field: pointer, shape, strides in elements,
// and where the memory is.
struct FieldView {
  std::uintptr_t pointer;
  std::vector<std::int64_t> shape;
  bool on_device;
  int device;
};

// The state shared by Simulation and Sweep: a problem, an engine of one or many members, a step
// count, and a lock so that one Python thread at a time drives it.
class Batch {
 public:
  Batch(Problem problem, std::vector<Parameters> members, std::vector<InitialState> initial,
        EngineOptions options)
      : problem_(std::move(problem)),
        members_(std::move(members)),
        initial_(std::move(initial)),
        options_(options),
        engine_(make_any_engine(problem_, members_, options_)) {
    load_initial_states();
  }

  // Loads every member's initial state and sets the step count to 0.
  void reset() {
    const std::unique_lock lock = acquire();
    load_initial_states();
  }

 private:
  void load_initial_states() {
    std::visit(
        [&](auto& engine) {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          const auto cells = static_cast<std::size_t>(problem_.grid.cells());
          std::vector<Real> u(cells), v(cells);
          for (std::size_t m = 0; m < members_.size(); ++m) {
            fill_initial_state<Real>(problem_.grid, initial_[m], u, v);
            engine->load(m, u, v);
          }
        },
        engine_);
    step_ = 0;
  }

 public:
  void advance(std::int64_t steps) {
    if (steps < 0) throw InvalidInput("steps must be a non-negative integer");
    const std::unique_lock lock = acquire();
    std::visit(
        [&](auto& engine) {
          advance_interruptibly(
              steps, slice_, [&](std::int64_t n) { engine->advance(n); }, step_);
        },
        engine_);
  }

  FieldView field(char which) {
    const std::unique_lock lock = acquire();
    return std::visit(
        [&](auto& engine) {
          const auto state = engine->state();
          const auto* data = which == 'u' ? state.u : state.v;
          std::vector<std::int64_t> shape{problem_.grid.rows, problem_.grid.cols};
          if (members_.size() > 1 || batch_shape_)
            shape.insert(shape.begin(), static_cast<std::int64_t>(members_.size()));
          return FieldView{reinterpret_cast<std::uintptr_t>(data), shape, state.on_device,
                           state.device};
        },
        engine_);
  }

  // A copy of one field in host memory (from the device on a GPU), through the engine's capture.
  nb::object copy_field(char which) {
    const std::unique_lock lock = acquire();
    return std::visit(
        [&](auto& engine) -> nb::object {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          const auto cells = static_cast<std::size_t>(problem_.grid.cells());
          auto* values = new Real[members_.size() * cells];
          nb::capsule free_values(values, [](void* p) noexcept { delete[] static_cast<Real*>(p); });
          {
            nb::gil_scoped_release unlocked;
            engine->capture(FieldSet{which == 'u', which == 'v'});
            for (std::size_t m = 0; m < members_.size(); ++m) {
              Real* out = values + m * cells;
              engine->read_captured(m, which == 'u' ? out : nullptr, which == 'v' ? out : nullptr);
            }
          }
          std::vector<std::size_t> shape{static_cast<std::size_t>(problem_.grid.rows),
                                         static_cast<std::size_t>(problem_.grid.cols)};
          if (members_.size() > 1 || batch_shape_) shape.insert(shape.begin(), members_.size());
          return nb::cast(
              nb::ndarray<nb::numpy, Real>(values, shape.size(), shape.data(), free_values));
        },
        engine_);
  }

  bool on_device() {
    return std::visit([](auto& engine) { return engine->state().on_device; }, engine_);
  }

  std::string backend() const {
    return std::visit([](const auto& engine) { return engine->backend(); }, engine_);
  }

  const Problem& problem() const { return problem_; }
  const std::vector<Parameters>& members() const { return members_; }
  const std::vector<InitialState>& initial() const { return initial_; }
  std::int64_t step() const { return step_; }
  double time() const { return static_cast<double>(step_) * problem_.params.dt; }

 protected:
  // Waits for another Python thread using this object, without holding the GIL meanwhile.
  std::unique_lock<std::mutex> acquire() {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
      nb::gil_scoped_release unlocked;
      lock.lock();
    }
    return lock;
  }

  Problem problem_;
  std::vector<Parameters> members_;
  std::vector<InitialState> initial_;
  EngineOptions options_;
  AnyEngine engine_;
  std::int64_t step_ = 0;
  std::int64_t slice_ = 64;   // steps per GIL-free slice of advance(), adapted to ~50 ms
  bool batch_shape_ = false;  // a Sweep's arrays keep their member axis even for one member
  std::mutex mutex_;
};

class Simulation : public Batch {
 public:
  Simulation(const Problem& problem, InitialState initial, EngineOptions options)
      : Batch(problem, {problem.params}, {initial}, options) {}

  // The pipeline of `grayscott run` on this simulation's engine, from its current state, which
  // must be the initial state (step 0) unless the run continues a file. `progress(done, total)`
  // is called after each image, with the GIL; Ctrl-C stops the run at the next image boundary
  // with its checkpoint saved, and raises KeyboardInterrupt.
  nb::dict run(std::int64_t images, std::int64_t steps_per_image, const std::string& output,
               const std::string& fields, bool overwrite, bool quiet,
               std::int64_t checkpoint_images, double checkpoint_seconds, nb::object progress,
               bool resume) {
    pipeline::RunRequest request;
    request.problem = problem_;
    request.initial = initial_[0];
    request.images = images;
    request.steps_per_image = steps_per_image;
    request.fields = parse_fields(fields);
    request.engine = options_;
    request.output = output;
    request.overwrite = overwrite;
    request.quiet = quiet;
    request.resume = resume;
    if (checkpoint_images > 0) request.save.checkpoint_every_images = checkpoint_images;
    if (checkpoint_seconds > 0) request.save.checkpoint_every_seconds = checkpoint_seconds;
    if (resume) {
      const pipeline::RunRequest from_file = pipeline::resume_request(output);
      request.images = from_file.images;
      request.steps_per_image = from_file.steps_per_image;
      request.fields = from_file.fields;
    } else if (step_ != 0) {
      throw InvalidInput(
          "run() writes a run from its initial state, and this simulation is at step " +
          std::to_string(step_) + ": call reset() first, or make a new Simulation");
    }
    return execute(request, progress);
  }

 private:
  static FieldSet parse_fields(const std::string& text) {
    if (text == "v") return {false, true};
    if (text == "u") return {true, false};
    if (text == "u,v" || text == "uv" || text == "v,u") return {true, true};
    throw InvalidInput("fields: expected 'u', 'v' or 'u,v', got '" + text + "'");
  }

  nb::dict execute(pipeline::RunRequest& request, nb::object progress) {
    const std::unique_lock lock = acquire();
    bool interrupted_by_python = false;
    std::optional<nb::python_error> progress_error;
    const bool report = !progress.is_none();
    request.on_progress = [&](std::int64_t done, std::int64_t total) {
      nb::gil_scoped_acquire locked;
      if (PyErr_CheckSignals() != 0) {
        // KeyboardInterrupt (or whatever a signal handler raised): stop at this image boundary.
        nb::python_error error;
        if (!progress_error) progress_error.emplace(std::move(error));
        interrupted_by_python = true;
        pipeline::request_stop(SIGINT);
        return;
      }
      if (report && !progress_error) {
        try {
          progress(done, total);
        } catch (nb::python_error& error) {
          progress_error.emplace(std::move(error));
          pipeline::request_stop(SIGINT);
        }
      }
    };
    pipeline::clear_stop_request();
    pipeline::RunSummary summary;
    {
      nb::gil_scoped_release unlocked;
      summary = std::visit([&](auto& engine) { return pipeline::execute_run_on(*engine, request); },
                           engine_);
    }
    pipeline::clear_stop_request();
    step_ = summary.images_written * request.steps_per_image;
    if (progress_error) {
      if (interrupted_by_python && summary.signal != 0) {
        // The file says "interrupted by SIGINT after image N" and holds its checkpoint.
        PyErr_SetString(PyExc_KeyboardInterrupt,
                        pipeline::interruption_message(request, summary).c_str());
        throw nb::python_error();
      }
      progress_error->restore();
      throw nb::python_error();
    }
    nb::dict result;
    result["backend"] = summary.backend;
    result["first_image"] = summary.first_image;
    result["images_written"] = summary.images_written;
    result["seconds"] = summary.seconds;
    result["cell_updates_per_s"] = summary.cell_updates_per_s;
    result["completed"] = summary.completed;
    result["status"] = summary.status;
    result["output"] = request.output.string();
    return result;
  }
};

class Sweep : public Batch {
 public:
  Sweep(const Problem& problem, const std::vector<pipeline::SweepMember>& members, InitialKind init,
        EngineOptions options)
      : Batch(problem, rates(problem, members), initial_states(members, init), options),
        sweep_members_(members) {
    batch_shape_ = true;
  }

  const std::vector<pipeline::SweepMember>& sweep_members() const { return sweep_members_; }

 private:
  static std::vector<Parameters> rates(const Problem& problem,
                                       const std::vector<pipeline::SweepMember>& members) {
    if (members.empty()) throw InvalidInput("a sweep needs at least one member");
    std::vector<Parameters> params(members.size(), problem.params);
    for (std::size_t m = 0; m < members.size(); ++m) {
      params[m].feed = members[m].feed;
      params[m].kill = members[m].kill;
      params[m].validate();
    }
    return params;
  }
  static std::vector<InitialState> initial_states(const std::vector<pipeline::SweepMember>& members,
                                                  InitialKind init) {
    std::vector<InitialState> states;
    states.reserve(members.size());
    for (const auto& member : members) states.push_back({init, member.seed});
    return states;
  }

  std::vector<pipeline::SweepMember> sweep_members_;
};

// A view of one field as an array that keeps `owner` (the Simulation or Sweep) alive.
template <class Real>
nb::object host_view(const FieldView& view, nb::handle owner) {
  std::vector<std::size_t> shape(view.shape.begin(), view.shape.end());
  return nb::cast(nb::ndarray<nb::numpy, Real>(reinterpret_cast<Real*>(view.pointer), shape.size(),
                                               shape.data(), owner));
}

template <class Real>
nb::object device_view(const FieldView& view, nb::handle owner) {
  std::vector<std::size_t> shape(view.shape.begin(), view.shape.end());
  return nb::cast(nb::ndarray<Real>(reinterpret_cast<Real*>(view.pointer), shape.size(),
                                    shape.data(), owner, nullptr, nb::dtype<Real>(),
                                    nb::device::cuda::value, view.device));
}

nb::object field_array(Batch& batch, nb::handle self, char which) {
  const FieldView view = batch.field(which);
  const bool single = batch.problem().precision == Precision::Single;
  if (view.on_device)
    return single ? device_view<float>(view, self) : device_view<double>(view, self);
  return single ? host_view<float>(view, self) : host_view<double>(view, self);
}

// A fresh DLPack capsule over the device memory a DeviceArray was made over (`pointer`, which a
// later advance does not move): a capsule is consumed by the one library that takes it, so each
// `__dlpack__` call needs its own.
nb::object device_capsule(Batch& batch, char which, std::uintptr_t pointer) {
  FieldView view = batch.field(which);
  if (!view.on_device) throw nb::type_error("a host field has no device capsule; use the array");
  view.pointer = pointer;
  const bool single = batch.problem().precision == Precision::Single;
  nb::handle self = nb::find(&batch);
  return single ? device_view<float>(view, self) : device_view<double>(view, self);
}

nb::dict field_interface(Batch& batch, char which) {
  const FieldView view = batch.field(which);
  nb::dict d;
  d["pointer"] = view.pointer;
  d["shape"] = nb::tuple(nb::cast(view.shape));
  d["typestr"] = batch.problem().precision == Precision::Single ? "<f4" : "<f8";
  d["on_device"] = view.on_device;
  d["device"] = view.device;
  return d;
}

// A stencil as Stencil::parse reads it back: its name, or its nine weights.
std::string stencil_text(const Stencil& stencil) {
  if (stencil.kind != StencilKind::Custom) return stencil.name();
  std::string text;
  char number[32];
  for (const double w : stencil.weights) {
    std::snprintf(number, sizeof number, "%.17g", w);
    text += (text.empty() ? "" : ",") + std::string(number);
  }
  return text;
}

nb::dict parameters_dict(const Problem& problem) {
  nb::dict d;
  d["rows"] = problem.grid.rows;
  d["cols"] = problem.grid.cols;
  d["feed"] = problem.params.feed;
  d["kill"] = problem.params.kill;
  d["du"] = problem.params.du;
  d["dv"] = problem.params.dv;
  d["dt"] = problem.params.dt;
  d["stencil"] = stencil_text(problem.stencil);
  d["boundary"] = std::string(to_string(problem.boundary));
  d["precision"] = std::string(to_string(problem.precision));
  return d;
}

}  // namespace
}  // namespace grayscott::python

NB_MODULE(_core, m) {
  using namespace grayscott;
  using namespace grayscott::python;
  m.doc() = "The grayscott engines and run pipeline (use the grayscott package, not this module).";
  m.attr("__version__") = std::string(version);

  // The command line's one-line messages, as the exceptions Python users expect.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const pipeline::RunInterrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const InvalidInput& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<Batch>(m, "_Batch")
      .def("advance", &Batch::advance, "steps"_a,
           "Advance by `steps` explicit-Euler steps, fused on the engine; the GIL is released and "
           "Ctrl-C raises KeyboardInterrupt within about 0.1 s, the state being that of the last "
           "step done (see `step`).")
      .def("reset", &Batch::reset, "Load the initial state again and set the step count to 0.")
      .def("_field", [](Batch& b, char which) { return field_array(b, nb::find(&b), which); })
      .def("_field_interface", &field_interface)
      .def("_device_capsule", &device_capsule)
      .def("_copy_field", &Batch::copy_field)
      .def_prop_ro("step", &Batch::step, "Steps done since the initial state.")
      .def_prop_ro("time", &Batch::time, "step * dt.")
      .def_prop_ro("backend", &Batch::backend, "The backend that runs: 'cpu' or 'cuda'.")
      .def_prop_ro("on_device", &Batch::on_device,
                   "Whether the state lives in GPU memory (u and v are then DeviceArrays).")
      .def_prop_ro(
          "parameters", [](const Batch& b) { return parameters_dict(b.problem()); },
          "The grid, rates, stencil, boundary and precision.")
      .def_prop_ro("shape", [](const Batch& b) {
        return nb::make_tuple(b.problem().grid.rows, b.problem().grid.cols);
      });

  nb::class_<Simulation, Batch>(m, "_Simulation")
      .def(
          "__init__",
          [](Simulation* self, std::int64_t rows, std::int64_t cols, double feed, double kill,
             double du, double dv, double dt, const std::string& stencil,
             const std::string& boundary, const std::string& precision, const std::string& backend,
             const std::string& init, std::uint64_t seed, std::optional<int> threads,
             int fuse_steps, int device) {
            new (self) Simulation(
                make_problem(rows, cols, feed, kill, du, dv, dt, stencil, boundary, precision),
                parse_initial(init, seed), make_options(backend, threads, fuse_steps, device));
          },
          "rows"_a, "cols"_a, "feed"_a, "kill"_a, "du"_a, "dv"_a, "dt"_a, "stencil"_a, "boundary"_a,
          "precision"_a, "backend"_a, "init"_a, "seed"_a, "threads"_a.none(), "fuse_steps"_a,
          "device"_a)
      .def("_run", &Simulation::run, "images"_a, "steps_per_image"_a, "output"_a, "fields"_a,
           "overwrite"_a, "quiet"_a, "checkpoint_images"_a, "checkpoint_seconds"_a,
           "progress"_a.none(), "resume"_a)
      .def_prop_ro("init", [](const Simulation& s) {
        return nb::make_tuple(std::string(to_string(s.initial()[0].kind)), s.initial()[0].seed);
      });

  nb::class_<Sweep, Batch>(m, "_Sweep")
      .def(
          "__init__",
          [](Sweep* self, const std::vector<double>& feeds, const std::vector<double>& kills,
             const std::vector<std::uint64_t>& seeds, std::int64_t rows, std::int64_t cols,
             double du, double dv, double dt, const std::string& stencil,
             const std::string& boundary, const std::string& precision, const std::string& backend,
             const std::string& init, std::optional<int> threads, int fuse_steps, int device) {
            if (feeds.empty() || kills.empty() || seeds.empty())
              throw InvalidInput("a sweep needs at least one feed, one kill and one seed");
            Problem problem = make_problem(rows, cols, feeds[0], kills[0], du, dv, dt, stencil,
                                           boundary, precision);
            new (self)
                Sweep(problem, pipeline::cross_members(feeds, kills, seeds),
                      parse_initial_kind(init), make_options(backend, threads, fuse_steps, device));
          },
          "feed"_a, "kill"_a, "seeds"_a, "rows"_a, "cols"_a, "du"_a, "dv"_a, "dt"_a, "stencil"_a,
          "boundary"_a, "precision"_a, "backend"_a, "init"_a, "threads"_a.none(), "fuse_steps"_a,
          "device"_a)
      .def_prop_ro("members", [](const Sweep& s) {
        std::vector<std::tuple<double, double, std::uint64_t>> out;
        for (const auto& member : s.sweep_members())
          out.emplace_back(member.feed, member.kill, member.seed);
        return out;
      });

  m.def(
      "_sweep_to_file",
      [](const std::vector<double>& feeds, const std::vector<double>& kills,
         const std::vector<std::uint64_t>& seeds, std::int64_t rows, std::int64_t cols, double du,
         double dv, double dt, const std::string& stencil, const std::string& boundary,
         const std::string& precision, const std::string& init, std::int64_t images,
         std::int64_t steps_per_image, const std::string& output, bool overwrite, bool quiet,
         const std::string& backend, std::optional<int> threads) {
        pipeline::SweepRequest request;
        request.problem = make_problem(rows, cols, feeds.empty() ? 0.014 : feeds[0],
                                       kills.empty() ? 0.054 : kills[0], du, dv, dt, stencil,
                                       boundary, precision);
        request.members = pipeline::cross_members(feeds, kills, seeds);
        request.init = parse_initial_kind(init);
        request.images = images;
        request.steps_per_image = steps_per_image;
        request.output = output;
        request.overwrite = overwrite;
        request.quiet = quiet;
        request.engine = make_options(backend, threads, 0, 0);
        pipeline::clear_stop_request();
        pipeline::SweepSummary summary;
        {
          const pipeline::StopSignals stop_signals;
          nb::gil_scoped_release unlocked;
          summary = pipeline::execute_sweep(request);
        }
        pipeline::clear_stop_request();
        if (summary.signal != 0) {
          PyErr_SetString(
              PyExc_KeyboardInterrupt,
              (summary.status + "; continue with: grayscott sweep --resume " + output).c_str());
          throw nb::python_error();
        }
        nb::dict result;
        result["backend"] = summary.backend;
        result["members"] = summary.members;
        result["batches"] = summary.batches;
        result["seconds"] = summary.seconds;
        result["cell_updates_per_s"] = summary.cell_updates_per_s;
        result["completed"] = summary.completed;
        result["status"] = summary.status;
        result["output"] = output;
        return result;
      },
      "feed"_a, "kill"_a, "seeds"_a, "rows"_a, "cols"_a, "du"_a, "dv"_a, "dt"_a, "stencil"_a,
      "boundary"_a, "precision"_a, "init"_a, "images"_a, "steps_per_image"_a, "output"_a,
      "overwrite"_a, "quiet"_a, "backend"_a, "threads"_a.none());

  m.def(
      "_resumable_run",
      [](const std::string& path) {
        const pipeline::RunRequest request = pipeline::resume_request(path);
        nb::dict d = parameters_dict(request.problem);
        d["init"] = std::string(to_string(request.initial.kind));
        d["seed"] = request.initial.seed;
        return d;
      },
      "path"_a, "The parameters of the unfinished run in `path` (ValueError if there is none).");

  m.def(
      "_parse_checkpoint_every",
      [](const std::string& text) {
        pipeline::SavePolicy policy;
        pipeline::parse_checkpoint_every(text, policy);
        return nb::make_tuple(policy.checkpoint_every_images, policy.checkpoint_every_seconds);
      },
      "text"_a);

  m.def(
      "_dt_limit",
      [](const std::string& stencil, double du, double dv) {
        Problem problem;
        problem.stencil = Stencil::parse(stencil);
        problem.params.du = du;
        problem.params.dv = dv;
        return problem.dt_limit();
      },
      "stencil"_a, "du"_a, "dv"_a);
}
