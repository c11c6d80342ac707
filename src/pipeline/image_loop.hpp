// The one time loop from engine to file, shared by `run`, `sweep`, both over MPI ranks and the
// Python module: advance, capture, hand the image to a writer thread (which writes it while the
// engine computes the next), progress, the finite check, stop signals, checkpoints, durability.
//
// The loop knows no backend and no file format: an ImageSource steps (a local engine, or this
// rank's block of a distributed engine) and an ImageSink writes (a run file, a sweep file). The
// processes that run one pipeline together (MPI ranks stepping one grid) agree once per image on
// whether to go on, checkpoint or flush (Agreement), so that their collective writes match.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "model/model.hpp"
#include "pipeline/image_queue.hpp"
#include "pipeline/stop_signal.hpp"

namespace grayscott::pipeline {

// True when no value is NaN or infinite: the check every image of a run passes before it is
// written. Branch-free, so the loop vectorises; an image is scanned whole either way.
template <class Real>
bool all_finite(std::span<const Real> values) {
  bool finite = true;
  for (Real x : values) finite &= std::isfinite(x);
  return finite;
}

// When the loop saves the state to continue from, and makes what was written survive a crash.
struct SavePolicy {
  std::int64_t checkpoint_every_images = 0;  // > 0: a checkpoint after every this many images
  double checkpoint_every_seconds = 300;     // > 0 (and no image count): by wall time
  double durable_every_seconds = 0.5;        // flush the file at least this often
};

// --checkpoint-every's "25" (images), "90s", "10m", "1h" (wall time) into `policy`. Throws
// InvalidInput.
void parse_checkpoint_every(std::string_view text, SavePolicy& policy);

// What the loop steps.
template <class Real>
class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // True when advance() may return before the work is done and capture() freezes a copy (a local
  // engine): the loop then queues the next image's steps before reading this one.
  virtual bool asynchronous() const = 0;
  virtual void advance(std::int64_t steps) = 0;
  virtual void capture(FieldSet fields) = 0;
  // Copies the captured fields into the slot's buffers (sized by the loop).
  virtual void gather(ImageSlot<Real>& slot, FieldSet fields) = 0;
};

// Where the images go. write/save_checkpoint/make_durable run on the writer thread, in image
// order; inspect on the stepping thread.
template <class Real>
class ImageSink {
 public:
  virtual ~ImageSink() = default;
  // Before the hand-over, on every process: why the run must stop at this image ("" to go on).
  virtual std::string inspect(const ImageSlot<Real>&) { return {}; }
  // Writes the image; returns why to stop instead ("": written, go on).
  virtual std::string write(const ImageSlot<Real>& slot) = 0;
  // The slot holds the whole state (u and v) after slot.index + 1 images.
  virtual void save_checkpoint(const ImageSlot<Real>& slot) = 0;
  virtual void make_durable() = 0;
};

// How the processes running one loop together agree. Alone, there is nothing to agree on.
class Agreement {
 public:
  virtual ~Agreement() = default;
  // The bitwise OR of every process's flags.
  virtual unsigned any(unsigned flags) { return flags; }
  // The largest value over the processes.
  virtual int largest(int value) { return value; }
  // The reason given by the first process that has one ("" where this one has none).
  virtual std::string first_reason(const std::string& local) { return local; }
  // Whether this process's clock decides when to checkpoint and flush.
  virtual bool keeps_time() const { return true; }
};

// One image as the loop's hook sees it: this process's values of each captured field (rows x cols
// of the engine's precision per member; null for a field not captured).
struct LoopImage {
  std::int64_t index = 0;  // 0-based
  std::int64_t step = 0;   // steps done at this image
  const void* u = nullptr;
  const void* v = nullptr;
};

struct LoopPlan {
  std::int64_t first_image = 0;  // images already done (a continued run)
  std::int64_t images = 0;       // images in the whole run
  std::int64_t steps_per_image = 0;
  FieldSet fields;              // the fields written
  std::size_t slot_values = 0;  // values per field in one image (cells x members)
  SavePolicy save;
  bool checkpoints = true;
  bool wait_for_each_write = false;  // the stepping thread waits for every write to finish
  std::function<void(std::int64_t images_done)> on_image;  // progress
  // Called on the stepping thread with each image before it goes to the writer, while the source
  // still holds that image's state (with this hook set the loop never steps ahead of the image it
  // reads). It returns why to stop after this image ("" to go on): the image is then written
  // with the state saved as a checkpoint beside it, and the loop ends with that reason.
  std::function<std::string(const LoopImage&)> on_image_held;
};

