// The stepping/writing loop shared by `run` and `sweep`: the engine steps on this thread, each
// captured image goes through a bounded ImageQueue to a writer thread, which writes it while the
// engine computes the next. Stops cleanly when the writer asks to (non-finite values) or on an
// error on either side.
#pragma once

#include <cmath>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <thread>

#include "app/image_queue.hpp"
#include "engine/engine.hpp"

namespace grayscott::app {

// True when no value is NaN or infinite: the check every image passes before it is written.
// Branch-free, so the loop vectorises; an image is scanned whole either way.
template <class Real>
bool all_finite(std::span<const Real> values) {
  bool finite = true;
  for (Real x : values) finite &= std::isfinite(x);
  return finite;
}

struct StreamOutcome {
  std::int64_t images_handed = 0;  // images given to the writer
  std::string stop_reason;         // set when the writer stopped the stream
  std::exception_ptr stepping_error, writer_error;
  bool stopped() const { return !stop_reason.empty() || stepping_error || writer_error; }
};

// Runs `images` images of `steps_per_image` steps on `engine` (already loaded).
//  gather(slot):  on this thread, copies the captured image into the slot (read_captured).
//  consume(slot): on the writer thread, writes it; returns "" to go on, or why to stop.
//  after_image(i): on this thread, after image i was handed over (progress).
// `slot_values`: values per field in one slot (cells for a run, members*cells for a sweep).
template <class Real, class Gather, class Consume, class AfterImage>
StreamOutcome stream_images(Engine<Real>& engine, std::int64_t images, std::int64_t steps_per_image,
                            FieldSet fields, std::size_t slot_values, Gather&& gather,
                            Consume&& consume, AfterImage&& after_image) {
  // Three buffers: one being filled, one being written, one spare so neither side waits on a
  // single hand-over.
  ImageQueue<Real> queue(3, slot_values, fields.u, fields.v);
  StreamOutcome outcome;
  std::thread writer([&] {
    try {
      while (auto slot = queue.pop()) {
        std::string reason = consume(*slot);
        if (!reason.empty()) {
          outcome.stop_reason = std::move(reason);
          queue.close();
          return;
        }
        queue.release(std::move(*slot));
      }
    } catch (...) {
      outcome.writer_error = std::current_exception();
      queue.close();
    }
  });

  try {
    engine.advance(steps_per_image);
    engine.capture(fields);
    for (std::int64_t i = 0; i < images; ++i) {
      // Queue the next image's steps before waiting for this one: a GPU keeps computing while the
      // image travels to the host and the writer.
      if (i + 1 < images) engine.advance(steps_per_image);
      auto slot = queue.acquire();
      if (!slot) break;  // the writer stopped
      gather(*slot);
      slot->index = i;
      slot->step = (i + 1) * steps_per_image;
      queue.push(std::move(*slot));
      ++outcome.images_handed;
      if (i + 1 < images) engine.capture(fields);
      after_image(i);
    }
  } catch (...) {
    outcome.stepping_error = std::current_exception();
    queue.close();
  }
  queue.finish();
  writer.join();
  return outcome;
}

}  // namespace grayscott::app
