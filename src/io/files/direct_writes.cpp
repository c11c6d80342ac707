#include "io/files/direct_writes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace grayscott::io {

namespace {

// What the file system asks of a direct write's memory and offset (Linux 6.1 and later say so
// through statx); 4096, which every file system that takes direct writes accepts, where it is not
// said.
std::size_t direct_alignment(int fd) {
  std::size_t alignment = 4096;
#if defined(STATX_DIOALIGN)
  struct statx info {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &info) == 0 &&
      (info.stx_mask & STATX_DIOALIGN) != 0 && info.stx_dio_offset_align > 0) {
    alignment = std::max<std::size_t>(info.stx_dio_offset_align, info.stx_dio_mem_align);
  }
#endif
  return alignment;
}

bool turned_off() {
  const char* setting = std::getenv("GRAYSCOTT_DIRECT_IO");
  return setting != nullptr && std::string_view(setting) == "0";
}

}  // namespace

DirectWrites::DirectWrites(const std::filesystem::path& path) {
#if defined(O_DIRECT)
  if (turned_off()) return;
  fd_ = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (fd_ >= 0) alignment_ = direct_alignment(fd_);
#else
  (void)path;
#endif
}

DirectWrites::~DirectWrites() {
  if (fd_ >= 0) ::close(fd_);
}

DirectWrites::DirectWrites(DirectWrites&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), alignment_(other.alignment_) {}

DirectWrites& DirectWrites::operator=(DirectWrites&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    alignment_ = other.alignment_;
  }
  return *this;
}

bool DirectWrites::accepts(const void* data, std::size_t bytes, std::uint64_t offset) const {
  return fd_ >= 0 && bytes > 0 && reinterpret_cast<std::uintptr_t>(data) % alignment_ == 0 &&
         bytes % alignment_ == 0 && offset % alignment_ == 0;
}

bool DirectWrites::write(const void* data, std::size_t bytes, std::uint64_t offset,
                         const std::string& what) {
  if (!accepts(data, bytes, offset)) return false;
  const auto* from = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pwrite(fd_, from + done, bytes - done, static_cast<off_t>(offset + done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && done == 0) {
      // The file system opened the file for direct writes but refuses them: ask no more.
      ::close(std::exchange(fd_, -1));
      return false;
    }
    throw std::runtime_error(what + ": " +
                             (n < 0 ? std::strerror(errno) : "No space left on device"));
  }
  return true;
}

}  // namespace grayscott::io