// Where a loop's time went, in seconds. The stepping thread's share adds up to about the loop's
// wall time; the writer's runs beside it (on a core of its own if there is one).
struct LoopTimes {
  double stepping = 0;    // in advance(): the steps, or a device engine's launches
  double reading = 0;     // capture, copying the image out of the engine, and its check
  double waiting = 0;     // for a free image buffer (the writer behind)
  double last_write = 0;  // at the end, for the writer to finish the last image and checkpoint
  double writing = 0;     // writer thread: the images into the file
  double saving = 0;      // writer thread: checkpoints and the flushes that make images durable
};

struct LoopOutcome {
  LoopTimes times;
  std::int64_t images_done = 0;        // images handed to the writer, counting plan.first_image
  std::int64_t checkpoint_images = 0;  // images done at the newest checkpoint handed over
  std::string stop_reason;             // why the loop stopped early (non-finite values, ...)
  int signal = 0;                      // the stop signal that ended the loop, if one did
  std::exception_ptr stepping_error, writer_error;
  bool stopped() const {
    return !stop_reason.empty() || signal != 0 || stepping_error || writer_error;
  }
};

namespace detail {
enum Flag : unsigned {
  Interrupt = 1,    // a stop signal arrived
  Checkpoint = 2,   // time (or the image count) for a checkpoint
  Durable = 4,      // time to flush
  Stop = 8,         // inspect() found a reason to stop
  Failed = 16,      // an error on the stepping thread
  WriterGone = 32,  // the writer thread stopped
  Held = 64         // the hook on the held image asked to stop after it
};
}  // namespace detail

