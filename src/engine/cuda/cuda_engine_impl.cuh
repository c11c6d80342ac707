// CudaEngine's member functions; included by one source per precision, which instantiates them.
#pragma once

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_engine.cuh"

namespace grayscott::cuda {

template <class Real>
CudaEngine<Real>::CudaEngine(const Problem& problem, std::span<const Parameters> member_params,
                             const EngineOptions& options)
    : device_(detail::select_device(options.device)),
      grid_(problem.grid),
      boundary_(problem.boundary),
      kind_(problem.stencil.kind),
      outside_(problem.outside),
      members_(member_params.size()),
      cells_(static_cast<std::size_t>(problem.grid.cells())),
      // A volume runs one step per launch: the streaming kernel, or with fuse_steps = 1 the
      // one-thread-per-cell kernel.
      fuse_(problem.grid.volume() ? 1 : detail::steps_per_launch(options.fuse_steps)),
      volume_streaming_(options.fuse_steps != 1) {
  if (members_ == 0) throw InvalidInput("an engine needs at least one member");
  if (const std::string refusal = refuses(grid_, members_); !refusal.empty()) {
    throw InvalidInput(refusal);
  }
  if (options.fuse_steps < 0 || options.fuse_steps > detail::fused_max_steps) {
    throw InvalidInput(
        "fuse: the CUDA backend fuses 1 to " + std::to_string(detail::fused_max_steps) +
        " steps per launch (0: its best), got " + std::to_string(options.fuse_steps));
  }
  for (int k = 0; k < 9; ++k) weights_.w[k] = static_cast<Real>(problem.stencil.weights[k]);

  const std::size_t values = members_ * cells_;
  for (int b = 0; b < 2; ++b) {
    u_[b] = detail::DeviceBuffer<Real>(values);
    v_[b] = detail::DeviceBuffer<Real>(values);
    // A member never loaded holds zeros, as on the CPU, rather than whatever the memory held.
    detail::check(cudaMemsetAsync(u_[b].data(), 0, u_[b].bytes(), compute_.get()),
                  "clearing state");
    detail::check(cudaMemsetAsync(v_[b].data(), 0, v_[b].bytes(), compute_.get()),
                  "clearing state");
  }
  std::vector<Coefficients<Real>> coefficients(members_);
  for (std::size_t m = 0; m < members_; ++m) {
    coefficients[m] =
        Coefficients<Real>::from(member_params[m], problem.outside, problem.stencil.kind);
  }
  coefficients_ = detail::DeviceBuffer<Coefficients<Real>>(members_);
  detail::check(cudaMemcpyAsync(coefficients_.data(), coefficients.data(),
                                members_ * sizeof(Coefficients<Real>), cudaMemcpyHostToDevice,
                                compute_.get()),
                "uploading coefficients");
  frozen_ = detail::DeviceBuffer<int>(members_);
  frozen_host_.assign(members_, 0);
  detail::check(cudaMemsetAsync(frozen_.data(), 0, frozen_.bytes(), compute_.get()),
                "clearing the frozen members");
  detail::check(cudaStreamSynchronize(compute_.get()), "initialising the device state");
}

template <class Real>
CudaEngine<Real>::~CudaEngine() {
  // Work still queued reads and writes the buffers about to be freed.
  (void)cudaSetDevice(device_);
  (void)cudaStreamSynchronize(copy_.get());
  (void)cudaStreamSynchronize(compute_.get());
}

template <class Real>
void CudaEngine<Real>::use_device() const {
  detail::check(cudaSetDevice(device_), "selecting the device");
}

template <class Real>
void CudaEngine<Real>::load(std::size_t member, std::span<const Real> u, std::span<const Real> v) {
  if (member >= members_) throw std::out_of_range("load: no member " + std::to_string(member));
  if (u.size() != cells_ || v.size() != cells_) {
    throw InvalidInput("load: expected " + std::to_string(cells_) + " values per field");
  }
  use_device();
  const std::size_t offset = member * cells_, bytes = cells_ * sizeof(Real);
  auto stream = compute_.get();
  detail::check(cudaMemcpyAsync(u_[current_].data() + offset, u.data(), bytes,
                                cudaMemcpyHostToDevice, stream),
                "uploading u");
  detail::check(cudaMemcpyAsync(v_[current_].data() + offset, v.data(), bytes,
                                cudaMemcpyHostToDevice, stream),
                "uploading v");
  detail::check(cudaStreamSynchronize(stream), "uploading the state");
}

template <class Real>
void CudaEngine<Real>::launch(const detail::Launch& plan) {
  const int parity = plan.parity;
  if (plan.volume) {
    launch_volume(plan);
    return;
  }
  detail::StepArgs<Real> args{u_[parity].data(),
                              v_[parity].data(),
                              u_[1 - parity].data(),
                              v_[1 - parity].data(),
                              coefficients_.data(),
                              weights_,
                              static_cast<int>(grid_.rows),
                              static_cast<int>(grid_.cols),
                              frozen_.data()};
  cudaStream_t stream = compute_.get();
  const dim3 grid(plan.grid.x, plan.grid.y, plan.grid.z), block(plan.block.x, plan.block.y);
  dispatch_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
    if (plan.fused()) {
      detail::fused_kernel<K, B, Real><<<grid, block, 0, stream>>>(args, plan.steps);
    } else {
      detail::step_kernel<K, B, Real><<<grid, block, 0, stream>>>(args);
    }
  });
  detail::check(cudaGetLastError(), "launching a step kernel");
}

