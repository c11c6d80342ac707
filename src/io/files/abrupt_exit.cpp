#include "io/files/abrupt_exit.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstddef>
#include <string>

namespace grayscott::io {

namespace {

// One registered file. Its name is written by the registering thread and read by a signal handler
// on any thread, so it is guarded as a sequence lock: `sequence` is odd while the name changes,
// and a reader that sees the same even value before and after copying it has a whole name.
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<unsigned> sequence{0};
  std::atomic<pid_t> writer{0};
  std::array<std::atomic<char>, PATH_MAX> name{};
};
static_assert(std::atomic<unsigned>::is_always_lock_free &&
                  std::atomic<pid_t>::is_always_lock_free &&
                  std::atomic<char>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "read in a signal handler");

std::array<Slot, 8> slots;

void set_name(Slot& slot, const std::string& name) {
  slot.sequence.fetch_add(1);  // odd: being written
  std::atomic_thread_fence(std::memory_order_release);
  const std::size_t n = name.size() < PATH_MAX ? name.size() : 0;  // too long: none
  for (std::size_t i = 0; i < n; ++i) slot.name[i].store(name[i], std::memory_order_relaxed);
  slot.name[n].store('\0', std::memory_order_relaxed);
  slot.sequence.fetch_add(1);  // even: whole
}

}  // namespace

RemovedAtAbruptExit::RemovedAtAbruptExit(const std::filesystem::path& partial) {
  for (std::size_t k = 0; k < slots.size(); ++k) {
    bool free = false;
    if (!slots[k].taken.compare_exchange_strong(free, true)) continue;
    slot_ = static_cast<int>(k);
    set_name(slots[k], partial.string());
    return;
  }
}

RemovedAtAbruptExit::~RemovedAtAbruptExit() {
  if (slot_ < 0) return;
  Slot& slot = slots[static_cast<std::size_t>(slot_)];
  slot.writer.store(0);
  set_name(slot, {});
  slot.taken.store(false);
}

void RemovedAtAbruptExit::set_writer(pid_t writer) {
  if (slot_ >= 0) slots[static_cast<std::size_t>(slot_)].writer.store(writer);
}

void clean_up_at_abrupt_exit() noexcept {
  for (Slot& slot : slots) {
    if (!slot.taken.load()) continue;
    if (const pid_t writer = slot.writer.load(); writer > 0) {
      ::kill(writer, SIGKILL);
      ::waitpid(writer, nullptr, 0);  // gone before its file is: it cannot create it again
    }
    // A name that changes while it is copied is copied again (a few tries; past them the other
    // thread is between two files, the old one renamed or removed, the new one not yet made).
    for (int attempt = 0; attempt < 4; ++attempt) {
      const unsigned before = slot.sequence.load();
      if (before % 2 != 0) continue;
      char name[PATH_MAX];
      for (std::size_t i = 0; i < PATH_MAX; ++i) {
        name[i] = slot.name[i].load(std::memory_order_relaxed);
        if (name[i] == '\0') break;
      }
      name[PATH_MAX - 1] = '\0';
      std::atomic_thread_fence(std::memory_order_acquire);
      if (slot.sequence.load() != before) continue;
      if (name[0] != '\0') ::unlink(name);
      break;
    }
  }
}

}  // namespace grayscott::io
