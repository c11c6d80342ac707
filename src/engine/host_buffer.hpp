// Page-aligned host memory that is allocated but not touched, so that the threads which will
// compute on it can touch it first (first-touch NUMA placement).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>

namespace grayscott {

template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  // `alignment`: a power of two, at least the page size (2 MiB lets the kernel use huge pages).
  explicit HostBuffer(std::size_t size, std::size_t alignment = 4096) : size_(size) {
    const std::size_t bytes = ((size * sizeof(T) + alignment - 1) / alignment) * alignment;
    data_.reset(static_cast<T*>(std::aligned_alloc(alignment, bytes == 0 ? alignment : bytes)));
    if (!data_) throw std::bad_alloc();
  }
  // A large array (several MiB) aligned to 2 MiB and advised to use transparent huge pages, which
  // the kernel backs at first touch where it allows: a sweep streams through every grid field at
  // each step, and with 4 KiB pages it would need a new TLB entry every 4 KiB of each stream.
  // Arrays smaller than one huge page get ordinary pages.
  static HostBuffer huge_pages(std::size_t size) {
    constexpr std::size_t huge_page = std::size_t(2) << 20;
    const std::size_t bytes = size * sizeof(T);
    if (bytes < huge_page) return HostBuffer(size);
    HostBuffer buffer(size, huge_page);
#if defined(MADV_HUGEPAGE)
    // Only a hint: where the kernel declines, the buffer works the same with small pages.
    madvise(buffer.data(), (bytes + huge_page - 1) / huge_page * huge_page, MADV_HUGEPAGE);
#endif
    return buffer;
  }

  // An array with ordinary (4 KiB) pages even where the kernel hands out huge pages unasked. For
  // arrays stepped from a core's cache rather than streamed: with 2 MiB pages, arrays allocated
  // alike start at the same offset of their huge pages, so their lines compete for the same sets
  // of the L2 cache (on an Intel Xeon, a batch of 128x128 members stepped 1.75x slower so); 4 KiB
  // pages scatter them over the cache.
  static HostBuffer small_pages(std::size_t size) {
    HostBuffer buffer(size);
#if defined(MADV_NOHUGEPAGE)
    constexpr std::size_t page = 4096;
    madvise(buffer.data(), (size * sizeof(T) + page - 1) / page * page, MADV_NOHUGEPAGE);
#endif
    return buffer;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::span<T> span() { return {data(), size_}; }
  std::span<const T> span() const { return {data(), size_}; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
  std::size_t size_ = 0;
};

}  // namespace grayscott
