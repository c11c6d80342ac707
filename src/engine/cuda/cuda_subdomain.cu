// One block of a distributed grid on one device (engine/subdomain.hpp): the block lives in device
// memory from load() on, and only halo messages and the images read for output leave it. A
// plane's block or a volume's (planes of rows, a ghost plane before and after, its halo one cell
// deep and exchanged every step).
//
// Streams: steps run on the compute stream. Halo packing and unpacking run on a halo stream: the
// pack waits (an event) for the step before it, then gathers every message into one device area
// and, without a CUDA-aware MPI, copies that area to pinned host memory in one transfer. The
// unpack copies the received messages back and scatters them into the ghost frame while the
// compute stream is still busy with the interior (which reads no ghost cell of theirs: only those
// of the messages a block sends itself, unpacked before it); the steps that need the ghosts wait
// for it through a second event.
#include <algorithm>
#include <climits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_support.cuh"
#include "engine/cuda/subdomain_kernels.cuh"
#include "engine/cuda/volume_kernels.cuh"  // dispatch_volume_stencil_and_boundary

namespace grayscott::cuda {

namespace {

using detail::check;

template <class Real>
class CudaSubdomain final : public SubdomainStepper<Real> {
 public:
  CudaSubdomain(const Problem& problem, const LocalLayout& layout, GlobalEdges edges, int ordinal,
                bool messages_in_device_memory)
      : device_(detail::select_device(ordinal)),
        layout_(layout),
        edges_(edges),
        boundary_(problem.boundary),
        kind_(problem.stencil.kind),
        coefficients_(
            Coefficients<Real>::from(problem.params, problem.outside, problem.stencil.kind)),
        device_messages_(messages_in_device_memory) {
    check_block_layout(problem.grid, layout);
    if (layout.padded_rows() > INT_MAX / 2 || layout.stride() > INT_MAX / 2 ||
        layout.padded_planes() > INT_MAX / 2) {
      throw InvalidInput("the CUDA backend takes blocks of at most 2^30 planes, rows and columns");
    }
    // The launch grid's y limit, checked here rather than at the first step.
    if (detail::blocks(layout.padded_rows(), detail::region_block_y) > 65535) {
      throw InvalidInput("the CUDA backend takes blocks of at most " +
                         std::to_string(65535LL * detail::region_block_y) +
                         " rows (ghost rows included): use more ranks along the rows");
    }
    for (int k = 0; k < 9; ++k) weights_.w[k] = static_cast<Real>(problem.stencil.weights[k]);
    for (int b = 0; b < 2; ++b) {
      u_[b] = detail::DeviceBuffer<Real>(layout.padded_cells());
      v_[b] = detail::DeviceBuffer<Real>(layout.padded_cells());
      // Ghost cells beyond a non-periodic edge are never received nor read; zero keeps them
      // defined, as on the CPU.
      check(cudaMemsetAsync(u_[b].data(), 0, u_[b].bytes(), compute_.get()), "clearing the block");
      check(cudaMemsetAsync(v_[b].data(), 0, v_[b].bytes(), compute_.get()), "clearing the block");
    }
    check(cudaStreamSynchronize(compute_.get()), "clearing the block");
  }

  ~CudaSubdomain() override {
    // Work still queued reads and writes the buffers about to be freed.
    (void)cudaSetDevice(device_);
    (void)cudaStreamSynchronize(halo_.get());
    (void)cudaStreamSynchronize(compute_.get());
  }

  void load(std::span<const Real> u, std::span<const Real> v) override {
    const Region owned{0, layout_.rows, 0, layout_.cols, 0, layout_.volume() ? layout_.planes : 1};
    const auto cells = static_cast<std::size_t>(owned.cells());
    if (u.size() != cells || v.size() != cells) {
      throw InvalidInput("load: expected " + std::to_string(cells) + " values per field");
    }
    use_device();
    copy_region(owned, u.data(), v.data(), cudaMemcpyHostToDevice);
  }

  void read(const Region& region, Real* u, Real* v) override {
    use_device();
    copy_region(region, u, v, cudaMemcpyDeviceToHost);
  }

  void plan_halos(const HaloPlan& plan) override {
    use_device();
    send_table_ = detail::message_table(plan.send);
    receive_regions_ = plan.receive;
    const std::size_t send_values = message_offset(plan.send, plan.send.size());
    const std::size_t receive_values = message_offset(plan.receive, plan.receive.size());
    send_device_ = detail::DeviceBuffer<Real>(send_values);
    receive_device_ = detail::DeviceBuffer<Real>(receive_values);
    if (!device_messages_) {
      send_host_ = detail::PinnedBuffer<Real>(send_values);
      receive_host_ = detail::PinnedBuffer<Real>(receive_values);
    }
  }

