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

// `bytes` of memory, not touched, aligned to `alignment` (a power of two, at least the page size).
// With huge_pages and at least one huge page's worth, aligned to 2 MiB instead and advised to use
// transparent huge pages, which the kernel backs at first touch where it allows: a stream through
// an array with 4 KiB pages needs a new TLB entry every 4 KiB. Free it with std::free. Throws
// std::bad_alloc.
inline void* allocate_host_memory(std::size_t bytes, bool huge_pages,
                                  std::size_t alignment = 4096) {
  constexpr std::size_t huge_page = std::size_t(2) << 20;
  if (huge_pages && bytes >= huge_page) alignment = huge_page;
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* memory = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (memory == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  // Only a hint: where the kernel declines, the memory works the same with small pages.
  if (alignment == huge_page) madvise(memory, rounded, MADV_HUGEPAGE);
#endif
  return memory;
}

template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  // `alignment`: a power of two, at least the page size.
  explicit HostBuffer(std::size_t size, std::size_t alignment = 4096)
      : data_(static_cast<T*>(allocate_host_memory(size * sizeof(T), false, alignment))),
        size_(size) {}
  // A large array (several MiB) in huge pages (allocate_host_memory): a sweep streams through
  // every grid field at each step. Arrays smaller than one huge page get ordinary pages.
  static HostBuffer huge_pages(std::size_t size) {
    HostBuffer buffer;
    buffer.data_.reset(static_cast<T*>(allocate_host_memory(size * sizeof(T), true)));
    buffer.size_ = size;
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
