// grayscott._core: the engines and the run pipeline for Python. The state stays where the engine
// keeps it; `u` and `v` are views of it (NumPy arrays on the CPU, DLPack capsules of device
// memory on a GPU); `run` is the pipeline of `grayscott run` (pipeline/run.hpp), not a copy of it.
// Every argument goes through the settings the command line takes (requests/settings.hpp): the
// same names, defaults, limits and messages. The Python package (python/grayscott) adds the
// conveniences written in Python.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

#include "analysis/classify.hpp"
#include "analysis/measure.hpp"
#include "app/version.hpp"
#include "engine/engine.hpp"
#include "engine/registry.hpp"
#include "io/files/output_path.hpp"
#include "io/files/run_file.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/render.hpp"
#include "model/initial_state.hpp"
#include "model/model.hpp"
#include "pipeline/distributed_options.hpp"
#include "pipeline/run.hpp"
#include "pipeline/state_memory.hpp"
#include "pipeline/stop_signal.hpp"
#include "pipeline/sweep.hpp"
#include "requests/names.hpp"
#include "requests/settings.hpp"
#include "requests/value_sets.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/decomposition.hpp"
#include "mpi/session.hpp"
#include "pipeline/distributed_run.hpp"
#include "pipeline/distributed_sweep.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace grayscott::python {
namespace {

using requests::Form;
using requests::Setting;

// ---- Arguments: Python values into the settings, checked as Python users expect ----------------

std::string short_repr(nb::handle value) {
  std::string text = nb::repr(value).c_str();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Whether a run or sweep of this thread takes SIGINT from Python's handler while it holds no GIL
// (pipeline::StopSignals::WhereDefault::interrupt), so that Ctrl-C stops it after the image in
// progress, as on the command line, rather than after the next, when Python would hear of it:
// in the main thread (the only one Python's handlers run in), where that handler is still
// Python's own (KeyboardInterrupt), not one of the script's. The GIL held.
bool run_takes_interrupt() {
  const nb::module_ threading = nb::module_::import_("threading");
  if (!threading.attr("current_thread")().is(threading.attr("main_thread")())) return false;
  const nb::module_ signal = nb::module_::import_("signal");
  return signal.attr("getsignal")(SIGINT).is(signal.attr("default_int_handler"));
}

// Set when a SIGINT the run took was passed on to Python (tell_python_of_interrupt).
std::atomic<bool> python_told_of_interrupt{false};
void tell_python_of_interrupt() {  // from the signal handler: async-signal-safe
  python_told_of_interrupt.store(true);
  PyErr_SetInterrupt();
}

// The stop signals of a run or sweep of this thread: SIGINT too where run_takes_interrupt, passed
// on to Python as well, which hears it where it would have (a callback that blocks, or after the
// run where it came too late to stop it). The GIL held.
pipeline::StopSignals::WhereDefault python_stop_signals() {
  python_told_of_interrupt.store(false);
  return {run_takes_interrupt(), tell_python_of_interrupt};
}

// A SIGINT the run took and passed on to Python, heard now (nothing where none came) rather than
// as a second KeyboardInterrupt after the one the caller raises for the same stop.
void forget_the_interrupt_python_was_told_of() {
  if (python_told_of_interrupt.exchange(false) && PyErr_CheckSignals() != 0) PyErr_Clear();
}

// Whether `error`, raised by a callback during a run, is the KeyboardInterrupt of a SIGINT that
// came (Ctrl-C, a Jupyter interrupt), passed on to Python by the run's handler; one the callback
// raised itself is an exception like any other ("on_image raised KeyboardInterrupt"), and so is
// one that a script's own SIGINT handler raised (the run then leaves SIGINT to it). The flag is
// the running run's: runs of one process take turns.
bool interrupted_by_signal(const nb::python_error& error) {
  return error.matches(PyExc_KeyboardInterrupt) && python_told_of_interrupt.load();
}

// Between two pictures or frames (the GIL released): whether Ctrl-C, or another signal whose
// Python handler raised, asks to stop (`interrupted` is then set, the exception pending), or a
// stop signal the pipeline's handler took (pipeline::StopSignals::WhereDefault).
std::function<bool()> python_interrupt(bool& interrupted) {
  return [&interrupted] {
    if (pipeline::stop_requested() != 0) return true;
    nb::gil_scoped_acquire locked;
    interrupted = interrupted || PyErr_CheckSignals() != 0;
    return interrupted;
  };
}

// Raises the KeyboardInterrupt a rendering was stopped by (pending, from PyErr_CheckSignals) with
// what it did (`words`), as the command line says it; another exception a signal handler raised
// is raised as it is.
[[noreturn]] void interrupted_with(const std::string& words) {
  if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_KeyboardInterrupt, words.c_str());
  }
  throw nb::python_error();
}

// A rendering's progress: `progress(done, total)` called after each picture or frame, under the
// GIL; an exception it raises stops the rendering at once, kept in `error` for the caller to
// raise. Handles, not objects: the options are copied while the GIL is released.
void report_renders(io::RenderOptions& options, nb::handle progress,
                    std::optional<nb::python_error>& error) {
  if (progress.is_none()) return;
  options.on_frame = [progress, &error](std::int64_t done, std::int64_t total) {
    if (error) return;
    nb::gil_scoped_acquire locked;
    try {
      progress(done, total);
    } catch (nb::python_error& raised) {
      error.emplace(std::move(raised));
    }
  };
  options.stop_requested = [stop = options.stop_requested, &error] {
    return error.has_value() || (stop && stop());
  };
}

#if GRAYSCOTT_WITH_MPI
// The ranks of MPI.COMM_WORLD, for grids split over them and sweeps whose members are. mpi4py has
// initialised MPI: the session neither initialises nor finalises it.
std::shared_ptr<mpi::Session> world_session() {
  static const auto session = std::make_shared<mpi::Session>();
  return session;
}
#endif

// Runs, sweeps, renders and videos in progress in this process, in any thread. The interpreter's
// exit stops them at their next image (stop_work_at_exit) before it ends the threads they run
// in: a daemon thread ended inside one, as the interpreter ends them, unwinds through the engine
// and aborts the process, leaving the file "running".
std::atomic<int> work_in_progress{0};
// Set once the interpreter exits (stop_work_at_exit), with the thread that runs its exit
// handlers: work in progress in other threads stops, and none starts there; that thread's own
// later exit handlers may still run and step.
std::atomic<bool> interpreter_exiting{false};
std::atomic<std::thread::id> exiting_thread{};
// Work this thread has in progress (WorkInProgress, GilReleased): its own calls, from its run's
// callbacks, go on while the exit waits for that work to end.
thread_local int work_of_this_thread = 0;
bool exit_begun_elsewhere() {
  return interpreter_exiting.load() && exiting_thread.load() != std::this_thread::get_id();
}
bool exit_refuses_this_thread() { return exit_begun_elsewhere() && work_of_this_thread == 0; }
// Once the exit has begun, another thread's call into the module waits here, without the GIL,
// until the process ends. Let go on, it would be ended by the interpreter inside this module's
// frames at its next taking of the GIL (a NumPy array made, an exception raised), which unwinds
// through them and aborts the process; nor may it start work.
[[noreturn]] void wait_for_the_exit() {
  PyEval_SaveThread();  // the GIL, given up for good
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}
struct WorkInProgress {
  WorkInProgress() {
    if (exit_refuses_this_thread()) wait_for_the_exit();
    ++work_in_progress;
    ++work_of_this_thread;
  }
  ~WorkInProgress() {
    --work_of_this_thread;
    --work_in_progress;
  }
  WorkInProgress(const WorkInProgress&) = delete;
  WorkInProgress& operator=(const WorkInProgress&) = delete;
};

// Releases the GIL for the C++ work of its scope, counted as work in progress, so that the
// interpreter's exit waits for it to take the GIL back: a thread the interpreter ends while it
// waits for the GIL unwinds through this destructor and aborts the process. Once the exit has
// begun, another thread waits for the process's end instead (wait_for_the_exit).
class GilReleased {
 public:
  GilReleased() {
    // Under the GIL, as stop_work_at_exit's look at the count is: no exit slips in between.
    if (exit_refuses_this_thread()) wait_for_the_exit();
    ++work_in_progress;
    ++work_of_this_thread;
    released_.emplace();
  }
  ~GilReleased() {
    released_.reset();
    --work_of_this_thread;
    --work_in_progress;
  }
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  std::optional<nb::gil_scoped_release> released_;
};

// The interpreter's exit, from its atexit handler (registered by the package), or from the first
// exit handler that waits for a simulation another thread steps (atexit runs the handlers
// registered after the package's first): runs (and sweeps, renders, advances) still going on in
// other threads stop at their next image or step slice, their files consistent and continuable,
// as Ctrl-C leaves them, before the interpreter ends those threads. False when some did not
// within a minute.
bool stop_work_at_exit() {
  // Nothing new starts in another thread; this one's later exit handlers may still work.
  exiting_thread = std::this_thread::get_id();
  interpreter_exiting = true;
  if (work_in_progress.load() == work_of_this_thread) return true;
  {
    nb::gil_scoped_release unlocked;  // their callbacks need the GIL to reach the image's end
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    // Lasting: each run clears the requests as it starts and ends, which the others need.
    pipeline::request_lasting_stop("the Python interpreter exited while it ran");
    // This thread's own (an exit handler's advance waiting for another thread's) stays.
    while (work_in_progress.load() > work_of_this_thread) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr,
                     "grayscott: work in another thread did not reach the end of an image "
                     "within a minute of the interpreter's exit; it is left as it is "
                     "(grayscott repair makes its file readable)\n");
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  pipeline::end_lasting_stop();  // for this thread's later exit handlers
  return true;
}

// Whether this thread runs the interpreter's exit handlers and the exit's stop has not begun:
// the main thread, once threading's shutdown has marked it stopped (atexit runs after that).
bool exit_handlers_running_here() {
  if (interpreter_exiting.load()) return false;
  const nb::module_ threading = nb::module_::import_("threading");
  const nb::object main = threading.attr("main_thread")();
  return main.is(threading.attr("current_thread")()) && !nb::cast<bool>(main.attr("is_alive")());
}

// "ValueError: boom": the exception as Python prints its last line.
std::string exception_line(const nb::python_error& error) {
  std::string what = Py_TYPE(error.value().ptr())->tp_name;
  // Its text, unless str() of it fails too (a __str__ that raises): then its type alone, the
  // user's exception still the one raised.
  PyObject* text = PyObject_Str(error.value().ptr());
  if (text == nullptr) {
    PyErr_Clear();
    return what;
  }
  const nb::str line = nb::steal<nb::str>(text);
  if (const std::string written = line.c_str(); !written.empty())
    what += ": " + written.substr(0, written.find('\n'));
  return what;
}

// Stops a run at its next image boundary because `callback` raised `error`: a KeyboardInterrupt
// as Ctrl-C does (the file then says "interrupted by SIGINT"; true), anything else with its
// cause ("stopped after image N: progress raised ValueError: x"; false).
bool stop_for(const nb::python_error& error, const char* callback) {
  if (interrupted_by_signal(error)) {
    pipeline::request_stop(SIGINT);
    return true;
  }
  pipeline::request_stop(std::string(callback) + " raised " + exception_line(error));
  return false;
}

[[noreturn]] void wrong_type(std::string_view keyword, std::string_view expected,
                             nb::handle value) {
  const std::string message = std::string(keyword) + ": expected " + std::string(expected) +
                              ", got " + Py_TYPE(value.ptr())->tp_name + " " + short_repr(value);
  throw nb::type_error(message.c_str());
}

// True or False, or NumPy's bool (numpy.bool_, "numpy.bool" since NumPy 2).
bool is_bool(nb::handle value) {
  if (PyBool_Check(value.ptr())) return true;
  const std::string_view type = Py_TYPE(value.ptr())->tp_name;
  return type == "numpy.bool" || type == "numpy.bool_";
}

