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
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analysis/classify.hpp"
#include "analysis/measure.hpp"
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

// An image's fields where the source holds them in host memory (null: not so held).
template <class Real>
struct HeldState {
  const Real* u = nullptr;
  const Real* v = nullptr;
};

// What the loop steps.
template <class Real>
class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // Member m's current u and v in host memory, valid until the next advance, where the source
  // keeps its state there and steps only when asked (a host engine): the statistics read them in
  // place instead of a copy of u. Null where not.
  virtual HeldState<Real> held_state(std::size_t member) {
    (void)member;
    return {};
  }
  // True when advance() may return before the work is done and capture() freezes a copy (a local
  // engine): the loop then queues the next image's steps before reading this one.
  virtual bool asynchronous() const = 0;
  virtual void advance(std::int64_t steps) = 0;
  virtual void capture(FieldSet fields) = 0;
  // Copies the captured fields into the slot's buffers (sized by the loop).
  virtual void gather(ImageSlot<Real>& slot, FieldSet fields) = 0;
  // Where the source measures the statistics of every image it captures from now on itself (a
  // device engine's reduction kernel, Engine::measure_captures): true, and measured() gives each
  // image's sums after gather(). The first image's change is measured from the state now when
  // `change_from_now`. False where it does not: the loop measures the images' fields.
  virtual bool measure_captures(const analysis::HistogramSpec& spec, bool change_from_now) {
    (void)spec;
    (void)change_from_now;
    return false;
  }
  virtual std::vector<analysis::ImageSums> measured() { return {}; }
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
  // Every process's sums of each member's image merged, in place (the same on every process).
  virtual void combine(std::vector<analysis::ImageSums>& sums) { (void)sums; }
};

// One image as the loop's hook sees it: this process's values of each captured field (rows x cols
// of the engine's precision per member; null for a field not captured).
struct LoopImage {
  std::int64_t index = 0;  // 0-based
  std::int64_t step = 0;   // steps done at this image
  const void* u = nullptr;
  const void* v = nullptr;
  // Each member's statistics of this image, when the loop computes them (else empty).
  std::span<const analysis::ImageStatistics> statistics;
};

// When a run has settled: the change of v per step (its RMS over the cells) stayed below
// `tolerance` for `images` images in a row.
struct SteadyCriterion {
  double tolerance = 0;  // 0: never settled
  std::int64_t images = 5;
  bool enabled() const { return tolerance > 0; }
  // An image whose change counts towards settling.
  bool calm(double change_per_step) const { return change_per_step < tolerance; }
  // Throws InvalidInput unless `images` is from 1 to 1000000.
  void check_images() const;
};

// What a run or a sweep measures of its images besides writing them.
struct AnalysisRequest {
  // Statistics of every image with this histogram of v; none: not measured.
  std::optional<analysis::HistogramSpec> statistics;
  SteadyCriterion steady;  // needs statistics
  bool classify = false;   // the pattern class of every image (needs statistics)
  // Throws InvalidInput naming the setting: a tolerance that is negative, not finite or below
  // what the precision resolves of v's change per step; settling or classes without statistics;
  // classes of a grid too small to tell.
  void validate(const Problem& problem, std::int64_t steps_per_image) const;
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
  // Statistics of every image with this histogram of v (analysis/statistics.hpp), each member's
  // in slot.statistics; none: not computed. They read a host engine's state in place
  // (ImageSource::held_state); from other sources the loop captures u beside v for every image.
  std::optional<analysis::HistogramSpec> statistics;
  std::size_t members = 1;  // members in one image: slot_values / members cells each
  // This process's v when the loop starts (slot_values values of the source's precision): the
  // first image's change is measured from it. Null: the first image has no change.
  const void* start_v = nullptr;
  // Stop once every member settled (needs statistics), unless stop_once_settled is false (a
  // sweep writes every image of every member). A member that settles is reported to
  // on_member_settled (a sweep then stops stepping it).
  SteadyCriterion steady;
  bool stop_once_settled = true;
  // Per member, where a continued loop's members stood towards settling (empty: nowhere): the
  // images in a row already below the tolerance, and the members that had settled.
  std::vector<std::int64_t> calm_images_at_start;
  std::vector<bool> settled_at_start;
  // The pattern class of each member's image (analysis/classify.hpp), into its statistics: the
  // grid's shape and whether it wraps (this process holds whole images).
  bool classify = false;
  Grid grid;
  bool periodic = false;
  std::function<void(std::size_t member, std::int64_t image)> on_member_settled;
};

