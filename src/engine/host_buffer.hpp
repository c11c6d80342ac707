// Page-aligned host memory that is allocated but not touched, so that the threads which will
// compute on it can touch it first (first-touch NUMA placement).
#pragma once

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
