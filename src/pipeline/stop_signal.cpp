#include "pipeline/stop_signal.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

#include "io/files/abrupt_exit.hpp"

namespace grayscott::pipeline {

namespace {

std::atomic<int> requested{0};
std::mutex cause_mutex;
std::string requested_cause;  // with `requested`, when a front end asked to stop for it
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

constexpr int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
struct sigaction previous[sizeof handled / sizeof handled[0]];
bool installed[sizeof handled / sizeof handled[0]];  // by the StopSignals that owns them
// The StopSignals alive: the first owns the handlers; one made while it lives (another thread's
// run, a render from a run's callback) leaves them to it.
std::atomic<int> alive{0};

std::atomic<bool> announce{false}, on_terminal{false};
static_assert(std::atomic<bool>::is_always_lock_free, "read in a signal handler");

// Whether a second SIGINT ends the process (the command line's; not a host's, see WhereDefault).
std::atomic<bool> second_interrupt_exits{true};
// The host's to hear of each SIGINT too (WhereDefault::tell_host), or null.
std::atomic<void (*)()> tell_host_of_interrupt{nullptr};
// What a second SIGINT writes as it ends the process (say_at_second_interrupt); each text made is
// kept for the process's life, since a handler may be writing one while the next is set.
std::atomic<const std::string*> second_interrupt{nullptr};
static_assert(std::atomic<const std::string*>::is_always_lock_free, "read in a signal handler");
static_assert(std::atomic<void (*)()>::is_always_lock_free, "read in a signal handler");

// What the first stop signal says, written from the handler (write(2) is async-signal-safe).
const char* announcement(int signal) {
  switch (signal) {
    case SIGINT:
      return second_interrupt_exits.load()
                 ? "\ngrayscott: SIGINT: stopping after the image in progress (Ctrl-C again: at "
                   "once)\n"
                 : "\ngrayscott: SIGINT: stopping after the image in progress\n";
    case SIGTERM:
      return "\ngrayscott: SIGTERM: stopping after the image in progress\n";
    case SIGHUP:
      return "\ngrayscott: SIGHUP: stopping after the image in progress\n";
    case SIGUSR1:
      return "\ngrayscott: SIGUSR1: stopping after the image in progress\n";
    default:
      return "\ngrayscott: SIGUSR2: stopping after the image in progress\n";
  }
}

// When the first stop signal arrived (CLOCK_MONOTONIC nanoseconds); 0: none yet (a stop a front
// end asked for is not a signal).
std::atomic<std::int64_t> first_arrival{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "set from a signal handler");

std::int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

std::atomic<bool> at_once{false};  // a StopAtOnce lives
static_assert(std::atomic<bool>::is_always_lock_free, "read in a signal handler");

void on_stop_signal(int signal) {
  if (signal == SIGINT) {
    if (void (*tell)() = tell_host_of_interrupt.load()) tell();
  }
  if (at_once.load()) {
    // Its default action, once this handler returns (signal and raise are async-signal-safe).
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  const std::int64_t now = monotonic_ns();
  int none = 0;
  if (!requested.compare_exchange_strong(none, signal)) {
    // A stop was asked for already. By a front end (a callback that raised): this is the first
    // signal (or one whose handler, on another thread, has yet to record it), and the run is
    // stopping anyway. By a signal: a second Ctrl-C means "now" (the images flushed so far are
    // in the file already), unless it follows the first within 20 ms: the same interrupt
    // delivered twice (`timeout -s INT` signals its command, then the command's process group,
    // and each may reach a different thread), not a second keystroke.
    std::int64_t earlier = 0;
    if (first_arrival.compare_exchange_strong(earlier, now) || signal != SIGINT) return;
    if (now - earlier < 20'000'000 || !second_interrupt_exits.load()) return;
    // Said even with --quiet: the file is left as a kill leaves it.
    static constexpr char text[] = "\ngrayscott: second SIGINT: exiting now\n";
    const std::string* said = second_interrupt.load();
    [[maybe_unused]] const ssize_t written =
        said != nullptr ? ::write(STDERR_FILENO, said->data(), said->size())
                        : ::write(STDERR_FILENO, text, sizeof text - 1);
    io::clean_up_at_abrupt_exit();  // no half-written picture or video, no ffmpeg left running
    ::_exit(128 + SIGINT);
  }
  first_arrival.store(now);
  if (announce.load()) {
    // After a progress bar (a terminal's), on a line of its own.
    const char* text = announcement(signal) + (on_terminal.load() ? 0 : 1);
    const int saved = errno;  // the interrupted code may read it
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, text, std::strlen(text));
    errno = saved;
  }
}

}  // namespace

namespace {
struct sigaction stop_action() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls (writes, waits) go on; the loop polls the flag
  return action;
}
}  // namespace

