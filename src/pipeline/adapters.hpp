// The image loop's two ends for the engines and files this program has: a local engine as an
// ImageSource, and a run file as an ImageSink.
#pragma once

#include <algorithm>
#include <string>

#include "engine/engine.hpp"
#include "io/files/run_file.hpp"
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
  bool asynchronous() const override { return on_device_; }
  HeldState<Real> held_state(std::size_t member) override {
    if (on_device_) return {};
    const typename Engine<Real>::StateView state = engine_.state();
    return {state.u + member * state.member_stride, state.v + member * state.member_stride};
  }
  void advance(std::int64_t steps) override { engine_.advance(steps); }
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
  RunFileSink(io::RunFileWriter& file, FieldSet fields, bool check_before_handover,
              std::string nonfinite_advice)
      : file_(file),
        fields_(fields),
        check_before_handover_(check_before_handover),
        nonfinite_advice_(std::move(nonfinite_advice)) {}
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
    file_.save_checkpoint(slot.index + 1, slot.u.data(), slot.v.data());
    checkpoint_images_ = slot.index + 1;
  }
  void make_durable() override { file_.flush(); }
  // Images done at the newest checkpoint this sink saved (0: none).
  std::int64_t checkpoint_images() const { return checkpoint_images_; }

 private:
  io::RunFileWriter& file_;
  FieldSet fields_;
  bool check_before_handover_;
  std::string nonfinite_advice_;
  std::int64_t checkpoint_images_ = 0;
};

}  // namespace grayscott::pipeline