bool flag(std::string_view keyword, nb::handle value) {
  if (!is_bool(value)) wrong_type(keyword, "True or False", value);
  return PyObject_IsTrue(value.ptr()) == 1;
}

// An array of one or more axes (np.array([32])): NumPy converts one of a single value to a number,
// which would take a list for its one element.
bool is_array_with_axes(nb::handle value) {
  if (!nb::hasattr(value, "ndim")) return false;
  const nb::object ndim = value.attr("ndim");
  return PyLong_Check(ndim.ptr()) && PyLong_AsLong(ndim.ptr()) > 0;
}

bool is_whole(nb::handle value) {
  return !is_bool(value) && PyIndex_Check(value.ptr()) && !is_array_with_axes(value);
}

bool is_number(nb::handle value) {
  if (is_bool(value) || PyUnicode_Check(value.ptr()) || is_array_with_axes(value)) return false;
  return PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) || nb::hasattr(value, "__float__");
}

// A whole number as Python holds it (an int, or what __index__ makes one of: a NumPy integer).
nb::object whole_int(std::string_view keyword, nb::handle value) {
  if (!is_whole(value)) wrong_type(keyword, "an int", value);
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    wrong_type(keyword, "an int", value);
  }
  return index;
}

// A whole number. Beyond 64 bits: refused as the command line refuses such a number (the nearest,
// 2^63-1, would be reported as the value given).
std::int64_t whole_number(std::string_view keyword, nb::handle value) {
  const nb::object index = whole_int(keyword, value);
  int overflow = 0;
  const long long whole = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw nb::value_error((std::string(keyword) + ": " + short_repr(value) + " is out of range (" +
                           (overflow > 0 ? "at most 2^63-1" : "at least -2^63") + ")")
                              .c_str());
  }
  return whole;
}

// A whole number's decimal text, as large as Python holds it: the command line's parser then says
// what a value out of range is out of, as it does for the same text on the command line.
std::string whole_text_of(std::string_view keyword, nb::handle value) {
  return nb::str(whole_int(keyword, value)).c_str();
}

double number(std::string_view keyword, nb::handle value) {
  if (!is_number(value)) wrong_type(keyword, "a number", value);
  const double x = PyFloat_AsDouble(value.ptr());
  if (x == -1.0 && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
      // An int beyond a double (10**400): infinite, as the command line reads 1e400, so that the
      // setting's own check says what it accepts.
      PyErr_Clear();
      const nb::object zero = nb::int_(0);
      return PyObject_RichCompareBool(value.ptr(), zero.ptr(), Py_LT) == 1 ? -HUGE_VAL : HUGE_VAL;
    }
    PyErr_Clear();
    wrong_type(keyword, "a number", value);
  }
  return x;
}

// A number, or an iterable of numbers (not a string), as the command line's list.
template <class Item>
std::string joined(std::string_view keyword, nb::handle value, std::string_view expected,
                   Item&& item) {
  if (!nb::hasattr(value, "__iter__") || PyUnicode_Check(value.ptr())) {
    wrong_type(keyword, expected, value);
  }
  std::string text;
  for (nb::handle element : value) text += (text.empty() ? "" : ",") + item(element);
  return text;
}

// The command line's text for a Python value of a setting of this form.
std::string text_for(Form form, std::string_view keyword, nb::handle value) {
  const bool is_text = PyUnicode_Check(value.ptr());
  const auto whole_text = [&](nb::handle x) { return whole_text_of(keyword, x); };
  const auto number_text = [&](nb::handle x) { return shortest_text(number(keyword, x)); };
  switch (form) {
    case Form::Path: {
      std::string text;
      if (is_text) {
        text = nb::cast<std::string>(value);
      } else {
        nb::object path = nb::steal(PyOS_FSPath(value.ptr()));
        if (!path.is_valid()) {
          PyErr_Clear();
          wrong_type(keyword, "a str or os.PathLike", value);
        }
        if (PyBytes_Check(path.ptr()))
          path = nb::steal(PyUnicode_DecodeFSDefault(PyBytes_AsString(path.ptr())));
        text = nb::cast<std::string>(path);
      }
      // As open() says it: the system would read the name only up to it (another file's).
      if (text.find('\0') != std::string::npos)
        throw nb::value_error((std::string(keyword) + ": embedded null byte").c_str());
      return text;
    }
    case Form::Seed:
      return whole_text(value);
    case Form::NumberSet:
      if (is_text) return nb::cast<std::string>(value);
      if (nb::hasattr(value, "__iter__") &&
          !(nb::hasattr(value, "ndim") && nb::cast<int>(value.attr("ndim")) == 0))
        return joined(keyword, value, "a number or a sequence of numbers", number_text);
      return number_text(value);
    case Form::SeedSet:
      if (is_text) return nb::cast<std::string>(value);
      if (nb::hasattr(value, "__iter__") &&
          !(nb::hasattr(value, "ndim") && nb::cast<int>(value.attr("ndim")) == 0))
        return joined(keyword, value, "an int or a sequence of ints", whole_text);
      return whole_text(value);
    case Form::Every:
      if (is_text) return nb::cast<std::string>(value);
      if (is_whole(value)) return whole_text(value);
      if (PyFloat_Check(value.ptr())) {
        const double seconds = number(keyword, value);
        if (!std::isfinite(seconds)) {
          throw nb::value_error((std::string(keyword) +
                                 ": expected a finite number of seconds, got " + short_repr(value))
                                    .c_str());
        }
        return shortest_text(seconds) + "s";
      }
      if (nb::hasattr(value, "total_seconds")) {
        return shortest_text(nb::cast<double>(value.attr("total_seconds")())) + "s";
      }
      wrong_type(keyword, "images (an int), seconds (a float), a timedelta or a str like '10m'",
                 value);
    case Form::Bytes:
      if (is_text) return nb::cast<std::string>(value);
      return whole_text(value);
    case Form::Pair:
      if (is_text) return nb::cast<std::string>(value);
      return joined(keyword, value,
                    keyword.find("range") != std::string_view::npos
                        ? "a pair of numbers (low, high) or a str 'low,high'"
                        : "a pair of numbers (u, v) or a str 'u,v'",
                    number_text);
    case Form::Plain:
    case Form::Name:
    case Form::Fields:
      break;
  }
  if (!is_text) wrong_type(keyword, "a str", value);
  return nb::cast<std::string>(value);
}

// Sets the setting of `table` that `keyword` names from `value` (None keeps the default);
// false when the table has no such setting.
template <class S>
bool set_keyword(S& settings, std::span<const Setting<S>> table, std::string_view keyword,
                 nb::handle value) {
  for (const Setting<S>& setting : table) {
    if (setting.keyword != keyword) continue;
    if (value.is_none()) return true;
    std::visit(
        [&](auto field) {
          auto& target = field(settings);
          using T = std::remove_reference_t<decltype(target)>;
          if constexpr (std::is_same_v<T, std::int64_t>) {
            target = whole_number(keyword, value);
          } else if constexpr (std::is_same_v<T, double>) {
            target = number(keyword, value);
          } else if constexpr (std::is_same_v<T, std::string>) {
            target = text_for(setting.form, keyword, value);
            // As the command line refuses `--pattern ""` (a script's empty variable): None is
            // the default, an empty text or sequence is no value. An empty file or folder name
            // and an empty seed list have words of their own.
            const bool blank = std::all_of(target.begin(), target.end(), [](char c) {
              return std::isspace(static_cast<unsigned char>(c)) != 0;
            });
            if (blank && setting.form != Form::Path && setting.form != Form::SeedSet) {
              throw InvalidInput(std::string(keyword) + ": an empty value: give one, or leave " +
                                 std::string(keyword) + " out (or None) for its default");
            }
          } else {
            target = flag(keyword, value);
          }
        },
        setting.value);
    return true;
  }
  return false;
}

// A call's keyword arguments, applied to the settings of one or more tables; whatever no table
// takes is a TypeError, as Python says it.
class Keywords {
 public:
  // `values` may hold "_given": the keywords the caller named (the Python side records them),
  // so that a preset or a pattern sets only the others.
  Keywords(nb::dict values, std::string callee) : values_(values), callee_(std::move(callee)) {
    if (values_.contains("_given")) {
      for (nb::handle keyword : values_["_given"]) given_.insert(nb::cast<std::string>(keyword));
      values_ = nb::dict(values_);  // a copy: the caller's dict stays as it was
      PyDict_DelItemString(values_.ptr(), "_given");
    }
  }

  bool given(const std::string& keyword) const { return given_.count(keyword) > 0; }
  // The named keywords into `problem.given`, by their command-line names.
  void record_given(requests::ProblemSettings& problem) const {
    for (const auto& [option, keyword] : requests::setting_names()) {
      if (given_.count(keyword)) problem.given.insert(option);
    }
  }

  template <class S>
  void fill(S& settings, std::span<const Setting<S>> table,
            std::initializer_list<std::string_view> skip = {}) {
    for (auto [key, value] : values_) {
      const std::string keyword = nb::cast<std::string>(key);
      if (std::find(skip.begin(), skip.end(), keyword) != skip.end()) continue;
      if (set_keyword(settings, table, keyword, value)) used_.insert(keyword);
    }
  }
  void refuse_unknown() const {
    for (auto [key, value] : values_) {
      const std::string keyword = nb::cast<std::string>(key);
      if (!used_.count(keyword)) {
        throw nb::type_error(
            (callee_ + "() got an unexpected keyword argument '" + keyword + "'").c_str());
      }
    }
  }

 private:
  nb::dict values_;
  std::string callee_;
  std::set<std::string> used_;
  std::set<std::string> given_;
};

// Each setting's default as Python writes it: not given (an empty text) is None.
template <class S>
void add_defaults(nb::dict& into, std::span<const Setting<S>> table, const S& defaults,
                  std::initializer_list<std::string_view> skip = {}) {
  S copy = defaults;
  for (const Setting<S>& setting : table) {
    if (std::find(skip.begin(), skip.end(), setting.keyword) != skip.end()) continue;
    const std::string keyword(setting.keyword);
    std::visit(
        [&](auto field) {
          const auto& value = field(copy);
          using T = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (value.empty()) {
              into[keyword.c_str()] = nb::none();
            } else if (setting.form == Form::NumberSet) {
              const auto values = requests::parse_value_set(value, setting.option);
              into[keyword.c_str()] = values.size() == 1 ? nb::cast(values[0]) : nb::cast(values);
            } else {
              into[keyword.c_str()] = value;
            }
          } else {
            into[keyword.c_str()] = value;
          }
        },
        setting.value);
  }
}

// ---- Messages: the settings' words as a Python user writes them -------------------------------

