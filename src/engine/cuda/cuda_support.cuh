// What every CUDA source of the backend shares: a checked call that turns any CUDA error into a
// one-line std::runtime_error, and RAII owners for device memory, pinned host memory, streams,
// events and graphs. Destructors never throw: a failure while releasing is ignored, since the
// error that matters has already been reported by the call that caused it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace grayscott::cuda::detail {

// Throws "CUDA: <what>: <the runtime's message>" for any status but cudaSuccess.
inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so that later calls are not blamed for it
  throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
}

// Makes device `ordinal` current for this thread after checking that it exists and can run this
// build's kernels; throws InvalidInput for an ordinal with no device, std::runtime_error when
// CUDA is unusable. Returns the ordinal.
int select_device(int ordinal);

inline std::string mebibytes(std::size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// Device memory for `size` values of T.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    if (size == 0) return;
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, size * sizeof(T));
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      std::size_t free_bytes = 0, total_bytes = 0;
      (void)cudaMemGetInfo(&free_bytes, &total_bytes);
      throw std::runtime_error("CUDA: out of device memory: needed " + mebibytes(size * sizeof(T)) +
                               " more, " + mebibytes(free_bytes) + " free of " +
                               mebibytes(total_bytes));
    }
    check(status, "allocating device memory");
    data_ = static_cast<T*>(p);
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = o.size_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  void release() {
    if (data_) (void)cudaFree(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Page-locked host memory, which the copy engines read and write without a bounce buffer.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t size) : size_(size) {
    if (size == 0) return;
    void* p = nullptr;
    check(cudaMallocHost(&p, size * sizeof(T)), "allocating pinned host memory");
    data_ = static_cast<T*>(p);
  }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = o.size_;
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (data_) (void)cudaFreeHost(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// A non-blocking stream (it does not wait for the legacy default stream).
class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "creating a stream"); }
  ~Stream() {
    if (s_) (void)cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// An event for ordering streams and waiting on the host; timing off unless asked.
class Event {
 public:
  explicit Event(bool timing = false) {
    check(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming),
          "creating an event");
  }
  ~Event() {
    if (e_) (void)cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// An instantiated CUDA graph, replayed with one launch.
class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(cudaGraphExec_t e) : e_(e) {}
  ~GraphExec() { release(); }
  GraphExec(GraphExec&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    if (this != &o) {
      release();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const { return e_; }

 private:
  void release() {
    if (e_) (void)cudaGraphExecDestroy(e_);
    e_ = nullptr;
  }
  cudaGraphExec_t e_ = nullptr;
};

class Graph {
 public:
  explicit Graph(cudaGraph_t g) : g_(g) {}
  ~Graph() {
    if (g_) (void)cudaGraphDestroy(g_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  cudaGraph_t get() const { return g_; }

 private:
  cudaGraph_t g_ = nullptr;
};

}  // namespace grayscott::cuda::detail