  Real* send_area() override { return device_messages_ ? send_device_.data() : send_host_.data(); }
  Real* receive_area() override {
    return device_messages_ ? receive_device_.data() : receive_host_.data();
  }
  bool messages_in_device_memory() const override { return device_messages_; }

  void pack_halos() override {
    if (send_table_.count == 0) return;
    use_device();
    auto halo = halo_.get();
    check(cudaEventRecord(stepped_.get(), compute_.get()), "ordering the halo after the step");
    check(cudaStreamWaitEvent(halo, stepped_.get(), 0), "ordering the halo after the step");
    launch_messages<true>(send_table_, send_device_.data());
    if (!device_messages_) {
      check(cudaMemcpyAsync(send_host_.data(), send_device_.data(), send_device_.bytes(),
                            cudaMemcpyDeviceToHost, halo),
            "copying halo messages to the host");
    }
    check(cudaStreamSynchronize(halo), "packing halo messages");
  }

  void unpack_halos(std::size_t first, std::size_t last) override {
    if (first >= last) return;
    use_device();
    auto halo = halo_.get();
    // Messages [first, last) lie back to back in the receive area, from `begin`.
    const std::size_t begin = message_offset(receive_regions_, first);
    const std::size_t end = message_offset(receive_regions_, last);
    if (!device_messages_) {
      check(cudaMemcpyAsync(receive_device_.data() + begin, receive_host_.data() + begin,
                            (end - begin) * sizeof(Real), cudaMemcpyHostToDevice, halo),
            "copying halo messages to the device");
    }
    const std::span<const Region> messages(receive_regions_.data() + first, last - first);
    launch_messages<false>(detail::message_table(messages), receive_device_.data() + begin);
    check(cudaEventRecord(unpacked_.get(), halo), "ordering the steps after the halo");
    check(cudaStreamWaitEvent(compute_.get(), unpacked_.get(), 0),
          "ordering the steps after the halo");
  }

  void step(const Region& region) override {
    if (region.empty()) return;
    use_device();
    if (layout_.volume()) {
      step_volume(region);
      return;
    }
    const detail::BlockArgs<Real> args = detail::block_args<Real>(
        u_[current_].data(), v_[current_].data(), u_[1 - current_].data(), v_[1 - current_].data(),
        coefficients_, weights_, layout_, edges_, region);
    const dim3 grid(detail::blocks(region.cols(), detail::region_block_x),
                    detail::blocks(region.rows(), detail::region_block_y));
    const dim3 block(detail::region_block_x, detail::region_block_y);
    dispatch_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
      detail::region_step_kernel<K, B, Real><<<grid, block, 0, compute_.get()>>>(args);
    });
    check(cudaGetLastError(), "launching a step");
  }

  void step_frame(const Region& outer, const Region& inner) override {
    if (layout_.volume()) {
      SubdomainStepper<Real>::step_frame(outer, inner);  // its six slabs, a launch each
      return;
    }
    const detail::Frame frame{detail::cell_range(outer), detail::cell_range(inner)};
    if (frame.cells() == 0) return;
    use_device();
    const detail::BlockArgs<Real> args = detail::block_args<Real>(
        u_[current_].data(), v_[current_].data(), u_[1 - current_].data(), v_[1 - current_].data(),
        coefficients_, weights_, layout_, edges_, outer);
    const unsigned grid = detail::blocks(frame.cells(), detail::frame_block);
    dispatch_stencil_and_boundary(kind_, boundary_, [&]<StencilKind K, Boundary B>() {
      detail::frame_step_kernel<K, B, Real>
          <<<grid, detail::frame_block, 0, compute_.get()>>>(args, frame);
    });
    check(cudaGetLastError(), "launching a step of the rim");
  }

  void swap() override { current_ = 1 - current_; }

  void synchronize() override {
    use_device();
    check(cudaStreamSynchronize(halo_.get()), "waiting for the halo");
    check(cudaStreamSynchronize(compute_.get()), "waiting for the steps");
  }

 private:
  void use_device() const { check(cudaSetDevice(device_), "selecting the device"); }