// "steps-per-image must be ..." -> "steps_per_image must be ...", "--force" -> "overwrite=True",
// "grayscott run --resume F" -> "Simulation.resume('F')": the command line's messages in the
// words of the Python call that led to them.
std::string python_words(std::string message) {
  // A failure over MPI ranks names the rank it happened on first ("rank 1: backend cuda: ..."):
  // the words after it are the message's own, rewritten as one process's would be.
  static const std::regex rank_prefix("^rank [0-9]+: ");
  if (std::smatch prefix; std::regex_search(message, prefix, rank_prefix)) {
    return prefix.str() + python_words(prefix.suffix().str());
  }
  // An option where one stands on its own: after a space, a bracket or a quote, never inside a
  // word such as a file's name ("run--force.h5" stays as it is). `before` keeps what precedes.
  const std::string before = "(^|[^A-Za-z0-9_./-])";
  const auto rewrite = [&](const std::string& pattern, const std::string& replacement) {
    message = std::regex_replace(message, std::regex(before + pattern), "$1" + replacement);
  };
  // "grayscott run --resume FILE [--render DIR]" to the message's end, or the command alone ("a
  // run continues with grayscott run --resume)").
  for (const auto& [command, call] : {std::pair{"grayscott run --resume", "Simulation.resume"},
                                      std::pair{"grayscott sweep --resume", "resume_sweep"}}) {
    const std::string resume = command;
    const std::size_t at = message.find(resume);
    if (at == std::string::npos) continue;
    std::string rest = message.substr(at + resume.size()), arguments = "path";
    if (rest.rfind(' ', 0) == 0) {
      std::string path = rest.substr(1), render;
      const std::string force = " --force";
      const bool overwrite = path.size() > force.size() && path.ends_with(force);
      if (overwrite) path.resize(path.size() - force.size());
      if (const std::size_t r = path.rfind(" --render "); r != std::string::npos) {
        render = path.substr(r + 10);
        path.resize(r);
      }
      arguments = "'" + path + "'" + (render.empty() ? "" : ", render='" + render + "'") +
                  (overwrite ? ", overwrite=True" : "");
      rest.clear();
    }
    message = message.substr(0, at) + "grayscott." + call + "(" + arguments + ")" + rest;
  }
  // check_force_with_resume's words.
  rewrite("--force with --resume(?![A-Za-z-])", "overwrite=True in Simulation.resume");
  rewrite("--render DIR(?![A-Za-z-])", "render=DIR");
  rewrite("--force(?![A-Za-z-])", "overwrite=True");
  rewrite("--quiet(?![A-Za-z-])", "quiet=True");
  // A video's messages name the command that makes one ("render --video needs the ffmpeg
  // program"): here gs.video makes it.
  rewrite("render --video(?![A-Za-z-])", "a video");
  const auto rename = [&](const auto& table) {
    for (const auto& setting : table) {
      const std::string option(setting.option), keyword(setting.keyword);
      if (message.rfind(option, 0) == 0 && message.size() > option.size() &&
          std::strchr(" :=", message[option.size()]) != nullptr) {
        message.replace(0, option.size(), keyword);
      }
      // "--init noise" -> "init='noise'"; "--seed" -> "seed="
      if (setting.value.index() == 3) {  // a flag: "--stats" -> "stats=True"
        rewrite("--" + option + "(?![A-Za-z-])", keyword + "=True");
      }
      if (setting.form == Form::Name || setting.form == Form::Fields) {
        rewrite("--" + option + " ([A-Za-z0-9_.,-]+)", keyword + "='$2'");
      }
      rewrite("--" + option + "(?![A-Za-z-])", keyword + "=");
    }
  };
  rename(requests::problem_settings());
  rename(requests::engine_settings());
  rename(requests::output_settings());
  rename(requests::run_settings());
  rename(requests::sweep_settings());
  rename(requests::over_ranks_settings());
  // render's own options (gs.render, gs.video): "--field v" -> "field='v'".
  rewrite("--(field|colormap) ([A-Za-z0-9_.,-]+)", "$2='$3'");
  rewrite("--(field|range|every|fps|scale|image|slice|projection)(?![A-Za-z-])", "$2=");
  return message;
}

// The stack level of the innermost frame outside this package (1: the caller of the C++ code),
// so that a warning names the user's line, not the package's.
int stack_level_outside_the_package() {
  static const std::string package = [] {
    const std::string init =
        nb::cast<std::string>(nb::module_::import_("grayscott").attr("__file__"));
    return init.substr(0, init.find_last_of('/') + 1);
  }();
  int level = 1;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const nb::object file =
        nb::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename"));
    Py_DECREF(code);
    const bool inside = file.is_valid() && nb::isinstance<nb::str>(file) &&
                        nb::cast<std::string>(file).rfind(package, 0) == 0;
    if (!inside) break;
    ++level;
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyErr_Clear();
  return level;
}

// A run's notices before it starts (an output name without .h5, a file over 1 GB) as Python
// warnings, which a notebook shows (not the process's stderr), at the user's line. Warnings
// turned into errors raise.
void python_notice(const std::string& text) {
  nb::gil_scoped_acquire locked;
  if (PyErr_WarnEx(PyExc_UserWarning, python_words(text).c_str(),
                   stack_level_outside_the_package()) != 0)
    throw nb::python_error();
}

// A `path` argument given empty (gs.open, the resumes, gs.video's video): named as such, where a
// file of that name would read as "no such file".
void refuse_empty_path(const std::string& path) {
  if (path.empty()) throw InvalidInput("path: the file name is empty");
}

// After pictures or a video of `file`: what an unfinished file holds ("FILE holds 3 of 10 images
// (status: interrupted by SIGINT after image 3)", a writer gone that a repair would mend), as a
// Python warning, as the command line's render notes it, so that nobody takes the pictures for a
// whole run.
void warn_if_unfinished(const std::string& file, const std::string& field) {
  std::string note;
  try {
    note = io::unfinished_note(file, field);
  } catch (const std::exception&) {
    return;  // the file changed under the rendering: the pictures stand as made
  }
  if (!note.empty()) python_notice(note);
}

// ---- The simulations ---------------------------------------------------------------------------

using AnyEngine = std::variant<std::unique_ptr<Engine<float>>, std::unique_ptr<Engine<double>>>;

AnyEngine make_any_engine(const Problem& problem, std::span<const Parameters> members,
                          const EngineOptions& options) {
  // Refused with the bytes needed and available, before the allocation would fail without them.
  pipeline::check_state_fits(problem, members.size(), options);
  if (problem.precision == Precision::Single) return make_engine<float>(problem, members, options);
  return make_engine<double>(problem, members, options);
}