template <class Real>
void CudaEngine<Real>::launch_volume(const detail::Launch& plan) {
  const int parity = plan.parity;
  const detail::VolumeArgs<Real> args{u_[parity].data(),
                                      v_[parity].data(),
                                      u_[1 - parity].data(),
                                      v_[1 - parity].data(),
                                      coefficients_.data(),
                                      static_cast<int>(grid_.depth),
                                      static_cast<int>(grid_.rows),
                                      static_cast<int>(grid_.cols),
                                      frozen_.data()};
  cudaStream_t stream = compute_.get();
  const dim3 grid(plan.grid.x, plan.grid.y, plan.grid.z), block(plan.block.x, plan.block.y);
  detail::dispatch_volume_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
    if (plan.streaming()) {
      detail::volume_stream_kernel<K, B, Real><<<grid, block, 0, stream>>>(args, plan.slab);
    } else {
      detail::volume_step_kernel<K, B, Real><<<grid, block, 0, stream>>>(args);
    }
  });
  detail::check(cudaGetLastError(), "launching a volume's step kernel");
}

template <class Real>
cudaGraphExec_t CudaEngine<Real>::graph_for(std::int64_t n, int from) {
  const auto key = std::make_pair(n, from);
  if (const auto found = graphs_.find(key); found != graphs_.end()) return found->second.get();
  if (graphs_.size() >= 16) graphs_.clear();  // step counts vary: keep the cache small
  cudaStream_t stream = compute_.get();
  detail::check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                "recording a graph");
  cudaGraph_t raw = nullptr;
  try {
    const auto each = [&](const detail::Launch& plan) { launch(plan); };
    if (grid_.volume()) {
      detail::for_each_volume_launch(n, volume_streaming_, from, grid_.depth, grid_.rows,
                                     grid_.cols, members_, each);
    } else {
      detail::for_each_launch(n, fuse_, from, grid_.rows, grid_.cols, members_, each);
    }
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &raw);
    if (raw) (void)cudaGraphDestroy(raw);
    throw;
  }
  detail::check(cudaStreamEndCapture(stream, &raw), "recording a graph");
  const detail::Graph graph(raw);
  cudaGraphExec_t exec = nullptr;
  detail::check(cudaGraphInstantiate(&exec, graph.get(), 0), "instantiating a graph");
  return graphs_.emplace(key, detail::GraphExec(exec)).first->second.get();
}

template <class Real>
int CudaEngine<Real>::enqueue_steps(std::int64_t steps, int parity) {
  return detail::for_each_graph(steps, fuse_, parity, [&](std::int64_t n, int from) {
    detail::check(cudaGraphLaunch(graph_for(n, from), compute_.get()), "launching steps");
  });
}

template <class Real>
void CudaEngine<Real>::advance(std::int64_t steps) {
  if (steps <= 0) return;
  use_device();
  current_ = enqueue_steps(steps, current_);
}

template <class Real>
void CudaEngine<Real>::set_rates(std::size_t member, const Parameters& rates) {
  if (member >= members_) throw std::out_of_range("set_rates: no member " + std::to_string(member));
  rates.validate();
  use_device();
  // Ordered on the compute stream after the steps queued so far; the graphs read the coefficients
  // through the same pointer, so they need no recording again. The host value must outlive the
  // copy: the stream is synchronised before it goes.
  const Coefficients<Real> coefficients = Coefficients<Real>::from(rates, outside_, kind_);
  detail::check(cudaMemcpyAsync(coefficients_.data() + member, &coefficients,
                                sizeof(Coefficients<Real>), cudaMemcpyHostToDevice, compute_.get()),
                "uploading coefficients");
  detail::check(cudaStreamSynchronize(compute_.get()), "uploading coefficients");
}

