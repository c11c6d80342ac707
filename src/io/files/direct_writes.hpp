// Large blocks of a file written straight from memory to the disk (O_DIRECT), past the operating
// system's page cache. An image written the ordinary way is first copied by the kernel into cache
// pages it must allocate, then written out by the kernel's flusher threads: CPU time that, on a
// machine whose every core steps the simulation, comes out of the stepping. Written directly, the
// disk reads the image from the buffer it lies in, and the CPU only hands it over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace grayscott::io {

class DirectWrites {
 public:
  // Direct writes declined: every write() returns false.
  DirectWrites() = default;
  // Opens `path` (which must exist) for direct writes, if its file system takes them and
  // GRAYSCOTT_DIRECT_IO is not "0"; otherwise every write() returns false.
  explicit DirectWrites(const std::filesystem::path& path);
  ~DirectWrites();
  DirectWrites(DirectWrites&& other) noexcept;
  DirectWrites& operator=(DirectWrites&& other) noexcept;
  DirectWrites(const DirectWrites&) = delete;
  DirectWrites& operator=(const DirectWrites&) = delete;

  bool usable() const { return fd_ >= 0; }
  // The alignment the file system asks of a direct write's memory, file offset and length.
  std::size_t alignment() const { return alignment_; }
  // Whether a block at `data`, `bytes` long, to go at `offset` in the file, can be written
  // directly.
  bool accepts(const void* data, std::size_t bytes, std::uint64_t offset) const;
  // Writes the block and returns true, or returns false having written nothing when it cannot be
  // written directly (the caller then writes it the ordinary way; a file system that turns out to
  // refuse direct writes is not asked again). Throws std::runtime_error "WHAT: REASON" when the
  // write fails (e.g. "No space left on device").
  bool write(const void* data, std::size_t bytes, std::uint64_t offset, const std::string& what);

 private:
  int fd_ = -1;
  std::size_t alignment_ = 4096;
};

}  // namespace grayscott::io