// Runs `work(n)` until `steps` steps are done, in slices of about 50 ms with the GIL released,
// checking for Ctrl-C between slices: KeyboardInterrupt is raised within about 0.1 s, after a
// whole slice, so the state is that of the last step done. `done(n)` counts the steps as they
// complete. `slice` (steps per slice) carries over from call to call: a loop of short advances
// settles on one engine call each, so the engine fuses its steps as it would without slicing
// (the results never depend on the slicing).
template <class Work, class Done>
void advance_interruptibly(std::int64_t steps, std::int64_t& slice, Work&& work, Done&& done) {
  using Clock = std::chrono::steady_clock;
  constexpr double target_seconds = 0.05;
  const WorkInProgress in_progress;
  while (steps > 0) {
    // The interpreter's exit ends a long advance in another thread at a slice's end (the exit
    // waits for it to unwind, its lock given up, before it goes on).
    if (exit_begun_elsewhere()) {
      throw std::runtime_error("the Python interpreter exited while advance() ran");
    }
    const std::int64_t n = std::min(std::max<std::int64_t>(slice, 1), steps);
    const auto start = Clock::now();
    {
      const GilReleased unlocked;
      work(n);
    }
    done(n);
    steps -= n;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (n == slice && seconds < target_seconds / 2)
      slice = std::min<std::int64_t>(slice * 2, std::int64_t(1) << 30);
    else if (seconds > target_seconds * 2 && slice > 1)
      slice = std::max<std::int64_t>(slice / 2, 1);
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
}

// What the Python side needs to build a view of one field: pointer, shape, strides in elements,
// and where the memory is.
struct FieldView {
  std::uintptr_t pointer;
  std::vector<std::int64_t> shape;
  bool on_device;
  int device;
  bool read_only = false;  // a host state a run's progress callback may read, not write
};

// The state shared by Simulation and Sweep: a problem, an engine of one or many members, a step
// count, and a lock so that one Python thread at a time drives it. The engine keeps its state in
// the buffers it was loaded into between calls (Engine::home_state), so a view taken once shows
// the current state after every advance and run.
// One member's statistics of one image as Python sees them.
nb::dict statistics_dict(const analysis::ImageStatistics& s) {
  nb::dict d;
  d["u_min"] = s.u_min;
  d["u_max"] = s.u_max;
  d["u_mean"] = s.u_mean;
  d["u_std"] = s.u_std;
  d["v_min"] = s.v_min;
  d["v_max"] = s.v_max;
  d["v_mean"] = s.v_mean;
  d["v_std"] = s.v_std;
  d["change_max"] = s.change_max;
  d["change_rms_per_step"] = s.change_rms_per_step;
  d["histogram"] = nb::cast(s.histogram);
  return d;
}

// A thread's turn on a simulation: its lock, held as work in progress (WorkInProgress), from
// before the lock is taken to after it is given back. A thread the interpreter's exit would hold
// on its way (wait_for_the_exit) is held before it takes the lock, never with it in hand; and the
// exit waits for the holder of a lock to give it back.
class Turn {
 public:
  explicit Turn(std::recursive_mutex& mutex) : lock_(mutex, std::try_to_lock) {
    if (lock_.owns_lock()) return;
    // An exit handler run before the package's own (atexit runs the later registered first)
    // would wait for ever for a daemon thread's work: the exit's stop begins here.
    if (exit_handlers_running_here() && !stop_work_at_exit()) {
      throw std::runtime_error(
          "the simulation is held by work in another thread that did not stop within a minute "
          "of the interpreter's exit");
    }
    const GilReleased unlocked;
    lock_.lock();
  }

 private:
  WorkInProgress counted_;  // first: counted (or held for the exit) before the lock is tried
  std::unique_lock<std::recursive_mutex> lock_;
};

class Batch {
 public:
  // `over_ranks`: one grid split over the ranks of MPI_COMM_WORLD (the Python module under
  // mpirun, with mpi4py), each process holding its block; alone, as without it.
  // `split`: over ranks, how (the decomposition, the halo depth, ...; `grayscott run`'s options).
  Batch(Problem problem, std::vector<Parameters> members, std::vector<InitialState> initial,
        EngineOptions options, bool over_ranks = false, pipeline::DistributedRunOptions split = {})
      : problem_(std::move(problem)),
        members_(std::move(members)),
        initial_(std::move(initial)),
        options_(options),
        split_(std::move(split)),
        block_(whole_grid(problem_.grid)),
        engine_(make_engine_over(over_ranks)) {
    load_initial_states();
  }

  // Where this process's block lies: (first row, rows, first column, columns), and a volume's
  // planes after them: (first row, rows, first column, columns, first plane, planes).
  nb::tuple block() const {
    if (!problem_.grid.volume())
      return nb::make_tuple(block_.row_begin, block_.rows, block_.col_begin, block_.cols);
    return nb::make_tuple(block_.row_begin, block_.rows, block_.col_begin, block_.cols,
                          block_.plane_begin, block_.planes);
  }
  bool over_ranks() const { return session_ != nullptr; }
  // Whether this process speaks for the run: one process, or rank 0 of a grid split over ranks
  // (as the command line's summary and pictures come from rank 0).
  bool reports() const {
#if GRAYSCOTT_WITH_MPI
    if (session_) return session_->rank() == 0;
#endif
    return true;
  }

  // Loads every member's initial state and sets the step count to 0.
  void reset() {
    refuse_while_running("reset()");
    const auto lock = acquire();
    load_initial_states();
  }

 private:
  AnyEngine make_engine_over(bool over_ranks) {
#if GRAYSCOTT_WITH_MPI
    if (over_ranks) {
      const auto session = world_session();
      if (session->size() > 1) {
        if (members_.size() != 1) throw InvalidInput("a sweep runs in one process");
        session_ = session;
        if (problem_.precision == Precision::Single)
          return pipeline::make_distributed_engine<float>(problem_, options_, *session, block_,
                                                          split_);
        return pipeline::make_distributed_engine<double>(problem_, options_, *session, block_,
                                                         split_);
      }
    }
#else
    if (over_ranks) {
      throw std::runtime_error(
          "comm: this build of the module has no MPI (pip install . with Open MPI and a "
          "parallel HDF5 present builds it, e.g. Debian's libopenmpi-dev libhdf5-openmpi-dev)");
    }
#endif
    return make_any_engine(problem_, members_, options_);
  }

  // One process's block is the whole grid: every row and column, and a volume's every plane.
  static pipeline::BlockPlace whole_grid(const Grid& grid) {
    return {0, grid.rows, 0, grid.cols, 0, grid.volume() ? grid.depth : 0};
  }
  std::size_t block_cells() const { return static_cast<std::size_t>(block_.cells()); }
  // The shape of one member's field: (rows, cols) of this process's block, (planes, rows, cols)
  // of a volume's.
  template <class Extent>
  std::vector<Extent> field_shape() const {
    std::vector<Extent> shape{static_cast<Extent>(block_.rows), static_cast<Extent>(block_.cols)};
    if (problem_.grid.volume()) shape.insert(shape.begin(), static_cast<Extent>(block_.planes));
    return shape;
  }

  // This process's block of member m's initial state: generated, or a custom one read from the
  // run file that stores it.
  template <class Real>
  void initial_block(std::size_t m, std::vector<Real>& u, std::vector<Real>& v) const {
    if (initial_[m].kind == InitialKind::Custom) {
      io::read_initial_state<Real>(initial_file_, block_.row_begin, block_.rows, block_.col_begin,
                                   block_.cols, u, v, block_.plane_begin, block_.planes);
      if (u.size() != block_cells() || v.size() != block_cells())
        throw InvalidInput(initial_file_ + ": /initial_state does not match the grid");
    } else {
      fill_initial_volume_block<Real>(problem_.grid, initial_[m], block_.plane_begin,
                                      block_.row_begin, block_.col_begin, block_planes(),
                                      block_.rows, block_.cols, u, v);
    }
  }

  // The planes of this process's block: a plane's block is its one plane (block_.planes is 0
  // there, as a plane's BlockPlace has it).
  std::int64_t block_planes() const { return std::max<std::int64_t>(block_.planes, 1); }

  void load_initial_states() {
    std::visit(
        [&](auto& engine) {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          std::vector<Real> u(block_cells()), v(block_cells());
          engine->home_state();
          for (std::size_t m = 0; m < members_.size(); ++m) {
            initial_block<Real>(m, u, v);
            engine->load(m, u, v);
          }
        },
        engine_);
    step_ = 0;
    time_ = 0;
  }

 protected:
  // Whether the engine holds the first member's initial state bit for bit (on every rank): not
  // so once values were written into sim.u or sim.v. The initial state is made a row at a time
  // beside a host engine's own memory (a device's state is copied to the host first), so that
  // the check takes no state's worth of memory.
  bool holds_initial_state() {
    bool same = std::visit(
        [&](auto& engine) {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          if (initial_[0].kind == InitialKind::Custom) return false;
          std::vector<Real> device_u, device_v;
          engine->home_state();
          auto state = engine->state();
          if (state.on_device) {
            device_u.resize(block_cells());
            device_v.resize(block_cells());
            engine->copy_state(0, device_u.data(), device_v.data());
            state.u = device_u.data();
            state.v = device_v.data();
          }
          const auto cols = static_cast<std::size_t>(block_.cols);
          std::vector<Real> u0(cols), v0(cols);
          for (std::int64_t z = 0; z < block_planes(); ++z) {
            for (std::int64_t r = 0; r < block_.rows; ++r) {
              fill_initial_volume_block<Real>(problem_.grid, initial_[0], block_.plane_begin + z,
                                              block_.row_begin + r, block_.col_begin, 1, 1,
                                              block_.cols, u0, v0);
              const std::size_t at = static_cast<std::size_t>(z * block_.rows + r) * cols;
              if (std::memcmp(state.u + at, u0.data(), cols * sizeof(Real)) != 0 ||
                  std::memcmp(state.v + at, v0.data(), cols * sizeof(Real)) != 0)
                return false;
            }
          }
          return true;
        },
        engine_);
#if GRAYSCOTT_WITH_MPI
    if (session_) same = !mpi::any_rank(session_->world(), !same);
#endif
    return same;
  }

 public:
  void advance(nb::handle steps_argument) {
    const std::int64_t steps = whole_number("steps", steps_argument);
    if (steps < 0)
      throw InvalidInput("steps must be a non-negative integer, got " + std::to_string(steps));
    refuse_while_running("advance()");
    // Its turn counts as work to its end, its state brought home after an interruption included:
    // stopped by the interpreter's exit, it is not held on its way out with the lock in hand.
    const auto lock = acquire();
    std::visit(
        [&](auto& engine) {
          const auto home = [&] {
            const GilReleased unlocked;
            engine->home_state();
          };
          if (views_on_device_) {
            const GilReleased unlocked;
            engine->finish_foreign_work();
          }
          try {
            advance_interruptibly(
                steps, slice_, [&](std::int64_t n) { engine->advance(n); },
                [&](std::int64_t n) {
                  step_ += n;
                  time_ += static_cast<double>(n) * problem_.params.dt;
                });
          } catch (...) {
            home();
            throw;
          }
          home();
        },
        engine_);
  }

  FieldView field(char which) {
    const auto lock = acquire();
    return std::visit(
        [&](auto& engine) {
          const auto state = engine->state();
          // A device view may be written by other libraries on their streams: the next steps
          // wait for them (item of the DLPack contract: consumers' writes come first).
          if (state.on_device) views_on_device_ = true;
          const auto* data = which == 'u' ? state.u : state.v;
          std::vector<std::int64_t> shape = field_shape<std::int64_t>();
          if (members_.size() > 1 || batch_shape_)
            shape.insert(shape.begin(), static_cast<std::int64_t>(members_.size()));
          return FieldView{reinterpret_cast<std::uintptr_t>(data), shape, state.on_device,
                           state.device, reporting_progress_};
        },
        engine_);
  }

  // A copy of one field in host memory (from the device on a GPU), through the engine's capture.
  nb::object copy_field(char which) {
    const auto lock = acquire();  // counted to the end: its array is made through Python
    return std::visit(
        [&](auto& engine) -> nb::object {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          const std::size_t cells = block_cells();
          auto values = std::make_unique<Real[]>(members_.size() * cells);
          {
            const GilReleased unlocked;
            engine->capture(FieldSet{which == 'u', which == 'v'});
            for (std::size_t m = 0; m < members_.size(); ++m) {
              Real* out = values.get() + m * cells;
              engine->read_captured(m, which == 'u' ? out : nullptr, which == 'v' ? out : nullptr);
            }
          }
          std::vector<std::size_t> shape = field_shape<std::size_t>();
          if (members_.size() > 1 || batch_shape_) shape.insert(shape.begin(), members_.size());
          Real* raw = values.release();
          nb::capsule free_values(raw, [](void* p) noexcept { delete[] static_cast<Real*>(p); });
          return nb::cast(
              nb::ndarray<nb::numpy, Real>(raw, shape.size(), shape.data(), free_values));
        },
        engine_);
  }

  bool on_device() {
    return std::visit([](auto& engine) { return engine->state().on_device; }, engine_);
  }

  // Each member's statistics (analysis/statistics.hpp): inside a run's on_image with stats on,
  // the run's own of that image (with the change since the previous one), unless the histogram
  // asked for is another; otherwise measured now from the current state, without a change. None:
  // the run's histogram there, 50 bins over [0, 1] elsewhere.
  nb::list statistics(nb::handle bins_argument, nb::handle low_argument, nb::handle high_argument) {
    const auto lock = acquire();  // counted to the end: the exit waits for it
    const analysis::HistogramSpec usual =
        held_statistics_.empty() ? analysis::HistogramSpec{} : held_histogram_;
    const std::int64_t bins =
        bins_argument.is_none() ? usual.bins : whole_number("bins", bins_argument);
    const double low = low_argument.is_none() ? usual.low : number("range", low_argument);
    const double high = high_argument.is_none() ? usual.high : number("range", high_argument);
    if (over_ranks()) {
      throw InvalidInput(
          "stats(): over MPI ranks each rank holds a block of the grid; run(stats=True) writes "
          "the whole grid's statistics of every image to the file");
    }
    const bool the_runs =
        bins == held_histogram_.bins && low == held_histogram_.low && high == held_histogram_.high;
    std::vector<analysis::ImageStatistics> result;
    if (the_runs) result = held_statistics_;
    if (result.empty()) {
      const auto spec =
          analysis::HistogramSpec::checked(bins, low, high, "bins", "range", problem_.precision);
      std::visit(
          [&](auto& engine) {
            using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
            const std::size_t cells = block_cells();
            std::vector<Real> u(cells), v(cells);
            const GilReleased unlocked;
            for (std::size_t m = 0; m < members_.size(); ++m) {
              engine->copy_state(m, u.data(), v.data());
              result.push_back(analysis::finish(
                  analysis::member_sums<Real>(spec, u.data(), v.data(), nullptr, cells), 0));
            }
          },
          engine_);
    }
    nb::list members;
    for (const analysis::ImageStatistics& s : result) members.append(statistics_dict(s));
    return members;
  }

  std::string backend() const {
    return std::visit([](const auto& engine) { return engine->backend(); }, engine_);
  }

  const Problem& problem() const { return problem_; }
  const std::vector<Parameters>& members() const { return members_; }
  const std::vector<InitialState>& initial() const { return initial_; }
  std::int64_t step() const { return step_; }
  double time() const { return time_; }

 protected:
  // The same thread may take it again (a run's callback reads the views); others wait, without
  // holding the GIL meanwhile.
  Turn acquire() { return Turn(mutex_); }

  // A run steps the engine image by image: its callbacks (on the thread that called run()) may
  // read the state, not step it. Another thread's call waits for the run to end (acquire()).
  void refuse_while_running(const std::string& what, const char* done = "be called") const {
    if (running_thread_.load() == std::this_thread::get_id()) {
      throw std::runtime_error(what + " cannot " + done +
                               " while run() steps this simulation (from its "
                               "callbacks): read sim.u, sim.v, sim.step there, or stop the run");
    }
  }

  Problem problem_;
  std::vector<Parameters> members_;
  std::vector<InitialState> initial_;
  EngineOptions options_;
  pipeline::DistributedRunOptions split_;  // over ranks: how the grid is split and exchanged
  std::string
      initial_file_;  // the run file that stores a custom initial state (InitialKind::Custom)
#if GRAYSCOTT_WITH_MPI
  std::shared_ptr<mpi::Session> session_;  // set when the grid is split over ranks
#else
  std::shared_ptr<void> session_;
#endif
  pipeline::BlockPlace block_;
  AnyEngine engine_;
  std::int64_t step_ = 0;
  double time_ = 0;
  std::int64_t slice_ = 64;   // steps per GIL-free slice of advance(), adapted to ~50 ms
  bool batch_shape_ = false;  // a Sweep's arrays keep their member axis even for one member
  // The thread whose run() steps the engine (its callbacks run there); none: no run.
  std::atomic<std::thread::id> running_thread_{};
  // While a run's progress callback runs: sim.u and sim.v are read-only views then (a write
  // would change the run's state unseen; on_image's writes are found by comparison instead).
  bool reporting_progress_ = false;
  // The statistics of the image an on_image callback is called with, while it runs.
  std::vector<analysis::ImageStatistics> held_statistics_;
  // The state's v and u before an on_image callback whose image does not carry them (a run
  // writing one field only), to tell whether the callback wrote into them.
  std::vector<std::byte> v_before_callback_, u_before_callback_;
  analysis::HistogramSpec held_histogram_;  // the histogram of held_statistics_
  bool views_on_device_ = false;  // device views were handed out: wait for others' work first
  std::recursive_mutex mutex_;
};

// The shape of an image of `grid`: (rows, cols), or (depth, rows, cols) for a volume.
struct ImageShape {
  std::size_t extents[3];
  std::size_t ndim;
  explicit ImageShape(const Grid& grid)
      : extents{static_cast<std::size_t>(grid.depth), static_cast<std::size_t>(grid.rows),
                static_cast<std::size_t>(grid.cols)},
        ndim(grid.volume() ? 3 : 2) {}
  const std::size_t* data() const { return extents + (3 - ndim); }
};

// A read-only NumPy copy of an image's values (handed to a callback: it stays what it was after
// the run goes on).
template <class Real>
nb::object image_copy(const void* values, const Grid& grid) {
  const auto cells = static_cast<std::size_t>(grid.cells());
  auto copy = std::make_unique<Real[]>(cells);
  std::memcpy(copy.get(), values, cells * sizeof(Real));
  Real* raw = copy.release();
  nb::capsule owner(raw, [](void* p) noexcept { delete[] static_cast<Real*>(p); });
  const ImageShape shape(grid);
  return nb::cast(nb::ndarray<nb::numpy, const Real>(raw, shape.ndim, shape.data(), owner));
}

// A read-only view of an image's values that owns nothing: for a callee that does not keep it.
template <class Real>
nb::object image_view(const void* values, const Grid& grid) {
  const ImageShape shape(grid);
  return nb::cast(nb::ndarray<nb::numpy, const Real>(static_cast<const Real*>(values), shape.ndim,
                                                     shape.data(), nb::handle()),
                  nb::rv_policy::reference);
}

class Simulation : public Batch {
 public:
  Simulation(const Problem& problem, InitialState initial, EngineOptions options, bool over_ranks,
             pipeline::DistributedRunOptions split,
             std::optional<std::int64_t> preset_steps_per_image = std::nullopt)
      : Batch(problem, {problem.params}, {initial}, options, over_ranks, std::move(split)),
        preset_steps_per_image_(preset_steps_per_image) {}

  // The rates that may change between steps; the grid, stencil, boundary and precision stay.
  double rate(double Parameters::*which) const { return problem_.params.*which; }
  void set_rate(double Parameters::*which, const char* keyword, nb::handle value) {
    refuse_while_running(keyword, "be set");
    Problem changed = problem_;
    changed.params.*which = number(keyword, value);
    changed.validate();  // the rates, and dt against the stability limit
    const auto lock = acquire();
    std::visit([&](auto& engine) { engine->set_rates(0, changed.params); }, engine_);
    problem_ = changed;
    members_[0] = changed.params;
  }

  // The pipeline of `grayscott run` on this simulation's engine, from its current state, which
  // must be the initial state (step 0) unless the run continues a file. `progress(done, total)`
  // is called after each image; `on_image(index, step, time, image)` with each image before it
  // is written, the engine holding that image's state (sim.u, sim.v, sim.step are current
  // there). Ctrl-C stops the run at the next image boundary with its checkpoint saved, and
  // raises KeyboardInterrupt; an exception in a callback stops it at that image, likewise.
  nb::dict run(nb::dict settings, nb::object progress, nb::object on_image, bool resume,
               bool image_views) {
    refuse_while_running("run()");
    // Another thread's run or advance ends first: this run starts from the state it left.
    const auto lock = acquire();
    requests::RunSettings given;  // its output and pictures (the problem is this simulation's)
    requests::OutputSettings& out = given.out;
    Keywords keywords(settings, "run");
    keywords.fill(out, requests::output_settings());
    keywords.fill(given, requests::run_settings());
    keywords.refuse_unknown();
    if (given.render.empty() && settings.contains("render") && !settings["render"].is_none())
      throw InvalidInput("render: the folder name is empty");
    // The preset's steps between images, unless this call names steps_per_image.
    if (preset_steps_per_image_ && !keywords.given("steps_per_image"))
      out.steps_per_image = *preset_steps_per_image_;
    pipeline::RunRequest request;
    request.problem = problem_;
    request.initial = initial_[0];
    requests::apply(out, request);
    request.engine = options_;
    request.resume = resume;
    if (resume) {
      requests::check_force_with_resume(request.overwrite, !given.render.empty());
      const pipeline::RunRequest from_file = pipeline::resume_request(request.output);
      // A run continued from its start starts where the file's did.
      request.initial = from_file.initial;
      request.images = from_file.images;
      request.steps_per_image = from_file.steps_per_image;
      request.fields = from_file.fields;
      request.analysis = from_file.analysis;
      // This simulation continues the file's run: its initial state is the file's (a custom one
      // read from the file by `reset()`).
      initial_[0] = request.initial;
      initial_file_ = request.output.string();
    } else {
      requests::refuse_unmeasured_settings(out, request.analysis, [&](std::string_view option) {
        return keywords.given(requests::keyword_of(option));
      });
      pipeline::validate_run_request(request);
      if (step_ != 0) {
        throw InvalidInput(
            "run() writes a run from its initial state, and this simulation is at step " +
            std::to_string(step_) + ": call reset() first, or make a new Simulation");
      }
      if (request.initial.kind == InitialKind::Custom || !holds_initial_state()) {
        // Values written into sim.u or sim.v: the run starts from them, and its file says so and
        // stores them (a continued run reads them there; `reset()` still loads the initial state
        // this simulation was made with).
        request.initial = InitialState{InitialKind::Custom, 0, std::nullopt};
        if (over_ranks()) {
          // The run's engine is made by the pipeline: each rank hands over its block.
          request.custom_initial = [this](void* u, void* v) {
            std::visit(
                [&](auto& engine) {
                  using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
                  engine->copy_state(0, static_cast<Real*>(u), static_cast<Real*>(v));
                },
                engine_);
          };
        }
      }
    }
    if (!given.render.empty()) {
      // The pictures come after the run (the package renders them): refused before it when
      // their folder cannot take them or, unless overwrite, they exist, as the command line's.
      request.render_dir = given.render;
      io::check_pictures_after_run(*request.render_dir, request.output, request.rendered_field(),
                                   request.images, request.overwrite);
    }
    return execute(request, progress, on_image, image_views);
  }

 private:
  // Before an on_image callback: a copy of each field of the host engine's state that the image
  // does not carry, for restore_written_field.
  void remember_unheld_fields(const pipeline::LoopImage& image) {
    v_before_callback_.clear();
    u_before_callback_.clear();
    std::visit(
        [&](auto& engine) {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          const auto state = engine->state();
          if (state.on_device) return;
          const std::size_t bytes = static_cast<std::size_t>(block_.cells()) * sizeof(Real);
          const auto copy = [&](const void* field, std::vector<std::byte>& into) {
            const auto* first = static_cast<const std::byte*>(field);
            into.assign(first, first + bytes);
          };
          if (image.v == nullptr) copy(state.v, v_before_callback_);
          if (image.u == nullptr) copy(state.u, u_before_callback_);
        },
        engine_);
  }

  // After an on_image callback: the field ("v", "u") of a host engine's state that differs from
  // the image it was called with (u: or from its copy taken before the call), put back as it
  // was; null when none did (or the state is on a device, where the check would cost a copy of
  // the state per image).
  const char* restore_written_field(const pipeline::LoopImage& image) {
    return std::visit(
        [&](auto& engine) -> const char* {
          using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
          const auto state = engine->state();
          if (state.on_device) return nullptr;
          const std::size_t bytes = static_cast<std::size_t>(block_.cells()) * sizeof(Real);
          const char* changed = nullptr;
          const auto held_or_copy = [](const void* held, const std::vector<std::byte>& copy) {
            return held != nullptr ? held
                   : copy.empty()  ? nullptr
                                   : static_cast<const void*>(copy.data());
          };
          const void* v_held = held_or_copy(image.v, v_before_callback_);
          const void* u_held = held_or_copy(image.u, u_before_callback_);
          for (auto [name, held, live] : {std::tuple{"v", v_held, static_cast<void*>(state.v)},
                                          std::tuple{"u", u_held, static_cast<void*>(state.u)}}) {
            if (held == nullptr || std::memcmp(held, live, bytes) == 0) continue;
            std::memcpy(live, held, bytes);
            if (changed == nullptr) changed = name;
          }
          return changed;
        },
        engine_);
  }

  // `image_views`: on_image gets read-only views of the image that live only during the call
  // (the package's own live picture), not copies.
  nb::dict execute(pipeline::RunRequest& request, nb::object progress, nb::object on_image,
                   bool image_views) {
    const auto lock = acquire();
    bool interrupted_by_python = false;
    std::optional<nb::python_error> callback_error;
    const bool report = !progress.is_none();
    request.on_progress = [&](std::int64_t done, std::int64_t total) {
      nb::gil_scoped_acquire locked;
      // sim.step and sim.time inside `progress`: the images handed to the file so far.
      step_ = done * request.steps_per_image;
      time_ = static_cast<double>(step_) * problem_.params.dt;
      if (PyErr_CheckSignals() != 0) {
        // KeyboardInterrupt (or whatever a signal handler raised): stop at this image boundary.
        nb::python_error error;
        if (!callback_error) callback_error.emplace(std::move(error));
        interrupted_by_python = true;
        pipeline::request_stop(SIGINT);
        return;
      }
      if (report && !callback_error) {
        try {
          reporting_progress_ = true;
          const struct Reported {
            bool& flag;
            ~Reported() { flag = false; }
          } reported{reporting_progress_};
          progress(done, total);
        } catch (nb::python_error& error) {
          interrupted_by_python = stop_for(error, "progress");
          callback_error.emplace(std::move(error));
        }
      }
    };
    if (!on_image.is_none()) {
      request.on_image = [&](const pipeline::LoopImage& image) -> std::string {
        nb::gil_scoped_acquire locked;
        std::visit([](auto& engine) { engine->home_state(); }, engine_);
        held_statistics_.assign(image.statistics.begin(), image.statistics.end());
        if (request.analysis.statistics) held_histogram_ = *request.analysis.statistics;
        const struct Forget {
          std::vector<analysis::ImageStatistics>& held;
          ~Forget() { held.clear(); }
        } forget{held_statistics_};
        step_ = image.step;
        time_ = static_cast<double>(image.step) * problem_.params.dt;
        if (callback_error) return {};
        try {
          // The field the run writes (an image that carries a checkpoint holds both).
          const void* values = request.fields.v ? image.v : image.u;
          const bool single = problem_.precision == Precision::Single;
          nb::object array = image_views ? (single ? image_view<float>(values, problem_.grid)
                                                   : image_view<double>(values, problem_.grid))
                             : single    ? image_copy<float>(values, problem_.grid)
                                         : image_copy<double>(values, problem_.grid);
          remember_unheld_fields(image);
          on_image(image.index, image.step, time_, array);
          // The callback may read the state, not write it (the file could not tell): a field
          // changed is put back as the image holds it, and the run stops there with the reason.
          if (const char* field = restore_written_field(image)) {
            const std::string what = std::string("on_image wrote into sim.") + field +
                                     ": a run's state changes only by its steps (write into "
                                     "sim.u or sim.v before run(), or step with advance())";
            PyErr_SetString(PyExc_RuntimeError, what.c_str());
            callback_error.emplace();
            return "stopped after image " + std::to_string(image.index + 1) + ": " + what;
          }
        } catch (nb::python_error& error) {
          if (interrupted_by_signal(error)) {
            // Ctrl-C while the callback ran: a stop like any other, at this image.
            callback_error.emplace(std::move(error));
            interrupted_by_python = true;
            return pipeline::interrupted_status(SIGINT, image.index + 1);
          }
          const std::string what = exception_line(error);
          callback_error.emplace(std::move(error));
          return "stopped after image " + std::to_string(image.index + 1) + ": on_image raised " +
                 what;
        }
        return {};
      };
    }
    request.notices = python_notice;
    pipeline::clear_stop_request();
    pipeline::RunSummary summary;
    if (over_ranks() && (!on_image.is_none() || !progress.is_none())) {
      throw InvalidInput(
          "on_image: a run over MPI ranks calls no Python callback (each rank holds a block); "
          "read the file afterwards, or run without comm");
    }
    // The images on_image gets are NumPy arrays: NumPy imported now, not at the first image,
    // where a Ctrl-C that arrived meanwhile would interrupt the import.
    if (!on_image.is_none()) nb::module_::import_("numpy");
    running_thread_ = std::this_thread::get_id();
    // SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 (a batch system's stop) left to their default action stop
    // the run at an image boundary with its checkpoint, then end the process as they would have;
    // Ctrl-C stops it after the image in progress (run_takes_interrupt).
    pipeline::StopSignals stop_signals(python_stop_signals());
    try {
      const GilReleased unlocked;
      summary = std::visit(
          [&](auto& engine) {
            using Real = typename std::remove_reference_t<decltype(*engine)>::real_type;
            if (views_on_device_) engine->finish_foreign_work();
#if GRAYSCOTT_WITH_MPI
            if (session_) {
              // Every rank runs `grayscott run`'s distributed pipeline; then this rank's block of
              // the run's final state, saved in the file, becomes this simulation's state.
              const pipeline::RunSummary result =
                  pipeline::execute_distributed_run(request, split_, *session_);
              if (result.checkpoint_images > 0) {
                std::vector<Real> u, v;
                io::read_checkpoint<Real>(request.output, block_.row_begin, block_.rows,
                                          block_.col_begin, block_.cols, u, v, block_.plane_begin,
                                          block_.planes);
                engine->load(0, u, v);
              }
              return result;
            }
#endif
            pipeline::RunSummary result = pipeline::execute_run_on(*engine, request);
            engine->home_state();
            return result;
          },
          engine_);
    } catch (...) {
      running_thread_ = std::thread::id();
      const int arrived = pipeline::stop_requested();
      pipeline::clear_stop_request();
      stop_signals.end_as_asked(arrived);
      throw;
    }
    running_thread_ = std::thread::id();
    // A stop signal that came with the last image, or while the file closed, ends the process
    // too: it did not stop the run, but was meant for the process.
    const int arrived = summary.signal != 0 ? summary.signal : pipeline::stop_requested();
    pipeline::clear_stop_request();
    stop_signals.end_as_asked(arrived);
    // The step of the state held: over ranks the file's checkpoint, which every image ends with;
    // here the engine's own, past the last image where non-finite values stopped the run.
    step_ = over_ranks() ? summary.images_written * request.steps_per_image : summary.state_step;
    time_ = static_cast<double>(step_) * problem_.params.dt;
    if (summary.signal == SIGINT && !callback_error) interrupted_by_python = true;
    if (callback_error || interrupted_by_python) {
      // A Ctrl-C that came as the run stopped anyway is this stop's: not raised once more later.
      forget_the_interrupt_python_was_told_of();
      if (interrupted_by_python) {
        // The file says "interrupted by SIGINT after image N" and holds its checkpoint.
        PyErr_SetString(PyExc_KeyboardInterrupt,
                        python_words(pipeline::interruption_message(request, summary)).c_str());
        throw nb::python_error();
      }
      callback_error->restore();
      throw nb::python_error();
    }
    nb::dict result;
    // As the command line's error: the file keeps the images before, its status says where. Raised
    // as FloatingPointError by the Python side once the pictures of render= are drawn, as the
    // command line draws them before its error.
    // The state held may be some steps past the one named (the engine checks its values at an
    // image): said, as sim.step has it.
    if (pipeline::run_diverged(summary.status)) {
      result["diverged"] = request.output.string() + ": " + summary.status +
                           "; the simulation holds the state of step " + std::to_string(step_);
    }
    result["backend"] = summary.backend;
    result["first_image"] = summary.first_image;
    result["images_written"] = summary.images_written;
    result["seconds"] = summary.seconds;
    result["cell_updates_per_s"] = summary.cell_updates_per_s;
    result["completed"] = summary.completed;
    result["settled"] = summary.settled;
    result["status"] = summary.status;
    result["output"] = request.output.string();
    return result;
  }

 private:
  std::optional<std::int64_t> preset_steps_per_image_;
};

class Sweep : public Batch {
 public:
  Sweep(const Problem& problem, const std::vector<pipeline::SweepMember>& members,
        const InitialState& init, EngineOptions options)
      : Batch(problem, rates(problem, members), initial_states(members, init), options),
        sweep_members_(members) {
    batch_shape_ = true;
  }

  const std::vector<pipeline::SweepMember>& sweep_members() const { return sweep_members_; }

 private:
  static std::vector<Parameters> rates(const Problem& problem,
                                       const std::vector<pipeline::SweepMember>& members) {
    pipeline::validate_members(problem, members);  // as grayscott sweep's
    std::vector<Parameters> params(members.size(), problem.params);
    for (std::size_t m = 0; m < members.size(); ++m) {
      params[m].feed = members[m].feed;
      params[m].kill = members[m].kill;
    }
    return params;
  }
  static std::vector<InitialState> initial_states(const std::vector<pipeline::SweepMember>& members,
                                                  const InitialState& init) {
    std::vector<InitialState> states;
    states.reserve(members.size());
    for (const auto& member : members) states.push_back({init.kind, member.seed, init.values});
    return states;
  }

  std::vector<pipeline::SweepMember> sweep_members_;
};

// A view of one field as an array that keeps `owner` (the Simulation or Sweep) alive.
template <class Real>
nb::object host_view(const FieldView& view, nb::handle owner) {
  std::vector<std::size_t> shape(view.shape.begin(), view.shape.end());
  if (view.read_only) {
    return nb::cast(nb::ndarray<nb::numpy, const Real>(reinterpret_cast<const Real*>(view.pointer),
                                                       shape.size(), shape.data(), owner));
  }
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
  // Its array is made through NumPy's Python code, where the interpreter's exit could end the
  // thread inside this module's frames: counted, so that the exit waits for it.
  const WorkInProgress counted;
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
  const WorkInProgress counted;  // as field_array
  FieldView view = batch.field(which);
  if (!view.on_device) throw nb::type_error("a host field has no device capsule; use the array");
  view.pointer = pointer;
  const bool single = batch.problem().precision == Precision::Single;
  nb::handle self = nb::find(&batch);
  return single ? device_view<float>(view, self) : device_view<double>(view, self);
}

nb::dict field_interface(Batch& batch, char which) {
  const WorkInProgress counted;  // as field_array
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
  for (const double w : stencil.weights) {
    text += (text.empty() ? "" : ",") + shortest_text(w);
  }
  return text;
}

nb::dict parameters_dict(const Problem& problem) {
  nb::dict d;
  d["rows"] = problem.grid.rows;
  d["cols"] = problem.grid.cols;
  d["depth"] = problem.grid.depth;
  d["feed"] = problem.params.feed;
  d["kill"] = problem.params.kill;
  d["du"] = problem.params.du;
  d["dv"] = problem.params.dv;
  d["dt"] = problem.params.dt;
  d["stencil"] = stencil_text(problem.stencil);
  d["boundary"] = std::string(to_string(problem.boundary));
  d["precision"] = std::string(to_string(problem.precision));
  if (problem.boundary == Boundary::Fixed)
    d["outside"] = nb::make_tuple(problem.outside.u, problem.outside.v);
  return d;
}

// The problem and engine of a Simulation or a Sweep from their keywords (a sweep's feed and kill
// are its own sets).
struct Made {
  requests::ProblemSettings problem;
  requests::EngineSettings engine;
};

Made simulation_settings(Keywords& keywords, std::initializer_list<std::string_view> skip = {}) {
  Made made;
  keywords.fill(made.problem, requests::problem_settings(), skip);
  keywords.fill(made.engine, requests::engine_settings());
  keywords.record_given(made.problem);
  return made;
}

// The appearance options of `grayscott render` from Python's keywords.
io::RenderOptions render_options(nb::dict settings) {
  io::RenderOptions options;
  std::optional<std::string> slice, projection;  // a volume's view, where given
  for (auto [key, value] : settings) {
    const std::string keyword = nb::cast<std::string>(key);
    if (value.is_none()) continue;
    if (keyword == "field") {
      options.field = text_for(Form::Name, keyword, value);
    } else if (keyword == "range") {
      if (PyUnicode_Check(value.ptr())) {
        std::tie(options.lo, options.hi) = io::parse_range(nb::cast<std::string>(value));
      } else {
        if (PySequence_Check(value.ptr()) == 0) wrong_type(keyword, "(lo, hi) or 'LO:HI'", value);
        const nb::tuple pair = nb::tuple(value);
        if (pair.size() != 2) wrong_type(keyword, "(lo, hi) or 'LO:HI'", value);
        options.lo = number(keyword, pair[0]);
        options.hi = number(keyword, pair[1]);
        if (!(options.lo < options.hi) || !std::isfinite(options.lo) ||
            !std::isfinite(options.hi)) {
          throw InvalidInput("range: expected (lo, hi) with finite lo < hi, got (" +
                             shortest_text(options.lo) + ", " + shortest_text(options.hi) + ")");
        }
      }
    } else if (keyword == "colormap") {
      options.colormap = io::parse_colormap(text_for(Form::Name, keyword, value));
    } else if (keyword == "scale") {
      // The command line's reading of the text: "auto", or the whole number's digits.
      options.scale = io::parse_scale(PyUnicode_Check(value.ptr())
                                          ? nb::cast<std::string>(value)
                                          : std::to_string(whole_number(keyword, value)));
    } else if (keyword == "slice" || keyword == "projection") {
      (keyword == "slice" ? slice : projection) = text_for(Form::Plain, keyword, value);
    } else if (keyword == "annotate") {
      options.annotate = flag(keyword, value);
    } else if (keyword == "image") {
      options.image = whole_number(keyword, value);
    } else if (keyword == "overwrite") {
      options.overwrite = flag(keyword, value);
    } else if (keyword == "every") {
      options.every = whole_number(keyword, value);
    } else if (keyword == "fps") {
      options.fps = number(keyword, value);
    } else if (keyword == "seed") {
      options.seed = whole_number(keyword, value);
    } else {
      throw nb::type_error(("got an unexpected keyword argument '" + keyword + "'").c_str());
    }
  }
  if (options.scale == 1 && !settings.contains("scale")) options.scale = 0;  // auto by default
  options.volume = io::parse_view(slice, projection);
  return options;
}

// The options of pictures or a video of `file` (gs.render, gs.video): field=None, or not given,
// draws the file's field (v, or u where it holds u alone), as `grayscott render` without --field.
io::RenderOptions render_options_of(const std::string& file, nb::dict settings) {
  io::RenderOptions options = render_options(settings);
  const bool field_given = settings.contains("field") && !settings["field"].is_none();
  options.field = io::drawn_field(file, field_given ? options.field : "");
  return options;
}

std::string png_of(nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> values,
                   const io::RenderOptions& options) {
  const auto rows = static_cast<std::int64_t>(values.shape(0));
  const auto cols = static_cast<std::int64_t>(values.shape(1));
  if (rows == 0 || cols == 0) throw InvalidInput("image: an empty array has no picture");
  io::RenderOptions look = options;
  if (look.scale == 0) look.scale = io::auto_scale(rows, cols);
  return io::encode_png(io::make_picture({values.data(), static_cast<std::size_t>(rows * cols)},
                                         rows, cols, look, "", ""));
}

// gs.classify's answer: the class's name and every feature, by name (src/analysis/classify.hpp).
nb::dict phase_dict(const analysis::PhaseFeatures& p) {
  nb::dict d;
  d["count"] = p.count;
  d["mean_area"] = p.mean_area;
  d["area_cv"] = p.area_cv;
  d["mean_roundness"] = p.mean_roundness;
  d["mean_elongation"] = p.mean_elongation;
  d["round_fraction"] = p.round_fraction;
  d["wrapping"] = p.wrapping;
  d["cut_by_edge"] = p.cut_by_edge;
  return d;
}

nb::tuple classification_of(const analysis::Classification& c) {
  const analysis::Features& f = c.features;
  nb::dict d;
  d["rows"] = f.rows;
  d["cols"] = f.cols;
  d["periodic"] = f.periodic;
  d["v_min"] = f.v_min;
  d["v_max"] = f.v_max;
  d["v_mean"] = f.v_mean;
  d["threshold"] = f.threshold;
  d["covered"] = f.covered;
  d["objects"] = phase_dict(f.objects);
  d["holes"] = phase_dict(f.holes);
  if (std::isfinite(f.change_per_step)) {
    d["change_per_step"] = f.change_per_step;
  } else {
    d["change_per_step"] = nb::none();
  }
  return nb::make_tuple(std::string(analysis::to_string(c.pattern)), d);
}

template <class Real>
nb::tuple classify_array(nb::ndarray<const Real, nb::ndim<2>, nb::c_contig, nb::device::cpu> v,
                         bool periodic, nb::handle change_argument) {
  const auto rows = static_cast<std::int64_t>(v.shape(0));
  const auto cols = static_cast<std::int64_t>(v.shape(1));
  const std::optional<double> change =
      change_argument.is_none() ? std::nullopt
                                : std::optional(number("change_per_step", change_argument));
  if (change && !(std::isfinite(*change) && *change >= 0)) {
    throw InvalidInput("change_per_step must be a finite, non-negative number or None");
  }
  analysis::Classification c;
  {
    const GilReleased unlocked;
    c = analysis::classify(std::span<const Real>(v.data(), v.size()), rows, cols, periodic,
                           change.value_or(analysis::unknown_change));
  }
  return classification_of(c);
}

template <class Real>
double change_of(nb::ndarray<const Real, nb::ndim<2>, nb::c_contig, nb::device::cpu> previous,
                 nb::ndarray<const Real, nb::ndim<2>, nb::c_contig, nb::device::cpu> current,
                 std::int64_t steps) {
  if (previous.shape(0) != current.shape(0) || previous.shape(1) != current.shape(1)) {
    throw InvalidInput("previous and current must have the same shape");
  }
  const double change =
      analysis::change_per_step(std::span<const Real>(previous.data(), previous.size()),
                                std::span<const Real>(current.data(), current.size()), steps);
  // A NaN or an infinity in either image: no change to tell (classify refuses such an image too).
  if (!std::isfinite(change)) {
    throw InvalidInput("change_per_step: previous or current holds a value that is not finite");
  }
  return change;
}

}  // namespace
}  // namespace grayscott::python

