// A bounded pool of image buffers between the stepping thread and the writer thread. The stepping
// side waits for a free buffer when the writer falls behind: memory stays bounded and no image is
// ever dropped.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/statistics.hpp"
#include "engine/host_buffer.hpp"
#include "model/model.hpp"

namespace grayscott::pipeline {

// An image buffer's memory: on a 4 KiB boundary, so that an image can go from its buffer straight
// to the disk (io/files/direct_writes.hpp asks its memory to be aligned as the disk's blocks are),
// in huge pages where it is large (one page fault per 2 MiB when a buffer is first filled), and
// left uninitialised by resize(): every value is written (gather) before it is read.
template <class T>
struct ImageMemory {
  using value_type = T;
  ImageMemory() = default;
  template <class U>
  ImageMemory(const ImageMemory<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_host_memory(n * sizeof(T), true)); }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialised: no zeros written
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const ImageMemory<U>&) const {
    return true;
  }
};

template <class Real>
using ImageBuffer = std::vector<Real, ImageMemory<Real>>;

template <class Real>
struct ImageSlot {
  ImageBuffer<Real> u, v;
  std::int64_t index = 0;   // image number
  std::int64_t step = 0;    // steps done when it was taken
  bool checkpoint = false;  // u and v both hold the whole state: save it to resume from
  bool durable = false;     // make everything written so far survive a crash before the next
  bool settled = false;     // the run settled at this image: its state is the final one
  FieldSet known_finite{false, false};  // fields found all finite while they were copied in
  // Each member's statistics of this image, when the loop computes them (LoopPlan::statistics).
  std::vector<analysis::ImageStatistics> statistics;
  // The members that settled at this image (LoopPlan::steady).
  std::vector<std::size_t> settled_members;
};

template <class Real>
class ImageQueue {
 public:
  ImageQueue(std::size_t capacity, std::size_t cells, bool with_u, bool with_v)
      : capacity_(capacity) {
    for (std::size_t i = 0; i < capacity; ++i) {
      ImageSlot<Real> slot;
      if (with_u) slot.u.resize(cells);
      if (with_v) slot.v.resize(cells);
      free_.push_back(std::move(slot));
    }
  }

  // Producer: a buffer to fill (waits while all are in flight); nullopt once closed.
  std::optional<ImageSlot<Real>> acquire() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty() || closed_; });
    if (closed_) return std::nullopt;
    ImageSlot<Real> slot = std::move(free_.front());
    free_.pop_front();
    return slot;
  }
  void push(ImageSlot<Real> slot) {
    {
      std::lock_guard lock(mutex_);
      full_.push_back(std::move(slot));
    }
    changed_.notify_all();
  }
  // Consumer: the next image, or nullopt when the producer is done and the queue is empty.
  std::optional<ImageSlot<Real>> pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !full_.empty() || done_ || closed_; });
    if (full_.empty()) return std::nullopt;
    ImageSlot<Real> slot = std::move(full_.front());
    full_.pop_front();
    return slot;
  }
  void release(ImageSlot<Real> slot) {
    {
      std::lock_guard lock(mutex_);
      free_.push_back(std::move(slot));
    }
    changed_.notify_all();
  }
  // Producer: no more images.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
  }
  // Either side: stop now (an error); waiting calls return nullopt.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }
  // Producer: waits until the consumer has handed every buffer back (or the queue was closed).
  void drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return free_.size() == capacity_ || closed_; });
  }
  // Producer: drain(), then frees the buffers of every idle slot but the next one acquire() hands
  // out, chosen among those that hold buffers already (memory touched again costs time).
  void drain_and_free_buffers() {
    drain();
    std::lock_guard lock(mutex_);
    const auto held = [](const ImageSlot<Real>& slot) { return slot.u.size() + slot.v.size(); };
    auto fullest = std::max_element(free_.begin(), free_.end(), [&](const auto& a, const auto& b) {
      return held(a) < held(b);
    });
    if (fullest == free_.end()) return;
    std::iter_swap(free_.begin(), fullest);
    for (auto slot = std::next(free_.begin()); slot != free_.end(); ++slot) {
      ImageBuffer<Real>().swap(slot->u);
      ImageBuffer<Real>().swap(slot->v);
    }
  }
  std::size_t in_flight() {
    std::lock_guard lock(mutex_);
    return full_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<ImageSlot<Real>> free_, full_;
  std::size_t capacity_ = 0;
  bool done_ = false, closed_ = false;
};

}  // namespace grayscott::pipeline
