// What the CPU backend's plane and volume engines (CpuEngine, VolumeEngine) share, as
// host_subdomain.hpp is what their blocks of a split grid share: a batch of members with their own
// coefficients; every member's u and v in two ping-pong buffers that hold the members one after
// another (state()); the members still stepped (freeze()); the copies a capture keeps; the copies
// out of the state. How each engine steps is its own.
//
// Each member's cells are lines of `cols` values, which the engine steps in an order of its own
// (a plane's rows in order; a volume's rows tile by tile through the planes). Every copy here
// splits a batch's lines among the threads as OpenMP's static schedule splits that order, the
// split the first touch made, so that each thread copies lines it stepped and its cache may
// still hold. The engine says the order: Order::line_offset(i), the offset of a member's i-th
// line, and Order::member_lines(); after a freeze, Order::split_work() splits the steps again.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/cpu/streaming_copy.hpp"
#include "engine/engine.hpp"
#include "engine/host_buffer.hpp"
#include "model/cell_update.hpp"

namespace grayscott::cpu {

template <class Real, class Order>
class HostBatch : public Engine<Real> {
 public:
  std::string backend() const override { return "cpu"; }
  std::size_t members() const override { return members_.size(); }

  void load(std::size_t member, std::span<const Real> u, std::span<const Real> v) override {
    Member& m = members_.at(member);
    const auto cells = static_cast<std::size_t>(grid_.cells());
    if (u.size() != cells || v.size() != cells)
      throw InvalidInput("load: expected " + std::to_string(cells) + " values per field");
    std::copy(u.begin(), u.end(), m.u[current_]);
    std::copy(v.begin(), v.end(), m.v[current_]);
  }

  void set_rates(std::size_t member, const Parameters& rates) override {
    rates.validate();
    Coefficients<Real>& coefficients = members_.at(member).coefficients;
    coefficients = coefficients.with_rates(rates, stencil_kind_);
  }

  bool freeze(std::size_t member) override {
    const auto found = std::find(stepping_.begin(), stepping_.end(), member);
    if (found == stepping_.end()) return member < members_.size();
    // Both buffers hold its state: the steps' swaps of the buffers leave it as it is.
    Member& m = members_[member];
    const auto cells = static_cast<std::size_t>(grid_.cells());
    std::copy_n(m.u[current_], cells, m.u[1 - current_]);
    std::copy_n(m.v[current_], cells, m.v[1 - current_]);
    stepping_.erase(found);
    order().split_work();
    return true;
  }

  void home_state() override {
    if (current_ == 0) return;
    for_each_line([&](const Member& member, std::size_t offset) {
      std::copy_n(member.u[1] + offset, grid_.cols, member.u[0] + offset);
      std::copy_n(member.v[1] + offset, grid_.cols, member.v[0] + offset);
    });
    current_ = 0;
  }

  void capture(FieldSet fields) override {
    captured_ = fields;
    // Made at the first capture: a front end that reads the state in place (the run pipeline, see
    // state()) never needs them, and a large grid's two extra fields are memory and first-touch
    // time.
    const auto cells = static_cast<std::size_t>(grid_.cells());
    for (Member& member : members_) {
      if (fields.u && member.captured_u.size() != cells)
        member.captured_u = HostBuffer<Real>::huge_pages(cells);
      if (fields.v && member.captured_v.size() != cells)
        member.captured_v = HostBuffer<Real>::huge_pages(cells);
    }
    for_each_line([&](Member& member, std::size_t offset) {
      if (fields.u)
        std::copy_n(member.u[current_] + offset, grid_.cols, member.captured_u.data() + offset);
      if (fields.v)
        std::copy_n(member.v[current_] + offset, grid_.cols, member.captured_v.data() + offset);
    });
  }

  void read_captured(std::size_t member, Real* u, Real* v) override {
    const Member& m = members_.at(member);
    const auto cells = static_cast<std::size_t>(grid_.cells());
    if (u && captured_.u) std::copy_n(m.captured_u.data(), cells, u);
    if (v && captured_.v) std::copy_n(m.captured_v.data(), cells, v);
  }