StopSignals::StopSignals() : StopSignals(false, true, nullptr) {}
StopSignals::StopSignals(WhereDefault where)
    : StopSignals(true, where.interrupt, where.interrupt ? where.tell_host : nullptr) {}

StopSignals::StopSignals(bool where_default, bool interrupt, void (*tell_host)())
    : owner_(alive.fetch_add(1) == 0) {
  if (!owner_) return;
  second_interrupt_exits.store(!where_default);
  tell_host_of_interrupt.store(tell_host);
  const struct sigaction action = stop_action();
  for (std::size_t k = 0; k < std::size(handled); ++k) {
    sigaction(handled[k], nullptr, &previous[k]);
    installed[k] =
        !where_default || (handled[k] == SIGINT ? interrupt : previous[k].sa_handler == SIG_DFL);
    if (installed[k]) sigaction(handled[k], &action, nullptr);
  }
}

void StopSignals::end_as_asked(int signal) {
  if (!owner_ || signal == SIGINT) return;  // SIGINT: a host's own (Python's KeyboardInterrupt)
  for (std::size_t k = 0; k < std::size(handled); ++k) {
    if (handled[k] != signal || !installed[k] || previous[k].sa_handler != SIG_DFL) continue;
    sigaction(handled[k], &previous[k], nullptr);
    installed[k] = false;
    std::raise(signal);
  }
}

StopSignals::~StopSignals() {
  if (owner_) {
    announce.store(false);
    tell_host_of_interrupt.store(nullptr);
    for (std::size_t k = 0; k < std::size(handled); ++k) {
      if (installed[k]) sigaction(handled[k], &previous[k], nullptr);
      installed[k] = false;
    }
  }
  alive.fetch_sub(1);
}

StopAtOnce::StopAtOnce() { at_once.store(true); }
StopAtOnce::~StopAtOnce() { at_once.store(false); }

void say_at_second_interrupt(const std::string& what_is_left) {
  // Never freed: a handler may be writing the one before.
  second_interrupt.store(
      new const std::string("\ngrayscott: second SIGINT: exiting now; " + what_is_left + "\n"));
}

std::string left_unfinished(const std::string& file, const std::string& continue_command) {
  return file + " keeps the images flushed before (grayscott repair " + file +
         " makes it readable, " + continue_command + " continues it)";
}

void announce_stop_signals(bool on) {
  on_terminal.store(::isatty(STDERR_FILENO) == 1);
  announce.store(on);
}

namespace {
// A stop that lasts (request_lasting_stop): clear_stop_request() leaves it.
std::atomic<bool> final_stop{false};
std::string final_cause;  // set before final_stop, under cause_mutex
}  // namespace

int stop_requested() {
  const int signal = requested.load(std::memory_order_relaxed);
  if (signal == 0 && final_stop.load(std::memory_order_acquire)) return SIGINT;
  return signal;
}
void request_lasting_stop(const std::string& cause) {
  const std::lock_guard lock(cause_mutex);
  if (final_stop.load()) return;
  final_cause = cause;
  final_stop.store(true, std::memory_order_release);
}
void end_lasting_stop() {
  const std::lock_guard lock(cause_mutex);
  final_stop.store(false, std::memory_order_release);
  final_cause.clear();
}
void request_stop(int signal) {
  int none = 0;
  requested.compare_exchange_strong(none, signal);
}
void request_stop(const std::string& cause) {
  const std::lock_guard lock(cause_mutex);
  int none = 0;
  // The loop stops as for an interrupt; the cause names why.
  if (requested.compare_exchange_strong(none, SIGINT)) requested_cause = cause;
}
std::string stop_cause() {
  const std::lock_guard lock(cause_mutex);
  if (requested_cause.empty() && final_stop.load()) return final_cause;
  return requested_cause;
}
void clear_stop_request() {
  const std::lock_guard lock(cause_mutex);
  first_arrival.store(0);
  requested.store(0);
  requested_cause.clear();
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace grayscott::pipeline