template <class Real>
LoopOutcome run_image_loop(ImageSource<Real>& source, ImageSink<Real>& sink, const LoopPlan& plan,
                           Agreement& agreement) {
  using namespace detail;
  using Clock = std::chrono::steady_clock;
  // Two images in memory at most, beside the engine's state: one being filled while the other is
  // written. A field is allocated on first use; a checkpoint that needs a field the images do not
  // hold (u beside v) first waits for the writer and frees the idle buffers, so that it too stays
  // within two images' worth.
  ImageQueue<Real> queue(2, 0, false, false);
  LoopOutcome outcome;
  outcome.images_done = plan.first_image;
  std::atomic<bool> writer_gone = false;
  std::string writer_stop_reason;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  std::thread writer([&] {
    try {
      while (auto slot = queue.pop()) {
        Clock::time_point t = Clock::now();
        std::string reason = sink.write(*slot);
        outcome.times.writing += seconds_since(t);
        if (!reason.empty()) {
          writer_stop_reason = std::move(reason);
          sink.make_durable();
          writer_gone = true;
          queue.close();
          return;
        }
        t = Clock::now();
        if (slot->checkpoint) sink.save_checkpoint(*slot);
        if (slot->durable) sink.make_durable();
        outcome.times.saving += seconds_since(t);
        queue.release(std::move(*slot));
      }
    } catch (...) {
      outcome.writer_error = std::current_exception();
      writer_gone = true;
      queue.close();
    }
  });

  // Adds the time `work` takes to `total`.
  const auto timed = [&](double& total, auto&& work) {
    const Clock::time_point t = Clock::now();
    work();
    total += seconds_since(t);
  };
  LoopTimes& times = outcome.times;
  Clock::time_point last_checkpoint = Clock::now(), last_durable = Clock::now();
  bool next_issued = false;
  try {
    for (std::int64_t i = plan.first_image; i < plan.images; ++i) {
      if (!next_issued) timed(times.stepping, [&] { source.advance(plan.steps_per_image); });
      next_issued = false;
      const bool last = i + 1 == plan.images;

      // Decided before the capture: a checkpoint needs both fields.
      unsigned local = 0;
      if (stop_requested() != 0) local |= Interrupt;
      if (agreement.keeps_time()) {
        const std::int64_t every = plan.save.checkpoint_every_images;
        if (every > 0 ? (i + 1) % every == 0
                      : plan.save.checkpoint_every_seconds > 0 &&
                            seconds_since(last_checkpoint) >= plan.save.checkpoint_every_seconds) {
          local |= Checkpoint;
        }
        if (seconds_since(last_durable) >= plan.save.durable_every_seconds) local |= Durable;
      }
      if (writer_gone) local |= WriterGone;
      const unsigned before = agreement.any(local);
      if (before & WriterGone) break;
      const bool interrupt = (before & Interrupt) != 0;
      // The last image's state is saved too: the file then ends the same however it got there.
      const bool checkpoint = plan.checkpoints && (last || interrupt || (before & Checkpoint));
      const FieldSet captured = checkpoint ? FieldSet{true, true} : plan.fields;
      timed(times.reading, [&] { source.capture(captured); });
      if (source.asynchronous() && !last && !interrupt && !plan.on_image_held) {
        // The next image's steps run while this one travels to the writer.
        timed(times.stepping, [&] { source.advance(plan.steps_per_image); });
        next_issued = true;
      }

      const bool extra_field = (captured.u && !plan.fields.u) || (captured.v && !plan.fields.v);
      std::optional<ImageSlot<Real>> slot;  // none once the writer stopped
      timed(times.waiting, [&] {
        if (extra_field) queue.drain_and_free_buffers();
        slot = queue.acquire();
      });
      const Clock::time_point reading_from = Clock::now();
      unsigned after = 0;
      std::string reason, held_reason;
      std::exception_ptr error;
      if (slot) {
        try {
          // A field kept from a checkpoint's slot that this image does not need is freed.
          if (!captured.u) ImageBuffer<Real>().swap(slot->u);
          if (!captured.v) ImageBuffer<Real>().swap(slot->v);
          if (captured.u) slot->u.resize(plan.slot_values);
          if (captured.v) slot->v.resize(plan.slot_values);
          slot->index = i;
          slot->step = (i + 1) * plan.steps_per_image;
          slot->checkpoint = checkpoint;
          slot->durable = last || interrupt || (before & Durable) != 0;
          source.gather(*slot, captured);
          reason = sink.inspect(*slot);
          if (reason.empty() && plan.on_image_held) {
            held_reason =
                plan.on_image_held(LoopImage{i, slot->step, captured.u ? slot->u.data() : nullptr,
                                             captured.v ? slot->v.data() : nullptr});
          }
        } catch (...) {
          error = std::current_exception();
        }
      }
      times.reading += seconds_since(reading_from);
      if (!slot) after |= WriterGone;
      if (!reason.empty()) after |= Stop;
      if (error) after |= Failed;
      if (!held_reason.empty()) after |= Held;
      const unsigned agreed = agreement.any(after);
      if (agreed & (Stop | Failed | WriterGone)) {
        if (error) outcome.stepping_error = error;
        if (agreed & Stop) {
          outcome.stop_reason = agreement.first_reason(reason);
        } else if ((agreed & Failed) && !error) {
          outcome.stop_reason = "stopped: another process failed";
        }
        break;
      }
      if (agreed & Held) {
        // The source holds this image's state still: it becomes the checkpoint.
        try {
          if (!slot->checkpoint && plan.checkpoints) {
            source.capture(FieldSet{true, true});
            slot->u.resize(plan.slot_values);
            slot->v.resize(plan.slot_values);
            source.gather(*slot, FieldSet{true, true});
            slot->checkpoint = true;
          }
        } catch (...) {
          outcome.stepping_error = std::current_exception();
          break;
        }
        slot->durable = true;
      }
      // Images the writer has not yet written still count: it writes every image it is handed
      // unless it fails, which the summary reports.
      if (slot->checkpoint) outcome.checkpoint_images = i + 1;
      if (slot->checkpoint) last_checkpoint = Clock::now();
      if (slot->durable) last_durable = Clock::now();
      queue.push(std::move(*slot));
      outcome.images_done = i + 1;
      if (plan.wait_for_each_write) queue.drain();
      if (plan.on_image) plan.on_image(i + 1);
      if (agreed & Held) {
        outcome.stop_reason = agreement.first_reason(held_reason);
        break;
      }
      // A stop that comes with the last image changes nothing: the run is complete.
      if (interrupt && !last) {
        outcome.signal = agreement.largest(stop_requested());
        break;
      }
    }
  } catch (...) {
    outcome.stepping_error = std::current_exception();
    queue.close();
  }
  timed(times.last_write, [&] {
    queue.finish();
    writer.join();
  });
  if (!writer_stop_reason.empty() && outcome.stop_reason.empty()) {
    outcome.stop_reason = writer_stop_reason;
  }
  return outcome;
}

}  // namespace grayscott::pipeline