  // Each thread copies the lines it stepped last, which its cache may still hold, and the copy
  // takes every core's memory bandwidth rather than one's; a large image streams past the cache;
  // the finite check rides along.
  bool copy_state(std::size_t member, Real* u, Real* v) override {
    const Member& m = members_.at(member);
    const std::int64_t cols = grid_.cols, lines = order().member_lines();
    const Real* from_u = m.u[current_];
    const Real* from_v = m.v[current_];
    const bool streaming =
        static_cast<std::size_t>(grid_.cells()) * sizeof(Real) >= streaming_copy_min_bytes;
    const auto copy = streaming ? streaming_copy_finite<Real> : copy_finite<Real>;
    bool finite = true;
#pragma omp parallel num_threads(threads_) reduction(&& : finite)
    {
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < lines; ++i) {
        const std::size_t offset = order().line_offset(i);
        if (u) finite = copy(from_u + offset, cols, u + offset) && finite;
        if (v) finite = copy(from_v + offset, cols, v + offset) && finite;
      }
      if (streaming) streaming_fence();
    }
    return finite;
  }

  typename Engine<Real>::StateView state() override {
    return {state_u_[current_].data(), state_v_[current_].data(),
            static_cast<std::size_t>(grid_.cells()), false, 0};
  }

  int threads() const { return threads_; }
  // Steps fused per pass over the grid: the option given, or the engine's automatic choice.
  int fuse_steps() const { return fuse_steps_; }

 protected:
  struct Member {
    Coefficients<Real> coefficients;
    Real* u[2];  // ping-pong: [current] holds the state; this member's part of state_u_
    Real* v[2];
    HostBuffer<Real> captured_u, captured_v;
  };
  using Allocate = HostBuffer<Real> (*)(std::size_t);

  // The buffers (from `allocate`) and each member's coefficients; not yet touched: the engine
  // zeroes them (zero_state) once its order is known.
  HostBatch(const Problem& problem, std::span<const Parameters> member_params, int threads,
            int fuse_steps, Allocate allocate)
      : grid_(problem.grid),
        boundary_(problem.boundary),
        stencil_kind_(problem.stencil.kind),
        members_(member_params.size()),
        threads_(threads),
        fuse_steps_(fuse_steps) {
    const auto cells = static_cast<std::size_t>(grid_.cells());
    for (int b = 0; b < 2; ++b) {
      state_u_[b] = allocate(members_.size() * cells);
      state_v_[b] = allocate(members_.size() * cells);
    }
    for (std::size_t m = 0; m < members_.size(); ++m) {
      stepping_.push_back(m);
      Member& member = members_[m];
      member.coefficients =
          Coefficients<Real>::from(member_params[m], problem.outside, problem.stencil.kind);
      for (int b = 0; b < 2; ++b) {
        member.u[b] = state_u_[b].data() + m * cells;
        member.v[b] = state_v_[b].data() + m * cells;
      }
    }
  }

  // Zeros both buffers of every member, each line by the thread that will step it (the first
  // touch places its pages near that thread's core).
  void zero_state() {
    for_each_line([&](Member& member, std::size_t offset) {
      for (Real* p : {member.u[0], member.u[1], member.v[0], member.v[1]})
        std::fill_n(p + offset, grid_.cols, Real(0));
    });
  }

  Grid grid_;
  Boundary boundary_;
  StencilKind stencil_kind_;
  std::vector<Member> members_;
  std::vector<std::size_t> stepping_;  // the members stepped, in order: all but those frozen
  // Every member's fields in one array per buffer, member after member: one stride from a member
  // to the next, so a batch's state is one (members, [depth,] rows, cols) array (see state()).
  HostBuffer<Real> state_u_[2], state_v_[2];
  int threads_;
  int fuse_steps_;
  int current_ = 0;
  FieldSet captured_{false, false};

 private:
  const Order& order() const { return static_cast<const Order&>(*this); }
  Order& order() { return static_cast<Order&>(*this); }

  // f(member, offset of the line) for every line of every member, the lines split among the
  // threads in the engine's order.
  template <class F>
  void for_each_line(const F& f) {
    const std::int64_t member_lines = order().member_lines();
    const auto lines = static_cast<std::int64_t>(members_.size()) * member_lines;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t i = 0; i < lines; ++i)
      f(members_[static_cast<std::size_t>(i / member_lines)], order().line_offset(i % member_lines));
  }
};

}  // namespace grayscott::cpu
