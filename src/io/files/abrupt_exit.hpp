// What an abrupt exit (a second Ctrl-C, which ends the process at once) must not leave behind: a
// picture or a video being written under its temporary name (NAME.partial-PID), which holds
// nothing anyone can use, and the ffmpeg process encoding a video, which would go on and finish
// that file after this process has gone. A run's or a sweep's file is not among them: it keeps the
// images flushed before, which a repair makes readable.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace grayscott::io {

// Registers `partial` for as long as it lives: an abrupt exit meanwhile removes the file (and
// ends its writer first). A few may be registered at once (a rendering inside a run's callback);
// one beyond them is not, and an abrupt exit would leave it (as kill -9 leaves any).
class RemovedAtAbruptExit {
 public:
  explicit RemovedAtAbruptExit(const std::filesystem::path& partial);
  ~RemovedAtAbruptExit();
  RemovedAtAbruptExit(const RemovedAtAbruptExit&) = delete;
  RemovedAtAbruptExit& operator=(const RemovedAtAbruptExit&) = delete;

  // The child process writing the file (ffmpeg), ended (SIGKILL, then waited for) before the file
  // is removed, so that it cannot write it again; 0: none.
  void set_writer(pid_t writer);

 private:
  int slot_ = -1;  // -1: every slot was taken
};

// Ends each registered writer and removes each registered file. Async-signal-safe (kill, waitpid,
// unlink and lock-free atomics only): called by the handler of a second Ctrl-C just before _exit.
void clean_up_at_abrupt_exit() noexcept;

}  // namespace grayscott::io
