// The image loop's two ends for the engines and files this program has: a local engine as an
// ImageSource, and a run file and a sweep file as ImageSinks.
#pragma once

#include <algorithm>
#include <string>

#include "engine/engine.hpp"
#include "io/files/run_file.hpp"
#include "io/files/sweep_file.hpp"
#include "pipeline/image_loop.hpp"

namespace grayscott::pipeline {

// A local engine's members, one after the other in each slot. An engine whose state is in host
// memory steps on the calling thread (advance returns when done): its image is copied straight
// from the state (Engine::copy_state, with the engine's threads), with no capture and no captured
// copy. A device engine captures and steps on while the image travels.
template <class Real>
class EngineSource final : public ImageSource<Real> {
 public:
  EngineSource(Engine<Real>& engine, std::size_t cells)
      : engine_(engine), cells_(cells), on_device_(engine.state().on_device) {}
  // The engine outlives its loop (a Python Simulation runs again): its captures stop measuring.
  ~EngineSource() override {
    if (measuring_) engine_.measure_captures(std::nullopt, false);
  }
  EngineSource(const EngineSource&) = delete;
  EngineSource& operator=(const EngineSource&) = delete;
  bool asynchronous() const override { return on_device_; }
  HeldState<Real> held_state(std::size_t member) override {
    if (on_device_) return {};
    const typename Engine<Real>::StateView state = engine_.state();
    return {state.u + member * state.member_stride, state.v + member * state.member_stride};
  }
  void advance(std::int64_t steps) override { engine_.advance(steps); }
  bool measure_captures(const analysis::HistogramSpec& spec, bool change_from_now) override {
    measuring_ = on_device_ && engine_.measure_captures(spec, change_from_now);
    return measuring_;
  }
  std::vector<analysis::ImageSums> measured() override { return engine_.captured_statistics(); }
  void capture(FieldSet fields) override {
    if (on_device_) engine_.capture(fields);
  }
  void gather(ImageSlot<Real>& slot, FieldSet fields) override {
    slot.known_finite = {false, false};
    if (!on_device_) {
      // Field by field, so that the check made while copying tells which field it passed.
      bool u_finite = fields.u, v_finite = fields.v;
      for (std::size_t m = 0; m < engine_.members(); ++m) {
        if (fields.u) u_finite &= engine_.copy_state(m, slot.u.data() + m * cells_, nullptr);
        if (fields.v) v_finite &= engine_.copy_state(m, nullptr, slot.v.data() + m * cells_);
      }
      slot.known_finite = {u_finite, v_finite};
      return;
    }
    for (std::size_t m = 0; m < engine_.members(); ++m) {
      engine_.read_captured(m, fields.u ? slot.u.data() + m * cells_ : nullptr,
                            fields.v ? slot.v.data() + m * cells_ : nullptr);
    }
  }

