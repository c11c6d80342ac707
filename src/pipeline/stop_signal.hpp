// Stopping a run from outside. SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 (what a batch system
// sends before its time limit: Slurm's --signal, Grid Engine's -notify) ask the image loop to stop
// at the next image boundary: it saves a checkpoint there, the file records the signal, and the
// program exits with 128 + the signal's number. A second SIGINT exits at once; the file still holds
// every image flushed before it (it is flushed at least twice a second).
#pragma once

#include <string>

namespace grayscott::pipeline {

// Installs the handlers while it lives, restoring the previous ones afterwards. One made while
// another lives (another thread's run, a render from a run's callback) does nothing: the first
// keeps them, and ends the process where end_as_asked says so.
class StopSignals {
 public:
  // Every stop signal: a program's own front end (the command line).
  StopSignals();
  // A front end inside a host that has its own say (Python: SIGINT is its KeyboardInterrupt, and
  // a script may have handlers of its own): SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 only, each only
  // where it was left to its default action, which would end the process at once, mid-write. With
  // `interrupt`, SIGINT too, where the host's handler would only be heard at the next image
  // (Python's, while the run holds no GIL): the run stops after the image in progress, as on
  // the command line, and a second SIGINT changes nothing (the host says what it means; in a
  // Jupyter kernel, ending the process would end the kernel). `tell_host`, called (from the
  // handler: async-signal-safe) at each SIGINT, passes it on to the host as well, which then
  // hears it where it would have (Python's PyErr_SetInterrupt: a callback that blocks, or the
  // moments after the run).
  struct WhereDefault {
    bool interrupt = false;
    void (*tell_host)() = nullptr;
  };
  explicit StopSignals(WhereDefault where);
  // After the run: where `signal` is SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2 and this object took it
  // over from its default action, puts the default back and raises it, ending the process as the
  // sender asked, now that the file is consistent. Otherwise does nothing.
  void end_as_asked(int signal);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  // Every stop signal, or (`where_default`) those WhereDefault says.
  StopSignals(bool where_default, bool interrupt, void (*tell_host)());
  bool owner_ = false;  // the first alive: it installed the handlers and restores them
};

// While it lives (a front end reading its options, a config file from a FIFO or stdin included),
// a stop signal ends the process at once, by its default action: nothing is written yet, so
// there is no image boundary to wait for, and a read that blocks would otherwise never see it.
class StopAtOnce {
 public:
  StopAtOnce();
  ~StopAtOnce();
  StopAtOnce(const StopAtOnce&) = delete;
  StopAtOnce& operator=(const StopAtOnce&) = delete;
};

// What a second SIGINT says as it ends the process, after "exiting now; ": what the work leaves
// (left_unfinished's words for a run or sweep). Unset (a render, which only reads), it says only
// that the process exits. Set before the work starts, and again when what it leaves changes.
void say_at_second_interrupt(const std::string& what_is_left);
// "FILE keeps the images flushed before (grayscott repair FILE makes it readable, COMMAND
// continues it)": the file a run or sweep leaves, and the command that continues it
// ("grayscott run --resume FILE").
std::string left_unfinished(const std::string& file, const std::string& continue_command);

// Whether the first stop signal says on stderr that the run stops after the image in progress
// (an image may take long): a front end's choice (not with --quiet, only from one MPI rank).
void announce_stop_signals(bool announce);

// The signal that asked to stop (SIGTERM, ...), or 0. Async-signal-safe to set, cheap to read.
int stop_requested();
// Asks the loop to stop as if `signal` had arrived (a front end that learns of an interrupt
// otherwise, such as Python's KeyboardInterrupt).
void request_stop(int signal);
// Asks the loop to stop at the next image boundary for `cause`, not a signal (a front end's
// callback that raised: "progress raised ValueError: x"): the run's status then reads
// "stopped after image N: CAUSE". Not from a signal handler.
void request_stop(const std::string& cause);
// Asks every loop of this process to stop at its next image boundary for `cause`, until
// end_lasting_stop(): clear_stop_request() leaves it, and stop_requested() reports SIGINT
// meanwhile (a process about to exit, as Python's interpreter does with runs going on in other
// threads, each of which clears the requests as it starts and ends).
void request_lasting_stop(const std::string& cause);
void end_lasting_stop();
// The cause of the stop requested, or "" (none, or a signal).
std::string stop_cause();
void clear_stop_request();

// "SIGTERM", "SIGINT", ..., or "signal N".
std::string signal_name(int signal);

}  // namespace grayscott::pipeline
