// The CUDA backend: the state of every member lives on the device from load() on, all steps run
// there, and only captured images travel to the host.
//
// Streams: stepping and the device-side copy of a captured image run on the compute stream; the
// copy of that image to pinned host memory runs on a copy stream, ordered after it by an event, so
// the next steps start at once and overlap the transfer. read_captured() waits for that transfer
// only. A later capture waits (on the device) until the previous transfer has left the staging
// buffer.
//
// Stepping: advance() replays a CUDA graph of the launches for that many steps (one graph per step
// count and buffer parity, built on first use), so a run pays one launch per image. Each launch is
// the fused kernel (fuse_steps per launch, temporal blocking in shared memory) or, with
// fuse_steps = 1, the one-step kernel; both give bitwise identical results. A volume's launch is
// one step of the streaming kernel (volume_kernels.cuh: tiles marching along depth) or, with
// fuse_steps = 1, of the one-thread-per-cell kernel; no launch fuses a volume's steps, and the
// other fuse_steps values run the streaming kernel. Both give bitwise identical results too.
//
// measure_captures(): every capture also runs the statistics kernel (statistics_kernels.cuh) on
// the compute stream, right after the image's steps and before the next image's, and its sums
// travel with the image on the copy stream.
//
// freeze(m) stops stepping member m (a sweep's member that settled): both buffers get its state
// and its blocks of every launch return at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_support.cuh"
#include "engine/cuda/kernels.cuh"
#include "engine/cuda/launch_plan.hpp"
#include "engine/cuda/statistics_kernels.cuh"
#include "engine/cuda/volume_kernels.cuh"
#include "engine/engine.hpp"

namespace grayscott::cuda {

template <class Real>
class CudaEngine final : public Engine<Real> {
 public:
  CudaEngine(const Problem& problem, std::span<const Parameters> member_params,
             const EngineOptions& options);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  std::string backend() const override { return "cuda"; }
  std::size_t members() const override { return members_; }
  void load(std::size_t member, std::span<const Real> u, std::span<const Real> v) override;
  void advance(std::int64_t steps) override;
  void set_rates(std::size_t member, const Parameters& rates) override;
  bool freeze(std::size_t member) override;
  void home_state() override;
  void finish_foreign_work() override;
  void finish_steps() override;
  void prepare(std::int64_t steps) override;
  void capture(FieldSet fields) override;
  void read_captured(std::size_t member, Real* u, Real* v) override;
  bool measure_captures(const std::optional<analysis::HistogramSpec>& histogram,
                        bool change_from_now) override;
  std::vector<analysis::ImageSums> captured_statistics() override;
  typename Engine<Real>::StateView state() override;

  // Steps per launch actually used (1 = the one-step kernel, or any volume's).
  int fuse_steps() const { return fuse_; }
  int device() const { return device_; }

 private:
  // Enqueues the launches for `steps` steps on the compute stream, from buffer `parity`; returns
  // the parity of the buffer holding the result.
  int enqueue_steps(std::int64_t steps, int parity);
  // The graph of `n` steps from buffer `from`, recorded on first use.
  cudaGraphExec_t graph_for(std::int64_t n, int from);
  void launch(const detail::Launch& plan);
  void launch_volume(const detail::Launch& plan);
  // Enqueues the statistics of the current state on the compute stream (measure_captures).
  void launch_statistics();
  void use_device() const;

  int device_;
  Grid grid_;
  Boundary boundary_;
  StencilKind kind_;
  Outside outside_;  // the Fixed boundary's values, kept for set_rates
  detail::StencilWeights<Real> weights_{};
  std::size_t members_;
  std::size_t cells_;
  int fuse_;
  bool volume_streaming_;  // a volume's kernel: streaming, or one thread per cell

  detail::Stream compute_, copy_;
  detail::Event staged_, copied_;
  detail::DeviceBuffer<Real> u_[2], v_[2];  // ping-pong, members * cells each
  detail::DeviceBuffer<Coefficients<Real>> coefficients_;
  // Per member, nonzero once frozen: its kernels' blocks return at once. The graphs read it
  // through the same pointer, so freezing records none again.
  detail::DeviceBuffer<int> frozen_;
  std::vector<int> frozen_host_;
  detail::DeviceBuffer<Real> staged_u_, staged_v_;  // the captured image, on the device
  detail::PinnedBuffer<Real> host_u_, host_v_;      // the captured image, on the host
  std::map<std::pair<std::int64_t, int>, detail::GraphExec> graphs_;
  // measure_captures: the histogram asked for, the previous image's v, each block's sums and the
  // histograms on the device, and their copies on the host.
  std::optional<analysis::HistogramSpec> measuring_;
  bool has_before_ = false;          // before_v_ holds an image's v: the change is measured
  bool captured_has_change_ = false;  // the last capture's statistics measured a change
  int statistics_blocks_ = 0;
  detail::DeviceBuffer<Real> before_v_;
  detail::DeviceBuffer<double> partials_;
  detail::DeviceBuffer<unsigned long long> histograms_;
  detail::PinnedBuffer<double> host_partials_;
  detail::PinnedBuffer<unsigned long long> host_histograms_;
  int current_ = 0;
  FieldSet captured_{false, false};
};

}  // namespace grayscott::cuda