 private:
  Engine<Real>& engine_;
  std::size_t cells_;
  bool on_device_;
  bool measuring_ = false;
};

// What a run or sweep measures, as its file records it and back.
inline io::AnalysisAttributes file_attributes(const AnalysisRequest& analysis) {
  return {analysis.statistics, analysis.steady.tolerance, analysis.steady.images,
          analysis.classify};
}
inline AnalysisRequest analysis_request(const io::AnalysisAttributes& recorded) {
  AnalysisRequest analysis;
  analysis.statistics = recorded.statistics;
  analysis.steady = {recorded.until_steady, recorded.steady_images};
  analysis.classify = recorded.classify;
  return analysis;
}

// "stopped: values became non-finite at image I (step S)" and the advice, when a written field of
// the slot is.
template <class Real>
std::string nonfinite_reason(const ImageSlot<Real>& slot, FieldSet fields,
                             const std::string& advice = {}) {
  // A field found finite while it was copied in (EngineSource) is not read again.
  const bool finite = (!fields.u || slot.known_finite.u || all_finite<Real>(slot.u)) &&
                      (!fields.v || slot.known_finite.v || all_finite<Real>(slot.v));
  if (finite) return {};
  return "stopped: values became non-finite at image " + std::to_string(slot.index) + " (step " +
         std::to_string(slot.step) + ")" + advice;
}

// What to tell a user whose run turned non-finite: the dt stable at every state, when the run's
// is above it ("" when it is not: then the stencil or the start's values are to blame).
std::string nonfinite_advice(const Problem& problem);

// A run file: a run stops at its first non-finite image, which is not written. Alone, the writer
// thread checks (off the stepping thread); processes writing together check before the hand-over,
// where they can agree.
template <class Real>
class RunFileSink final : public ImageSink<Real> {
 public:
  // `checkpoint_images`: set to the images done at each checkpoint this sink saves.
  RunFileSink(io::RunFileWriter& file, FieldSet fields, bool check_before_handover,
              std::string nonfinite_advice, std::int64_t& checkpoint_images)
      : file_(file),
        fields_(fields),
        check_before_handover_(check_before_handover),
        nonfinite_advice_(std::move(nonfinite_advice)),
        checkpoint_images_(checkpoint_images) {}
  std::string inspect(const ImageSlot<Real>& slot) override {
    return check_before_handover_ ? nonfinite_reason(slot, fields_, nonfinite_advice_)
                                  : std::string();
  }
  std::string write(const ImageSlot<Real>& slot) override {
    if (!check_before_handover_) {
      std::string reason = nonfinite_reason(slot, fields_, nonfinite_advice_);
      if (!reason.empty()) return reason;
    }
    file_.append(slot.step, fields_.u ? slot.u.data() : nullptr,
                 fields_.v ? slot.v.data() : nullptr,
                 slot.statistics.empty() ? nullptr : &slot.statistics.front());
    return {};
  }
  void save_checkpoint(const ImageSlot<Real>& slot) override {
    file_.save_checkpoint(slot.index + 1, slot.u.data(), slot.v.data(), slot.settled);
    checkpoint_images_ = slot.index + 1;
  }
  void make_durable() override { file_.flush(); }

 private:
  io::RunFileWriter& file_;
  FieldSet fields_;
  bool check_before_handover_;
  std::string nonfinite_advice_;
  std::int64_t& checkpoint_images_;
};

// A sweep file, written a batch of consecutive members at a time. A member that blows up does not
// stop the others: its first non-finite image is recorded (nonfinite_image) and the sweep goes on.
template <class Real>
class SweepFileSink final : public ImageSink<Real> {
 public:
  // `nonfinite` and `images_written` are indexed by the sweep's members.
  SweepFileSink(io::SweepFileWriter& file, FieldSet fields, std::int64_t first, std::int64_t count,
                std::size_t cells, std::vector<std::int64_t>& nonfinite,
                std::vector<std::int64_t>& images_written)
      : file_(file),
        fields_(fields),
        first_(first),
        count_(count),
        cells_(cells),
        nonfinite_(nonfinite),
        images_written_(images_written) {}
  std::string write(const ImageSlot<Real>& slot) override {
    for (std::int64_t m = 0; m < count_; ++m) {
      auto& first_bad = nonfinite_[static_cast<std::size_t>(first_ + m)];
      if (first_bad >= 0) continue;
      const std::size_t offset = static_cast<std::size_t>(m) * cells_;
      const bool finite = (!fields_.u || all_finite<Real>({slot.u.data() + offset, cells_})) &&
                          (!fields_.v || all_finite<Real>({slot.v.data() + offset, cells_}));
      if (!finite) first_bad = slot.index;
    }
    file_.write_images(first_, count_, slot.index, fields_.u ? slot.u.data() : nullptr,
                       fields_.v ? slot.v.data() : nullptr);
    if (!slot.statistics.empty())
      file_.write_statistics(first_, count_, slot.index, slot.statistics.data());
    for (std::size_t m : slot.settled_members)
      file_.record_settled(first_ + static_cast<std::int64_t>(m), slot.index);
    for (std::int64_t m = 0; m < count_; ++m)
      images_written_[static_cast<std::size_t>(first_ + m)] = slot.index + 1;
    return {};
  }
  void save_checkpoint(const ImageSlot<Real>& slot) override {
    file_.save_checkpoint(first_, count_, slot.index + 1, slot.u.data(), slot.v.data(),
                          nonfinite_.data() + first_);
  }
  void make_durable() override { file_.flush(); }

 private:
  io::SweepFileWriter& file_;
  FieldSet fields_;
  std::int64_t first_, count_;
  std::size_t cells_;
  std::vector<std::int64_t>& nonfinite_;
  std::vector<std::int64_t>& images_written_;
};

}  // namespace grayscott::pipeline