template <class Real>
bool CudaEngine<Real>::freeze(std::size_t member) {
  if (member >= members_) return false;
  if (frozen_host_[member] != 0) return true;
  use_device();
  // Ordered on the compute stream after the steps queued so far: the other buffer gets the
  // member's current state, then its flag is set; the stream is synchronised before the host
  // value the flag is copied from can change.
  const std::size_t offset = member * cells_, bytes = cells_ * sizeof(Real);
  cudaStream_t stream = compute_.get();
  detail::check(cudaMemcpyAsync(u_[1 - current_].data() + offset, u_[current_].data() + offset,
                                bytes, cudaMemcpyDeviceToDevice, stream),
                "keeping a frozen member's u");
  detail::check(cudaMemcpyAsync(v_[1 - current_].data() + offset, v_[current_].data() + offset,
                                bytes, cudaMemcpyDeviceToDevice, stream),
                "keeping a frozen member's v");
  frozen_host_[member] = 1;
  detail::check(cudaMemcpyAsync(frozen_.data() + member, &frozen_host_[member], sizeof(int),
                                cudaMemcpyHostToDevice, stream),
                "freezing a member");
  detail::check(cudaStreamSynchronize(stream), "freezing a member");
  return true;
}

template <class Real>
void CudaEngine<Real>::home_state() {
  if (current_ == 0) return;
  use_device();
  const std::size_t bytes = members_ * cells_ * sizeof(Real);
  detail::check(
      cudaMemcpyAsync(u_[0].data(), u_[1].data(), bytes, cudaMemcpyDeviceToDevice, compute_.get()),
      "moving u to its first buffer");
  detail::check(
      cudaMemcpyAsync(v_[0].data(), v_[1].data(), bytes, cudaMemcpyDeviceToDevice, compute_.get()),
      "moving v to its first buffer");
  current_ = 0;
}

template <class Real>
void CudaEngine<Real>::finish_foreign_work() {
  use_device();
  // Another library's stream is not known here: the whole device's queued work is waited for.
  detail::check(cudaDeviceSynchronize(), "waiting for the work queued through views");
}

template <class Real>
void CudaEngine<Real>::finish_steps() {
  use_device();
  detail::check(cudaStreamSynchronize(compute_.get()), "waiting for the steps");
}

template <class Real>
void CudaEngine<Real>::prepare(std::int64_t steps) {
  if (steps <= 0) return;
  use_device();
  // From either buffer: an advance starts from whichever holds the state then.
  for (int parity = 0; parity < 2; ++parity) {
    detail::for_each_graph(steps, fuse_, parity,
                           [&](std::int64_t n, int from) { (void)graph_for(n, from); });
  }
}

template <class Real>
void CudaEngine<Real>::capture(FieldSet fields) {
  use_device();
  const std::size_t values = members_ * cells_, bytes = values * sizeof(Real);
  if (fields.u && staged_u_.size() == 0) {
    staged_u_ = detail::DeviceBuffer<Real>(values);
    host_u_ = detail::PinnedBuffer<Real>(values);
  }
  if (fields.v && staged_v_.size() == 0) {
    staged_v_ = detail::DeviceBuffer<Real>(values);
    host_v_ = detail::PinnedBuffer<Real>(values);
  }
  cudaStream_t compute = compute_.get(), copy = copy_.get();
  // The previous image must have left the staging buffers before they are overwritten.
  detail::check(cudaStreamWaitEvent(compute, copied_.get(), 0), "ordering the capture");
  if (fields.u) {
    detail::check(cudaMemcpyAsync(staged_u_.data(), u_[current_].data(), bytes,
                                  cudaMemcpyDeviceToDevice, compute),
                  "staging u");
  }
  if (fields.v) {
    detail::check(cudaMemcpyAsync(staged_v_.data(), v_[current_].data(), bytes,
                                  cudaMemcpyDeviceToDevice, compute),
                  "staging v");
  }
  if (measuring_) launch_statistics();
  detail::check(cudaEventRecord(staged_.get(), compute), "ordering the capture");
  detail::check(cudaStreamWaitEvent(copy, staged_.get(), 0), "ordering the capture");
  if (measuring_) {
    detail::check(cudaMemcpyAsync(host_partials_.data(), partials_.data(),
                                  partials_.bytes(), cudaMemcpyDeviceToHost, copy),
                  "copying the statistics to the host");
    detail::check(cudaMemcpyAsync(host_histograms_.data(), histograms_.data(),
                                  histograms_.bytes(), cudaMemcpyDeviceToHost, copy),
                  "copying the histograms to the host");
  }
  if (fields.u) {
    detail::check(
        cudaMemcpyAsync(host_u_.data(), staged_u_.data(), bytes, cudaMemcpyDeviceToHost, copy),
        "copying u to the host");
  }
  if (fields.v) {
    detail::check(
        cudaMemcpyAsync(host_v_.data(), staged_v_.data(), bytes, cudaMemcpyDeviceToHost, copy),
        "copying v to the host");
  }
  detail::check(cudaEventRecord(copied_.get(), copy), "ordering the capture");
  captured_ = fields;
}

