// Loaded with LD_PRELOAD into an MPI rank, kills that rank (SIGKILL) just before its Nth write to
// a file: the moment a batch system, a node failure or an out-of-memory kill may choose, made
// repeatable. Counting every positioned write (the calls MPI-IO and HDF5 write files with) lets a
// test stop a rank inside a flush, between two of its writes, which a signal sent from outside
// hits only by chance.
//
//   GRAYSCOTT_TEST_KILL_RANK=R GRAYSCOTT_TEST_KILL_AT_WRITE=N: rank R dies before its Nth write.
//   GRAYSCOTT_TEST_COUNT_WRITES=FILE: every rank appends "RANK WRITES" to FILE when it exits.
#include <dlfcn.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace {

long writes = 0;

int this_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return -1;
}

void before_write(int fd) {
  if (fd < 3) return;  // the terminal: not the file under test
  ++writes;
  static const char* rank = std::getenv("GRAYSCOTT_TEST_KILL_RANK");
  static const char* at = std::getenv("GRAYSCOTT_TEST_KILL_AT_WRITE");
  if (rank && at && std::atoi(rank) == this_rank() && writes == std::atol(at)) {
    ::kill(::getpid(), SIGKILL);
  }
}

template <typename Function>
Function next(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

struct Report {
  ~Report() {
    if (const char* path = std::getenv("GRAYSCOTT_TEST_COUNT_WRITES")) {
      if (std::FILE* out = std::fopen(path, "a")) {
        std::fprintf(out, "%d %ld\n", this_rank(), writes);
        std::fclose(out);
      }
    }
  }
} report;

}  // namespace

extern "C" {

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  before_write(fd);
  return real(fd, data, size, offset);
}

ssize_t pwrite64(int fd, const void* data, size_t size, off_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite64");
  before_write(fd);
  return real(fd, data, size, offset);
}

ssize_t pwritev(int fd, const struct iovec* parts, int count, off_t offset) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev");
  before_write(fd);
  return real(fd, parts, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec* parts, int count, off_t offset) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev64");
  before_write(fd);
  return real(fd, parts, count, offset);
}

}  // extern "C"