// Where a loop's time went, in seconds. The stepping thread's share adds up to about the loop's
// wall time; the writer's runs beside it (on a core of its own if there is one).
struct LoopTimes {
  double stepping = 0;    // in advance(): the steps, or a device engine's launches
  double reading = 0;     // capture, copying the image out of the engine, and its check
  double measuring = 0;   // the statistics of every image (and classes, settling), if asked
  double waiting = 0;     // for a free image buffer (the writer behind)
  double last_write = 0;  // at the end, for the writer to finish the last image and checkpoint
  double writing = 0;     // writer thread: the images into the file
  double saving = 0;      // writer thread: checkpoints and the flushes that make images durable
};

struct LoopOutcome {
  LoopTimes times;
  std::int64_t images_done = 0;        // images handed to the writer, counting plan.first_image
  std::int64_t checkpoint_images = 0;  // images done at the newest checkpoint handed over
  // Steps the source was asked to advance: its state is at step first_image * steps_per_image +
  // steps, past the last image handed over where a stop came between (non-finite values found in
  // an image, the next image's steps issued already).
  std::int64_t steps = 0;
  std::string stop_reason;             // why the loop stopped early (non-finite values, ...)
  int signal = 0;                      // the stop signal that ended the loop, if one did
  std::exception_ptr stepping_error, writer_error;
  // Every member settled (LoopPlan::steady) at the image before images_done: the loop ended
  // there by design; stop_reason says where and why.
  bool settled = false;
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
  Held = 64,        // the hook on the held image asked to stop after it
  Settled = 128     // every member settled
};

// The statistics of every image, and which members have settled. The previous image's v is kept
// here (the engine's buffers hold only the current state): the change is measured against it;
// unless the source measures its images itself (`at_source`), keeping its own.
template <class Real>
class ImageMeasure {
 public:
  ImageMeasure(const LoopPlan& plan, bool at_source)
      : plan_(plan),
        at_source_(at_source),
        cells_(plan.slot_values / std::max<std::size_t>(plan.members, 1)),
        calm_images_(plan.members, 0),
        settled_(plan.members, false) {
    if (plan.start_v != nullptr && !at_source) {
      const Real* start = static_cast<const Real*>(plan.start_v);
      previous_v_.assign(start, start + plan.slot_values);
    }
    if (plan.calm_images_at_start.size() == plan.members) calm_images_ = plan.calm_images_at_start;
    if (plan.settled_at_start.size() == plan.members) settled_ = plan.settled_at_start;
  }