template <class Real>
void CudaEngine<Real>::read_captured(std::size_t member, Real* u, Real* v) {
  if (member >= members_)
    throw std::out_of_range("read_captured: no member " + std::to_string(member));
  use_device();
  // Waits for this image's transfer only; the steps queued after it keep running.
  detail::check(cudaEventSynchronize(copied_.get()), "waiting for the captured image");
  const std::size_t offset = member * cells_, bytes = cells_ * sizeof(Real);
  if (u && captured_.u) std::memcpy(u, host_u_.data() + offset, bytes);
  if (v && captured_.v) std::memcpy(v, host_v_.data() + offset, bytes);
}

template <class Real>
bool CudaEngine<Real>::measure_captures(const std::optional<analysis::HistogramSpec>& histogram,
                                        bool change_from_now) {
  if (!histogram) {
    measuring_.reset();
    return false;
  }
  const analysis::HistogramSpec& spec = *histogram;
  spec.validate();
  use_device();
  measuring_ = spec;
  statistics_blocks_ = detail::statistics_blocks(cells_);
  const std::size_t partial_values =
      members_ * static_cast<std::size_t>(statistics_blocks_) * detail::statistics_values;
  const std::size_t counts = members_ * static_cast<std::size_t>(spec.bins);
  partials_ = detail::DeviceBuffer<double>(partial_values);
  host_partials_ = detail::PinnedBuffer<double>(partial_values);
  histograms_ = detail::DeviceBuffer<unsigned long long>(counts);
  host_histograms_ = detail::PinnedBuffer<unsigned long long>(counts);
  if (before_v_.size() == 0) before_v_ = detail::DeviceBuffer<Real>(members_ * cells_);
  has_before_ = change_from_now;
  if (change_from_now) {
    // After the steps queued so far: the state they leave is the one the first image changed from.
    detail::check(cudaMemcpyAsync(before_v_.data(), v_[current_].data(), before_v_.bytes(),
                                  cudaMemcpyDeviceToDevice, compute_.get()),
                  "keeping v for the statistics' change");
  }
  return true;
}

template <class Real>
void CudaEngine<Real>::launch_statistics() {
  const analysis::HistogramSpec& spec = *measuring_;
  cudaStream_t stream = compute_.get();
  detail::check(cudaMemsetAsync(histograms_.data(), 0, histograms_.bytes(), stream),
                "clearing the histograms");
  const detail::StatisticsArgs<Real> args{u_[current_].data(),
                                          v_[current_].data(),
                                          has_before_ ? before_v_.data() : nullptr,
                                          partials_.data(),
                                          histograms_.data(),
                                          cells_,
                                          spec.bins,
                                          spec.low,
                                          spec.high,
                                          analysis::u_shift,
                                          analysis::v_shift};
  const dim3 grid(static_cast<unsigned>(statistics_blocks_), static_cast<unsigned>(members_));
  detail::statistics_kernel<Real><<<grid, detail::statistics_block, 0, stream>>>(args);
  detail::check(cudaGetLastError(), "launching the statistics kernel");
  captured_has_change_ = has_before_;
  if (!has_before_) {
    // This image is the next one's "before": the kernel measured no change, so it kept no v.
    detail::check(cudaMemcpyAsync(before_v_.data(), v_[current_].data(), before_v_.bytes(),
                                  cudaMemcpyDeviceToDevice, stream),
                  "keeping v for the statistics' change");
    has_before_ = true;
  }
}

template <class Real>
std::vector<analysis::ImageSums> CudaEngine<Real>::captured_statistics() {
  if (!measuring_) return {};
  use_device();
  detail::check(cudaEventSynchronize(copied_.get()), "waiting for the captured statistics");
  const int bins = measuring_->bins;
  const std::size_t per_member =
      static_cast<std::size_t>(statistics_blocks_) * detail::statistics_values;
  std::vector<analysis::ImageSums> sums;
  sums.reserve(members_);
  for (std::size_t m = 0; m < members_; ++m) {
    sums.push_back(detail::combine_partials(host_partials_.data() + m * per_member,
                                            statistics_blocks_,
                                            host_histograms_.data() + m * bins, bins, cells_,
                                            captured_has_change_));
  }
  return sums;
}

template <class Real>
typename Engine<Real>::StateView CudaEngine<Real>::state() {
  use_device();
  // The caller reads or writes the buffers from another stream or the host: the steps queued on
  // the compute stream must be done first.
  detail::check(cudaStreamSynchronize(compute_.get()), "waiting for the steps");
  return {u_[current_].data(), v_[current_].data(), cells_, true, device_};
}

template <class Real>
std::unique_ptr<Engine<Real>> make_engine(const Problem& problem,
                                          std::span<const Parameters> member_params,
                                          const EngineOptions& options) {
  problem.validate();
  return std::make_unique<CudaEngine<Real>>(problem, member_params, options);
}

}  // namespace grayscott::cuda