  void step_volume(const Region& region) {
    const detail::VolumeBlockArgs<Real> args = detail::volume_block_args<Real>(
        u_[current_].data(), v_[current_].data(), u_[1 - current_].data(), v_[1 - current_].data(),
        coefficients_, layout_, edges_, region);
    const dim3 grid(detail::blocks(region.cols(), detail::region_block_x),
                    detail::blocks(region.rows(), detail::region_block_y),
                    detail::volume_region_grid_z(region.planes()));
    const dim3 block(detail::region_block_x, detail::region_block_y);
    detail::dispatch_volume_stencil_and_boundary(
        kind_, boundary_, [&]<StencilKind K, Boundary B>() {
          detail::volume_region_step_kernel<K, B, Real><<<grid, block, 0, compute_.get()>>>(args);
        });
    check(cudaGetLastError(), "launching a step of the volume's block");
  }

  template <bool Pack>
  void launch_messages(const detail::MessageTable& table, Real* packed) {
    const dim3 grid(detail::message_blocks(table), static_cast<unsigned>(table.count));
    detail::message_kernel<Pack, Real><<<grid, detail::message_block, 0, halo_.get()>>>(
        u_[current_].data(), v_[current_].data(), detail::padded_layout(layout_), table, packed);
    check(cudaGetLastError(), Pack ? "launching the halo pack" : "launching the halo unpack");
  }

  // Copies `region` of the current state between the device and rows of region.cols() values on
  // the host, plane after plane (a null host pointer skips that field), after the work queued
  // before it.
  void copy_region(const Region& region, const Real* u, const Real* v, cudaMemcpyKind kind) {
    if (region.empty()) return;
    auto stream = compute_.get();
    const std::size_t pitch = static_cast<std::size_t>(layout_.stride()) * sizeof(Real);
    const std::size_t width = static_cast<std::size_t>(region.cols()) * sizeof(Real);
    const std::size_t host_pitch = width;
    const auto rows = static_cast<std::size_t>(region.rows());
    const auto host_plane = static_cast<std::size_t>(region.rows() * region.cols());
    for (std::int64_t z = region.plane_begin; z < region.plane_end; ++z) {
      const auto offset =
          static_cast<std::size_t>(layout_.offset(z, region.row_begin, region.col_begin));
      const std::size_t host_offset = static_cast<std::size_t>(z - region.plane_begin) * host_plane;
      for (int f = 0; f < 2; ++f) {
        const Real* host = f == 0 ? u : v;
        if (!host) continue;
        host += host_offset;
        Real* device = (f == 0 ? u_[current_] : v_[current_]).data() + offset;
        if (kind == cudaMemcpyHostToDevice) {
          check(cudaMemcpy2DAsync(device, pitch, host, host_pitch, width, rows, kind, stream),
                "uploading the block");
        } else {
          check(cudaMemcpy2DAsync(const_cast<Real*>(host), host_pitch, device, pitch, width, rows,
                                  kind, stream),
                "downloading the block");
        }
      }
    }
    check(cudaStreamSynchronize(stream),
          kind == cudaMemcpyHostToDevice ? "uploading the block" : "downloading the block");
  }

  int device_;
  LocalLayout layout_;
  GlobalEdges edges_;
  Boundary boundary_;
  StencilKind kind_;
  Coefficients<Real> coefficients_;
  detail::StencilWeights<Real> weights_{};
  bool device_messages_;

  detail::Stream compute_, halo_;
  detail::Event stepped_, unpacked_;
  detail::DeviceBuffer<Real> u_[2], v_[2];  // ping-pong, each padded with the ghost frame
  detail::MessageTable send_table_;
  std::vector<Region> receive_regions_;
  detail::DeviceBuffer<Real> send_device_, receive_device_;  // packed messages on the device
  detail::PinnedBuffer<Real> send_host_, receive_host_;      // their host copies (not CUDA-aware)
  int current_ = 0;
};

}  // namespace

template <class Real>
std::unique_ptr<SubdomainStepper<Real>> make_subdomain(const Problem& problem,
                                                       const LocalLayout& layout, GlobalEdges edges,
                                                       int ordinal,
                                                       bool messages_in_device_memory) {
  problem.validate();
  if (const std::string refusal = refuses_blocks(problem.grid); !refusal.empty())
    throw InvalidInput(refusal);
  return std::make_unique<CudaSubdomain<Real>>(problem, layout, edges, ordinal,
                                               messages_in_device_memory);
}

template std::unique_ptr<SubdomainStepper<float>> make_subdomain(const Problem&, const LocalLayout&,
                                                                 GlobalEdges, int, bool);
template std::unique_ptr<SubdomainStepper<double>> make_subdomain(const Problem&,
                                                                  const LocalLayout&, GlobalEdges,
                                                                  int, bool);

}  // namespace grayscott::cuda