  // Fills slot.statistics; returns the members that settled at this image.
  std::vector<std::size_t> measure(ImageSlot<Real>& slot, ImageSource<Real>& source,
                                   Agreement& agreement) {
    const analysis::HistogramSpec& spec = *plan_.statistics;
    std::vector<analysis::ImageSums> sums;
    std::vector<const Real*> member_v(plan_.members);
    if (at_source_) {
      sums = source.measured();
      if (sums.size() != plan_.members) {
        throw std::runtime_error("statistics: the engine measured " + std::to_string(sums.size()) +
                                 " members of an image of " + std::to_string(plan_.members));
      }
      for (std::size_t m = 0; m < plan_.members; ++m)
        member_v[m] = slot.v.empty() ? nullptr : slot.v.data() + m * cells_;
    } else {
      const bool has_previous = previous_v_.size() == plan_.slot_values;
      if (!has_previous) previous_v_.resize(plan_.slot_values);
      sums.resize(plan_.members);
      for (std::size_t m = 0; m < plan_.members; ++m) {
        const std::size_t offset = m * cells_;
        HeldState<Real> fields = source.held_state(m);
        if (fields.u == nullptr) fields = {slot.u.data() + offset, slot.v.data() + offset};
        member_v[m] = fields.v;
        if (!has_previous) std::copy_n(fields.v, cells_, previous_v_.data() + offset);
        // The previous image's v takes this one's while it is read: one pass for both.
        sums[m] = analysis::member_sums<Real>(
            spec, fields.u, fields.v, has_previous ? previous_v_.data() + offset : nullptr, cells_);
      }
    }
    agreement.combine(sums);
    // The first image of a continued run without its start's v measures no change: steps since
    // the checkpoint are known, the state there is not kept.
    const std::int64_t steps = plan_.steps_per_image;
    slot.statistics.resize(plan_.members);
    std::vector<std::size_t> newly_settled;
    for (std::size_t m = 0; m < plan_.members; ++m)
      slot.statistics[m] = analysis::finish(sums[m], steps);
    if (plan_.classify) {
      // Members side by side (a sweep's map); one member's objects and holes are labelled side by
      // side inside analysis::classify instead.
      const auto members = static_cast<std::int64_t>(plan_.members);
      std::vector<std::exception_ptr> errors(plan_.members);
#pragma omp parallel for schedule(dynamic) if (members > 1)
      for (std::int64_t m = 0; m < members; ++m) {
        const auto member = static_cast<std::size_t>(m);
        try {
          classify(slot.statistics[member], member_v[member]);
        } catch (...) {
          errors[member] = std::current_exception();  // no exception may leave the region
        }
      }
      for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
    }
    for (std::size_t m = 0; m < plan_.members; ++m) {
      if (!plan_.steady.enabled() || settled_[m]) continue;
      const double change = slot.statistics[m].change_rms_per_step;
      calm_images_[m] = plan_.steady.calm(change) ? calm_images_[m] + 1 : 0;
      if (calm_images_[m] >= plan_.steady.images) {
        settled_[m] = true;
        newly_settled.push_back(m);
      }
    }
    return newly_settled;
  }

  void classify(analysis::ImageStatistics& s, const Real* v) const {
    // A member whose values are not finite (a sweep's that diverged) has no class.
    if (!(std::isfinite(s.v_min) && std::isfinite(s.v_max) && std::isfinite(s.v_mean))) return;
    const analysis::Classification c =
        analysis::classify(std::span<const Real>(v, cells_), plan_.grid.rows, plan_.grid.cols,
                           plan_.periodic, s.change_rms_per_step);
    s.pattern_class = static_cast<int>(c.pattern);
    s.covered = c.features.covered;
    s.objects = static_cast<double>(c.features.objects.count);
    s.holes = static_cast<double>(c.features.holes.count);
    s.object_mean_area = c.features.objects.mean_area;
    // The minority phase's, as classify() reads it.
    s.round_fraction = c.features.covered > 0.5 ? c.features.holes.round_fraction
                                                : c.features.objects.round_fraction;
  }

  bool all_settled() const {
    return std::all_of(settled_.begin(), settled_.end(), [](bool s) { return s; });
  }

 private:
  const LoopPlan& plan_;
  bool at_source_;
  std::size_t cells_;
  std::vector<Real> previous_v_;
  std::vector<std::int64_t> calm_images_;
  std::vector<bool> settled_;
};
}  // namespace detail