NB_MODULE(_core, m) {
  using namespace grayscott;
  using namespace grayscott::python;
  m.doc() = "The grayscott engines and run pipeline (use the grayscott package, not this module).";
  m.attr("__version__") = std::string(version);
  // Simulations still held at the interpreter's exit (by a daemon thread, a global) are no
  // reference-counting bug, which is what nanobind's warning about them would suggest.
  nb::set_leak_warnings(false);

  // The command line's one-line messages, in Python's words, as the exceptions Python users
  // expect.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const pipeline::RunInterrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, python_words(e.what()).c_str());
    } catch (const OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, python_words(e.what()).c_str());
    } catch (const PathNotFound& e) {
      PyErr_SetString(PyExc_FileNotFoundError, python_words(e.what()).c_str());
    } catch (const PathExists& e) {
      PyErr_SetString(PyExc_FileExistsError, python_words(e.what()).c_str());
    } catch (const PathDenied& e) {
      PyErr_SetString(PyExc_PermissionError, python_words(e.what()).c_str());
    } catch (const PathIsDirectory& e) {
      PyErr_SetString(PyExc_IsADirectoryError, python_words(e.what()).c_str());

    } catch (const InvalidInput& e) {
      PyErr_SetString(PyExc_ValueError, python_words(e.what()).c_str());
    } catch (const nb::builtin_exception&) {
      throw;  // nanobind's own TypeError, ValueError, ...: its translator raises them
    } catch (const FileLocked& e) {
      PyErr_SetString(PyExc_BlockingIOError, python_words(e.what()).c_str());
    } catch (const FileDenied& e) {
      PyErr_SetString(PyExc_PermissionError, python_words(e.what()).c_str());
    } catch (const std::runtime_error& e) {
      // A backend that cannot run, a file that cannot be written: RuntimeError, in Python's words.
      PyErr_SetString(PyExc_RuntimeError, python_words(e.what()).c_str());
    }
  });

  nb::class_<Batch>(m, "_Batch")
      // The package's advance() and reset() call these: its signatures say a wrong call in one
      // line, as every other call of the package (nanobind's would list the overloads).
      .def("_advance", &Batch::advance, "steps"_a.none(),
           nb::sig("def _advance(self, steps: int) -> None"))
      .def("_reset", &Batch::reset)
      .def("_field", [](Batch& b, char which) { return field_array(b, nb::find(&b), which); })
      .def("_field_interface", &field_interface)
      .def("_device_capsule", &device_capsule)
      .def("_copy_field", &Batch::copy_field)
      .def("_statistics", &Batch::statistics, "bins"_a.none(), "low"_a.none(), "high"_a.none())
      .def_prop_ro("step", &Batch::step, "Steps done since the initial state.")
      .def_prop_ro("_block", &Batch::block,
                   "Where this process's block lies in the grid (the whole grid for one process): "
                   "(first row, rows, first column, columns); a volume's adds its planes, "
                   "(first row, rows, first column, columns, first plane, planes).")
      .def_prop_ro("_over_ranks", &Batch::over_ranks)
      .def_prop_ro("_reports", &Batch::reports)
      .def_prop_ro("time", &Batch::time, "Model time: the sum of dt over the steps done.")
      .def_prop_ro("backend", &Batch::backend,
                   "The backend that runs (its name: cpu, cuda, ...; grayscott info lists them).")
      .def_prop_ro("on_device", &Batch::on_device,
                   "Whether the state lives in GPU memory (u and v are then DeviceArrays).")
      .def_prop_ro(
          "parameters", [](const Batch& b) { return parameters_dict(b.problem()); },
          "The grid, rates, stencil, boundary and precision.")
      .def_prop_ro(
          "shape",
          [](const Batch& b) {
            const Grid& grid = b.problem().grid;
            return grid.volume() ? nb::make_tuple(grid.depth, grid.rows, grid.cols)
                                 : nb::make_tuple(grid.rows, grid.cols);
          },
          "(rows, cols) of one simulation's fields; (depth, rows, cols) for a volume.");

  auto simulation =
      nb::class_<Simulation, Batch>(m, "_Simulation")
          .def(
              "__init__",
              [](Simulation* self, nb::dict settings, bool with_comm, bool over_ranks) {
                Keywords keywords(settings, "Simulation");
                const Made made = simulation_settings(keywords);
                requests::OverRanksSettings split;
                keywords.fill(split, requests::over_ranks_settings());
                keywords.refuse_unknown();
                const pipeline::DistributedRunOptions split_options = split.options();
                if (!with_comm) {
                  std::vector<std::string> tuned = split.tuned();
                  if (!split.decomposition.empty()) tuned.insert(tuned.begin(), "decomposition");
                  if (!tuned.empty()) {
                    throw InvalidInput(tuned.front() +
                                       ": an option of a grid split over MPI ranks; give "
                                       "comm=MPI.COMM_WORLD too (under mpirun)");
                  }
                }
#if GRAYSCOTT_WITH_MPI
                // With a communicator of one rank: checked as `mpirun -n 1` checks it (the whole
                // grid, or refused), not ignored.
                if (!over_ranks) {
                  mpi::check_one_process_decomposition(split.decomposition,
                                                       made.problem.problem().grid, true);
                }
#endif
                // A preset's steps between images apply to run() (unless it names its own).
                new (self) Simulation(made.problem.problem(), made.problem.initial_state(),
                                      made.engine.engine_options(), over_ranks, split_options,
                                      made.problem.preset_steps_per_image());
              },
              "settings"_a, "with_comm"_a = false, "over_ranks"_a = false)
          .def("_run", &Simulation::run, "settings"_a, "progress"_a.none(), "on_image"_a.none(),
               "resume"_a, "image_views"_a)
          .def_prop_ro("init", [](const Simulation& s) {
            return nb::make_tuple(std::string(to_string(s.initial()[0].kind)), s.initial()[0].seed);
          });
  // The rates that may change between steps, as read-write properties.
  const auto rate_property = [&](const char* name, double Parameters::*which, const char* doc) {
    simulation.def_prop_rw(
        name, [which](const Simulation& s) { return s.rate(which); },
        [which, name](Simulation& s, nb::handle value) { s.set_rate(which, name, value); },
        nb::for_setter(nb::arg("value").none()), doc);
  };
  rate_property("feed", &Parameters::feed, "Feed rate F; settable between steps.");
  rate_property("kill", &Parameters::kill, "Kill rate k; settable between steps.");
  rate_property("du", &Parameters::du, "Diffusion rate of u; settable between steps.");
  rate_property("dv", &Parameters::dv, "Diffusion rate of v; settable between steps.");
  rate_property("dt", &Parameters::dt,
                "Time step; settable between steps (within the stability limit).");

  nb::class_<Sweep, Batch>(m, "_Sweep")
      .def(
          "__init__",
          [](Sweep* self, nb::dict settings) {
            Keywords keywords(settings, "Sweep");
            requests::SweepSettings sweep;
            keywords.fill(sweep, requests::sweep_settings(), {"max_batch_memory"});
            Made made = simulation_settings(keywords, {"feed", "kill"});
            keywords.refuse_unknown();
            sweep.problem = made.problem;
            const auto members = sweep.members();
            new (self) Sweep(sweep.shared_problem(members), members,
                             sweep.seeded_problem().initial_state(), made.engine.engine_options());
          },
          "settings"_a)
      .def_prop_ro("members", [](const Sweep& s) {
        std::vector<std::tuple<double, double, std::uint64_t>> out;
        for (const auto& member : s.sweep_members())
          out.emplace_back(member.feed, member.kill, member.seed);
        return out;
      });

  m.def(
      "_sweep_to_file",
      [](nb::dict settings, nb::object progress, bool over_ranks) {
        // "resume": the file of a stopped sweep to continue (gs.resume_sweep), whose keywords are
        // only how it is computed. `over_ranks`: the members split over the ranks of
        // MPI.COMM_WORLD (comm=), as `mpirun grayscott sweep` splits them.
        std::string resume;
        if (settings.contains("resume")) {
          resume = nb::cast<std::string>(settings["resume"]);
          settings = nb::dict(settings);  // a copy: the caller's dict stays as it was
          PyDict_DelItemString(settings.ptr(), "resume");
          refuse_empty_path(resume);
        }
        Keywords keywords(settings, resume.empty() ? "sweep" : "resume_sweep");
        requests::SweepSettings sweep;
        keywords.fill(sweep, requests::sweep_settings());
        keywords.fill(sweep.problem, requests::problem_settings(), {"feed", "kill"});
        keywords.fill(sweep.engine, requests::engine_settings());
        keywords.fill(sweep.out, requests::output_settings());
        keywords.record_given(sweep.problem);
        keywords.refuse_unknown();
        pipeline::SweepRequest request =
            resume.empty() ? sweep.request() : sweep.continuing(resume);
#if GRAYSCOTT_WITH_MPI
        const std::shared_ptr<mpi::Session> session = over_ranks ? world_session() : nullptr;
        if (session && !progress.is_none()) {
          throw InvalidInput(
              "progress: a sweep over MPI ranks calls no Python callback (rank 0 reports, as "
              "mpirun grayscott sweep does); read the file afterwards, or sweep without comm");
        }
        // Rank 0 says what the sweep says; the others keep quiet.
        const bool reports = !session || session->rank() == 0;
        request.quiet = request.quiet || !reports;
        if (reports)
          request.notices = python_notice;
        else
          request.notices = [](const std::string&) {};
#else
        if (over_ranks) {
          throw std::runtime_error(
              "comm: this build of the module has no MPI (pip install . with Open MPI and a "
              "parallel HDF5 present builds it, e.g. Debian's libopenmpi-dev "
              "libhdf5-openmpi-dev)");
        }
        const bool reports = true;
        request.notices = python_notice;
#endif
        // progress(member-images done, member-images in the sweep) from the stepping thread; what
        // it raises stops the sweep at the next image boundary and is raised here.
        std::optional<nb::python_error> progress_error;
        bool interrupted_by_python = false;  // a KeyboardInterrupt raised in the callback
        if (!progress.is_none()) {
          request.on_progress = [&](std::int64_t done, std::int64_t total) {
            nb::gil_scoped_acquire locked;
            if (progress_error) return;
            try {
              progress(done, total);
            } catch (nb::python_error& error) {
              interrupted_by_python = stop_for(error, "progress");
              progress_error.emplace(std::move(error));
            }
          };
        }
        pipeline::clear_stop_request();
        pipeline::SweepSummary summary;
        {
          pipeline::StopSignals stop_signals(python_stop_signals());
          const WorkInProgress in_progress;
          try {
            const GilReleased unlocked;
#if GRAYSCOTT_WITH_MPI
            summary = session ? pipeline::execute_distributed_sweep(request, *session)
                              : pipeline::execute_sweep(request);
#else
            summary = pipeline::execute_sweep(request);
#endif
          } catch (...) {
            stop_signals.end_as_asked(pipeline::stop_requested());
            throw;
          }
          // A batch system's SIGTERM ends the process as it would have, the file consistent.
          stop_signals.end_as_asked(summary.signal != 0 ? summary.signal
                                                        : pipeline::stop_requested());
        }
        pipeline::clear_stop_request();
        if (progress_error && !interrupted_by_python) {
          // A Ctrl-C that came as the sweep stopped anyway is this stop's (see the run's).
          forget_the_interrupt_python_was_told_of();
          progress_error->restore();
          throw nb::python_error();
        }
        // Ctrl-C, heard by the sweep or raised by Python in the callback: the stop it made, and
        // how to continue it.
        if (summary.signal != 0 || interrupted_by_python) {
          forget_the_interrupt_python_was_told_of();
          // "grayscott.resume_sweep('FILE')", in Python's words.
          PyErr_SetString(PyExc_KeyboardInterrupt,
                          python_words(summary.status +
                                       "; continue with: " + pipeline::continue_command(request))
                              .c_str());
          throw nb::python_error();
        }
        // As the command line's warning.
        if (const std::string warning =
                pipeline::nonfinite_members_warning(summary, request.output);
            reports && !warning.empty()) {
          python_notice(warning);
        }
        nb::dict result;
        result["backend"] = summary.backend;
        result["members"] = summary.members;
        result["batches"] = summary.batches;
        result["seconds"] = summary.seconds;
        result["cell_updates_per_s"] = summary.cell_updates_per_s;
        result["completed"] = summary.completed;
        result["status"] = summary.status;
        result["output"] = request.output.string();
        return result;
      },
      "settings"_a, "progress"_a = nb::none(), "over_ranks"_a = false);

  m.def(
      "_defaults",
      [](const std::string& which) {
        nb::dict d;
        if (which == "simulation") {
          add_defaults(d, requests::problem_settings(), requests::ProblemSettings{});
          add_defaults(d, requests::engine_settings(), requests::EngineSettings{});
        } else if (which == "run") {
          add_defaults(d, requests::output_settings(), requests::RunSettings{}.out);
        } else if (which == "over_ranks") {
          add_defaults(d, requests::over_ranks_settings(), requests::OverRanksSettings{});
        } else if (which == "sweep") {
          add_defaults(d, requests::sweep_settings(), requests::SweepSettings{});
          add_defaults(d, requests::problem_settings(), requests::ProblemSettings{},
                       {"feed", "kill"});
          add_defaults(d, requests::engine_settings(), requests::EngineSettings{});
          add_defaults(d, requests::output_settings(), requests::SweepSettings{}.out);
        } else {
          throw nb::value_error("which: simulation, run, over_ranks or sweep");
        }
        return d;
      },
      "which"_a, "Every setting's default, by Python keyword, as the command line has it.");