inline std::int64_t slot_step(std::int64_t image, const LoopPlan& plan) {
  return (image + 1) * plan.steps_per_image;
}

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
  // The fields every image carries: the ones written, and both when the loop measures the
  // statistics from them. A host engine's state is read in place (held_state); a device engine
  // measures its images where they are; other sources copy both fields. Classes are found from
  // v on the host.
  const bool held = source.held_state(0).u != nullptr;
  const bool measured_at_source =
      plan.statistics && !held &&
      source.measure_captures(*plan.statistics, plan.start_v != nullptr);
  FieldSet image_fields = plan.fields;
  if (plan.statistics && !held && !measured_at_source) image_fields = {true, true};
  if (measured_at_source && plan.classify) image_fields.v = true;
  std::optional<ImageMeasure<Real>> measure;
  if (plan.statistics) measure.emplace(plan, measured_at_source);
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
  const auto advance = [&] {
    outcome.steps += plan.steps_per_image;  // counted first: a failed advance leaves no state
    timed(outcome.times.stepping, [&] { source.advance(plan.steps_per_image); });
  };
  LoopTimes& times = outcome.times;
  Clock::time_point last_checkpoint = Clock::now(), last_durable = Clock::now();
  bool next_issued = false;
  try {
    for (std::int64_t i = plan.first_image; i < plan.images; ++i) {
      if (!next_issued) advance();
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
      const FieldSet captured = checkpoint ? FieldSet{true, true} : image_fields;
      timed(times.reading, [&] { source.capture(captured); });
      // Not with a settling criterion either: this image may be the last.
      if (source.asynchronous() && !last && !interrupt && !plan.on_image_held &&
          !(plan.steady.enabled() && plan.stop_once_settled)) {
        // The next image's steps run while this one travels to the writer.
        advance();
        next_issued = true;
      }

      const bool extra_field = (captured.u && !image_fields.u) || (captured.v && !image_fields.v);
      std::optional<ImageSlot<Real>> slot;  // none once the writer stopped
      timed(times.waiting, [&] {
        if (extra_field) queue.drain_and_free_buffers();
        slot = queue.acquire();
      });
      const Clock::time_point reading_from = Clock::now();
      double measured_for = 0;
      unsigned after = 0;
      std::string reason, held_reason;
      std::exception_ptr error;
      bool every_member_settled = false;
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
          slot->statistics.clear();
          slot->settled_members.clear();
          if (measure) {
            const Clock::time_point measuring_from = Clock::now();
            slot->settled_members = measure->measure(*slot, source, agreement);
            measured_for = seconds_since(measuring_from);
            for (std::size_t m : slot->settled_members) {
              if (plan.on_member_settled) plan.on_member_settled(m, i);
            }
            every_member_settled =
                plan.steady.enabled() && plan.stop_once_settled && measure->all_settled();
          }
          reason = sink.inspect(*slot);
          if (reason.empty() && plan.on_image_held) {
            held_reason = plan.on_image_held(
                LoopImage{i, slot->step, captured.u ? slot->u.data() : nullptr,
                          captured.v ? slot->v.data() : nullptr, slot->statistics});
          }
        } catch (...) {
          error = std::current_exception();
        }
      }
      times.reading += seconds_since(reading_from) - measured_for;
      times.measuring += measured_for;
      if (!slot) after |= WriterGone;
      if (!reason.empty()) after |= Stop;
      if (error) after |= Failed;
      if (!held_reason.empty()) after |= Held;
      if (every_member_settled && !last) after |= Settled;
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
      if (agreed & (Held | Settled)) {
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
        slot->settled = (agreed & Settled) != 0;
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
      if (agreed & Settled) {
        outcome.settled = true;
        // Counted as the other stops are ("stopped after image N"): the images written.
        outcome.stop_reason = "settled after image " + std::to_string(i + 1) + " (step " +
                              std::to_string(slot_step(i, plan)) +
                              "): the change of v per step stayed below " +
                              shortest_text(plan.steady.tolerance) + " for " +
                              std::to_string(plan.steady.images) + " images";
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