#if GRAYSCOTT_WITH_MPI
  m.attr("_has_mpi") = true;
#else
  m.attr("_has_mpi") = false;
#endif
  m.def("_setting_names", &requests::setting_names,
        "(command-line option, Python keyword) of every setting.");
  m.def("_python_words", &python_words, "message"_a);
  m.def(
      "_nearest_name",
      [](const std::string& name, const std::vector<std::string>& known) {
        return requests::nearest_name(name, known);
      },
      "name"_a, "known"_a,
      "The one of `known` a misspelt `name` means, as the command line finds it, or ''.");

  // gs.open's check before xarray opens the file (a FIFO would hang it, a folder or a missing
  // file get HDF5's words): the command line's refusals.
  m.def(
      "_check_hdf5_file",
      [](const std::string& path) {
        refuse_empty_path(path);
        io::check_hdf5_file(path);
      },
      "path"_a);

  // A file xarray could not open, opened as grayscott reads it: its refusal in grayscott's words
  // (a file cut short by a copy: "... is cut short: 58624 bytes of the 117248 it records").
  m.def(
      "_check_opens", [](const std::string& path) { (void)io::RunFileReader(path); }, "path"_a);

  m.def(
      "_resumable_run",
      [](const std::string& path) {
        refuse_empty_path(path);
        const pipeline::RunRequest request = pipeline::resume_request(path);
        nb::dict d = parameters_dict(request.problem);
        // A custom initial state is not made from keywords: run(resume=True) takes it, with the
        // others, from the file.
        if (request.initial.kind != InitialKind::Custom)
          d["init"] = std::string(to_string(request.initial.kind));
        if (request.initial.kind == InitialKind::Noise) d["seed"] = request.initial.seed;
        return d;
      },
      "path"_a, "The parameters of the unfinished run in `path` (ValueError if there is none).");

  m.def(
      "_dt_limit",
      [](const std::string& stencil, nb::handle du, nb::handle dv, nb::handle feed, nb::handle kill,
         nb::handle everywhere) {
        Problem problem;
        problem.stencil = Stencil::parse(stencil);
        problem.stencil.check_diffusive();  // no dt makes such a run stable
        problem.params.du = number("du", du);
        problem.params.dv = number("dv", dv);
        problem.params.feed = number("feed", feed);
        problem.params.kill = number("kill", kill);
        problem.params.validate();  // the rates as a run takes them (its dt, 1, is valid)
        return flag("everywhere", everywhere) ? problem.dt_stable_everywhere() : problem.dt_limit();
      },
      "stencil"_a, "du"_a.none(), "dv"_a.none(), "feed"_a.none(), "kill"_a.none(),
      "everywhere"_a.none());

  // Registered with atexit by the package (see stop_work_at_exit).
  m.def("_stop_work_at_exit", &stop_work_at_exit);

  // In a forked child, by the package's fork hook: of the parent's threads only the one that
  // forked goes on here, so only its work is in progress (the others', counted, would make the
  // child's exit wait a minute for work that is not there).
  m.def("_work_anew_in_a_child", [] { work_in_progress = work_of_this_thread; });

  m.def(
      "_render",
      [](const std::string& file, const std::string& out, nb::dict settings, nb::object progress) {
        io::RenderOptions options = render_options_of(file, settings);
        io::check_render_folder(out);
        options.out_dir = out;
        bool interrupted = false;
        options.stop_requested = python_interrupt(interrupted);
        std::optional<nb::python_error> progress_error;
        report_renders(options, progress, progress_error);
        std::vector<std::filesystem::path> written;
        {
          pipeline::StopSignals stop_signals(pipeline::StopSignals::WhereDefault{});
          const WorkInProgress in_progress;
          try {
            const GilReleased unlocked;
            written = io::render_run(file, options);
          } catch (...) {
            stop_signals.end_as_asked(pipeline::stop_requested());
            throw;
          }
          stop_signals.end_as_asked(pipeline::stop_requested());  // the pictures kept
        }
        if (interrupted) {  // the KeyboardInterrupt, pictures kept: said how many
          interrupted_with("render stopped after " + io::count_pictures(written.size()) + " into " +
                           out);
        }
        if (progress_error) throw std::move(*progress_error);  // the pictures written kept
        // Stopped for a cause, not a signal (the interpreter's exit): said, the pictures kept.
        if (const std::string cause = pipeline::stop_cause();
            pipeline::stop_requested() != 0 && !cause.empty()) {
          throw std::runtime_error("render stopped after " + io::count_pictures(written.size()) +
                                   ": " + cause);
        }
        if (!options.image) {
          const std::string earlier = io::earlier_pictures_note(out, options.field, written);
          if (!earlier.empty()) python_notice(earlier);
        }
        warn_if_unfinished(file, options.field);
        std::vector<std::string> paths;
        for (const auto& path : written) paths.push_back(path.string());
        return paths;
      },
      "file"_a, "out"_a, "settings"_a, "progress"_a.none());

  m.def(
      "_video",
      [](const std::string& file, const std::string& video, nb::dict settings,
         nb::object progress) {
        refuse_empty_path(video);
        io::RenderOptions options = render_options_of(file, settings);
        options.video = video;
        bool interrupted = false;
        options.stop_requested = python_interrupt(interrupted);
        std::optional<nb::python_error> progress_error;
        report_renders(options, progress, progress_error);
        pipeline::StopSignals stop_signals(pipeline::StopSignals::WhereDefault{});
        const WorkInProgress in_progress;
        std::int64_t frames = 0;
        try {
          const GilReleased unlocked;
          frames = io::render_video(file, options);
        } catch (const io::RenderStopped& stopped) {
          stop_signals.end_as_asked(pipeline::stop_requested());  // no partial video left
          if (interrupted) interrupted_with(std::string("video ") + stopped.what());
          if (progress_error) throw std::move(*progress_error);   // no video left either
          // Stopped for a cause, not a signal (the interpreter's exit).
          if (const std::string cause = pipeline::stop_cause(); !cause.empty()) {
            throw std::runtime_error("video stopped: " + cause + "; " + video + " was not written");
          }
          // A stop signal another run's handler took (this video made from its callback).
          const int signal = pipeline::stop_requested();
          throw pipeline::RunInterrupted("video stopped by " + pipeline::signal_name(signal),
                                         signal);
        } catch (...) {
          stop_signals.end_as_asked(pipeline::stop_requested());
          throw;
        }
        stop_signals.end_as_asked(pipeline::stop_requested());
        warn_if_unfinished(file, options.field);
        return frames;
      },
      "file"_a, "video"_a, "settings"_a, "progress"_a.none());

  m.def(
      "_png",
      [](nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> values,
         nb::dict settings) {
        const std::string png = png_of(values, render_options(settings));
        return nb::bytes(png.data(), png.size());
      },
      "values"_a, "settings"_a,
      "A PNG picture (bytes) of a 2D float64 array, coloured as render does.");

  // gs.classify and gs.change_per_step (src/analysis): an image of v from anywhere, float32 or
  // float64 (the package converts the rest).
  m.def("_classify", &classify_array<float>, "v"_a, "periodic"_a, "change_per_step"_a.none());
  m.def("_classify", &classify_array<double>, "v"_a, "periodic"_a, "change_per_step"_a.none());
  m.def("_change_per_step", &change_of<float>, "previous"_a, "current"_a, "steps"_a);
  m.def("_change_per_step", &change_of<double>, "previous"_a, "current"_a, "steps"_a);
}
