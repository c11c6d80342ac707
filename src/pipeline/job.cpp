#include "pipeline/job.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>
#include <optional>
#include <utility>

#include "engine/registry.hpp"
#include "io/files/output_path.hpp"
#include "io/files/run_file.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/state_memory.hpp"
#include "pipeline/stop_signal.hpp"
#include "pipeline/sweep.hpp"

namespace grayscott::pipeline {

namespace {

// Seconds between laps, on a steady clock.
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// "after image N", and in a file of many members which ones: "after image N of members 4 to 7".
std::string after_image(std::int64_t images_done, const Job& job, std::int64_t first,
                        std::int64_t count) {
  std::string where = "after image " + std::to_string(images_done);
  if (!job.one_simulation) {
    where += " of members " + std::to_string(first) + " to " + std::to_string(first + count - 1);
  }
  return where;
}

// A stop's status from where it happened ("after image N ...", "before members ...").
std::string interrupted_at(int signal, const std::string& where) {
  return "interrupted by " + signal_name(signal) + " " + where;
}
std::string stopped_by_error_at(const std::string& where, const std::string& error) {
  return "stopped " + where + " by an error: " + error;
}

}  // namespace

void check_image_schedule(std::int64_t images, std::int64_t steps_per_image) {
  if (images <= 0) throw InvalidInput("images must be a positive integer");
  if (steps_per_image <= 0) throw InvalidInput("steps-per-image must be a positive integer");
  constexpr std::int64_t max_steps = std::int64_t{1} << 53;
  if (steps_per_image > max_steps / images) {
    throw InvalidInput("images x steps-per-image must be at most 2^53 steps, got " +
                       std::to_string(images) + " x " + std::to_string(steps_per_image));
  }
}

std::string error_message(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "an error ended the run";
}

std::string interrupted_status(int signal, std::int64_t images_done) {
  return interrupted_at(signal, "after image " + std::to_string(images_done));
}

std::uint64_t batch_memory_limit(const Job& job, const Backend& backend, int processes_per_node) {
  if (job.max_batch_bytes == 0)
    return default_batch_memory(backend, processes_per_node, job.engine.device);
  // A limit beyond the memory there is lets batches grow until the kernel's out-of-memory killer
  // ends the run, images lost: refused before anything is computed, as a state too big is.
  const auto sharing = static_cast<std::uint64_t>(std::max(processes_per_node, 1));
  const bool device = backend.on_device();
  const std::uint64_t available =
      available_memory_for(backend, job.engine.device) / (device ? 1 : sharing);
  if (available != 0 && job.max_batch_bytes > available) {
    throw OutOfMemory("max-batch-memory: " + io::format_bytes(job.max_batch_bytes) +
                      " is more than the " + io::format_bytes(available) + " of " +
                      (device ? "device" : "host") + " memory available" +
                      (!device && sharing > 1
                           ? " to each of this node's " + std::to_string(sharing) + " processes"
                           : ""));
  }
  return job.max_batch_bytes;
}

template <class Real>
const Backend& Alone<Real>::choose_backend(Job& job) {
  if (this->given_) return find_backend(this->given_->backend());
  const BackendChoice choice = grayscott::choose_backend(job.engine, job.problem, 1);
  job.engine.backend = choice.backend->name();
  if (!choice.notice.empty() && !job.quiet) {
    std::fprintf(stderr, "grayscott: %s\n", choice.notice.c_str());
  }
  return *choice.backend;
}

template <class Real>
void Placement<Real>::check_state_memory(const Job& job) const {
  if (!job.one_simulation) return;  // a sweep's batches are sized to the memory
  const int images =
      held_images(job.fields, job.analysis.statistics.has_value(), static_cast<bool>(job.on_image));
  if (given_ == nullptr) {
    check_state_fits(job.problem, 1, job.engine, 0, images);
  } else {
    check_images_fit(job.problem, 1, images);  // the state is the given engine's, held already
  }
}

template <class Real>
io::RunFileAccess Placement<Real>::file_access() {
  return {};
}

template <class Real>
void custom_initial_state(const Job& job, const JobFile<Real>& file, const BlockPlace& block,
                          std::vector<Real>& u, std::vector<Real>& v) {
  if (job.resume) {
    file.read_initial_state(block, u, v);
    return;
  }
  if (!job.custom_initial) throw std::logic_error("a custom initial state without its values");
  const std::size_t cells = block.rows > 0 ? static_cast<std::size_t>(block.cells())
                                           : static_cast<std::size_t>(job.problem.grid.cells());
  u.resize(cells);
  v.resize(cells);
  job.custom_initial(u.data(), v.data());
}

template <class Real>
Batch<Real> Placement<Real>::make_batch(const Job& job, std::int64_t first, std::int64_t count,
                                        std::int64_t from_image, const JobFile<Real>& file,
                                        RunTimes& times) {
  Stopwatch clock;
  Batch<Real> batch;
  Engine<Real>* engine = given_;
  if (engine == nullptr) {
    const auto begin = job.member_params.begin() + first;
    const std::vector<Parameters> params(begin, begin + count);
    batch.engine = make_engine<Real>(job.problem, params, job.engine);
    engine = batch.engine.get();
  }
  times.engine += clock.lap();
  const auto cells = static_cast<std::size_t>(job.problem.grid.cells());
  if (from_image > 0) {
    std::vector<Real> u, v;
    file.read_checkpoint(first, count, BlockPlace{}, u, v);
    for (std::int64_t m = 0; m < count; ++m) {
      const std::size_t offset = static_cast<std::size_t>(m) * cells;
      engine->load(static_cast<std::size_t>(m), {u.data() + offset, cells},
                   {v.data() + offset, cells});
    }
  } else if (job.member_initial.front().kind == InitialKind::Custom) {
    // A run's state as it was given (one member): held by a given engine already, unless the
    // run continues its file, which stores it.
    if (given_ == nullptr || job.resume) {
      std::vector<Real> u, v;
      custom_initial_state(job, file, BlockPlace{}, u, v);
      engine->load(0, u, v);
    }
  } else if (given_ == nullptr || job.resume) {
    // A given engine holds the state to start from, unless it continues a file.
    const typename Engine<Real>::StateView state = engine->state();
    std::vector<Real> u, v;
    if (state.on_device) {
      u.resize(cells);
      v.resize(cells);
    }
    for (std::int64_t m = 0; m < count; ++m) {
      const InitialState& initial = job.member_initial[static_cast<std::size_t>(first + m)];
      if (!state.on_device) {
        // Straight into a host engine's state: two fields fewer to allocate and touch.
        const std::size_t offset = static_cast<std::size_t>(m) * state.member_stride;
        fill_initial_state<Real>(job.problem.grid, initial, {state.u + offset, cells},
                                 {state.v + offset, cells});
      } else {
        fill_initial_state<Real>(job.problem.grid, initial, u, v);
        engine->load(static_cast<std::size_t>(m), u, v);
      }
    }
  }
  times.initial_state += clock.lap();
  batch.source = std::make_unique<EngineSource<Real>>(*engine, cells);
  batch.cells = cells;
  batch.read_state = [engine, cells](Real* u, Real* v) {
    for (std::size_t m = 0; m < engine->members(); ++m)
      engine->copy_state(m, u ? u + m * cells : nullptr, v ? v + m * cells : nullptr);
  };
  batch.freeze = [engine](std::size_t member) { engine->freeze(member); };
  return batch;
}

template <class Real>
JobSummary run_job(Job job, JobFile<Real>& file, Placement<Real>& place) {
  // The request, the backend, the file it continues or the path it claims: each agreed on by
  // every process before the next, so that all fail alike and before anything is computed.
  place.agree([&] {
    file.validate();
    place.validate(job);
  });
  const Backend& backend = place.choose_backend(job);
  const std::int64_t begin = place.members_begin(job), end = place.members_end(job);
  std::int64_t batch_size = 1;
  place.agree([&] { place.check_state_memory(job); });  // before the output is claimed
  place.agree([&] {
    if (!job.one_simulation) {
      batch_size =
          batch_members(std::max<std::int64_t>(end - begin, 1), file.bytes_per_member(),
                        place.batch_memory(job, backend), backend.members_per_engine(job.problem));
    }
    file.check_or_claim(place.root(), place.shares_file());
  });
  if (place.shares_file() && file.needs_chunks_placed()) {
    // The processes write only into placed chunks: one places those the file lacks, once every
    // process has read it (and closed it: HDF5 locks a file that another process writes).
    place.agree([&] {
      if (place.root()) file.place_chunks();
    });
  }

  RunTimes times;
  const auto start_of = [&](std::int64_t member) { return file.start_image(member); };
  // The next batch from `first`: consecutive members that start from the same image.
  const auto batch_count = [&](std::int64_t first) {
    std::int64_t count = 1;
    while (count < batch_size && first + count < end && start_of(first + count) == start_of(first))
      ++count;
    return count;
  };
  std::int64_t first = begin;
  // Members complete already are skipped (a grid over ranks has one member: its batch is made
  // collectively whatever its state, since the file is opened through it).
  if (!place.collective_batches())
    while (first < end && start_of(first) >= job.images) ++first;
  // The first batch is made before the file is opened, so that an engine that cannot be made
  // leaves no file; where making it is collective (a grid over ranks), its errors are agreed on.
  std::optional<Batch<Real>> batch;
  const auto make_next = [&] {
    batch.reset();  // its memory free before the next is made
    batch = place.make_batch(job, first, batch_count(first), start_of(first), file, times);
  };
  if (place.collective_batches()) {
    place.agree(make_next);
  } else if (!place.shares_file() && first < end) {
    make_next();
  }
  Stopwatch clock;
  place.agree([&] { file.open(std::string(backend.name()), place.file_access()); });
  times.file_open = clock.lap();

  // Each of this process's members in batches, without talking to other processes but through
  // the loop's agreement (a grid over ranks).
  const double cell_updates_per_member_image =
      static_cast<double>(job.problem.grid.cells()) * static_cast<double>(job.steps_per_image);
  // Member-images this process has to do, and had done before (a continued file's).
  std::int64_t remaining = 0, done_before = 0;
  for (std::int64_t m = begin; m < end; ++m) {
    remaining += job.images - start_of(m);
    done_before += start_of(m);
  }
  Progress progress(remaining, cell_updates_per_member_image,
                    place.draws_progress() && !job.on_progress && !job.quiet && ::isatty(2));
  std::vector<std::int64_t> no_nonfinite(static_cast<std::size_t>(job.members()), -1);
  std::vector<std::int64_t>& nonfinite =
      file.nonfinite_images() ? *file.nonfinite_images() : no_nonfinite;
  LoopOutcome outcome;
  std::int64_t member_images_done = 0, batches = 0, stopped_first = first, stopped_count = 1;
  // The member-images stepped (the rate's): a settled member of a sweep is stepped no more, while
  // its images, which repeat its state, are still written and counted as done.
  std::int64_t member_images_stepped = 0;
  std::exception_ptr error = capture_error([&] {
    if (!job.resume && job.one_simulation &&
        job.member_initial.front().kind == InitialKind::Custom) {
      // Not made from the file's attributes: stored, durable before the first image (a write
      // that fails ends the run as any of its writes would).
      place.agree([&] {
        std::vector<Real> u(batch->cells), v(batch->cells);
        batch->read_state(u.data(), v.data());
        file.write_initial_state(u.data(), v.data());
      });
    }
    place.before_members();
    while (first < end && !outcome.stopped()) {
      const std::int64_t from = start_of(first);
      if (from >= job.images) {
        ++first;
        continue;
      }
      if (!batch) make_next();
      const std::int64_t count = batch_count(first);
      const std::size_t cells = batch->cells;
      ++batches;
      std::vector<Real> start_v;
      LoopPlan plan;
      plan.first_image = from;
      plan.images = job.images;
      plan.steps_per_image = job.steps_per_image;
      plan.fields = job.fields;
      plan.slot_values = static_cast<std::size_t>(count) * cells;
      plan.members = static_cast<std::size_t>(count);
      plan.save = job.save;
      plan.on_image_held = job.on_image;
      plan.statistics = job.analysis.statistics;
      plan.steady = job.analysis.steady;
      plan.classify = job.analysis.classify;
      plan.grid = job.problem.grid;
      plan.periodic = job.problem.boundary == Boundary::Periodic;
      plan.stop_once_settled = job.one_simulation;
      // Members stepped; of them, those settled at this image, and at the one before. A device
      // source has the next image's steps issued before this image is measured: a member that
      // settles is stepped one image more there.
      std::int64_t stepping = count, settling = 0, settled_before = 0;
      const bool issued_ahead = batch->source->asynchronous();
      if (!job.one_simulation) {
        // A member that settled is stepped no more (where the backend can leave it out): the
        // batch's time falls with the members still changing. Its later images repeat its state.
        plan.on_member_settled = [&](std::size_t member, std::int64_t) {
          batch->freeze(member);
          ++settling;  // stepped for this image, not for the next
        };
      }
      if (plan.steady.enabled() && from > 0) {
        // A continued job settles where an uninterrupted one does: each member's calm images
        // before the checkpoint count, and a member that had settled stays frozen.
        plan.calm_images_at_start.resize(static_cast<std::size_t>(count));
        plan.settled_at_start.resize(static_cast<std::size_t>(count));
        for (std::int64_t m = 0; m < count; ++m) {
          const SteadyStart start = file.steady_start(first + m, job.analysis.steady);
          plan.calm_images_at_start[static_cast<std::size_t>(m)] = start.calm_images;
          plan.settled_at_start[static_cast<std::size_t>(m)] = start.settled;
          if (start.settled && !job.one_simulation) {
            batch->freeze(static_cast<std::size_t>(m));
            --stepping;
          }
        }
      }
      if (plan.statistics) {
        // The state the loop starts from, for the first image's change.
        start_v.resize(plan.slot_values);
        batch->read_state(nullptr, start_v.data());
        plan.start_v = start_v.data();
      }
      plan.on_image = [&](std::int64_t) {
        member_images_done += count;
        member_images_stepped += stepping;
        if (issued_ahead) {
          stepping -= std::exchange(settled_before, std::exchange(settling, 0));
        } else {
          stepping -= std::exchange(settling, 0);
        }
        if (job.on_progress)
          job.on_progress(done_before + member_images_done, done_before + remaining);
        else
          progress.update(member_images_done);
      };
      place.adjust_plan(plan);
      const std::unique_ptr<ImageSink<Real>> sink =
          file.sink(first, count, cells, place.checks_before_handover());
      outcome = run_image_loop<Real>(*batch->source, *sink, plan, place.loop_agreement());
      times.loop += clock.lap();
      times.in_loop = outcome.times;
      batch.reset();
      stopped_first = first;
      stopped_count = count;
      first += count;
    }
  });
  // A write that failed says more than what it stopped (the stepping thread then finds the queue
  // closed).
  if (!error) error = outcome.writer_error ? outcome.writer_error : outcome.stepping_error;
  progress.clear();

  // How it ended, in the same words on every process; the file closed with it.
  // Complete: every batch's loop ran to the last image (a loop ends early only when it stops).
  // Stopped, a sweep's images not yet reached stay unwritten, taking no disk and no time (writing
  // them NaN wrote the rest of the file, tens of gigabytes and minutes after a time limit's
  // SIGTERM); /images_written says what is the sweep's, and a continuation writes the rest.
  const bool complete_here = !error && !outcome.stopped() && first >= end;
  // A run counts the images its file holds (those a failed write did not keep are not done).
  const std::int64_t images_done = job.one_simulation ? file.images_written() : outcome.images_done;
  // An error outside a loop (a batch that could not be made) stopped the members from `first` on.
  const std::string where =
      outcome.stopped() || job.one_simulation
          ? after_image(images_done, job, stopped_first, stopped_count)
          : "before members " + std::to_string(first) + " to " + std::to_string(end - 1);
  // A stop a front end asked for, naming its cause, is not an interruption.
  const std::string cause = outcome.signal != 0 ? stop_cause() : std::string();
  const std::string local_status = complete_here                  ? "complete"
                                   : !outcome.stop_reason.empty() ? outcome.stop_reason
                                   : outcome.signal != 0 && !error
                                       ? (cause.empty() ? interrupted_at(outcome.signal, where)
                                                        : "stopped " + where + ": " + cause)
                                       : stopped_by_error_at(where, place.error_text(error));
  JobSummary summary;
  summary.status = place.agreed_status(local_status, complete_here);
  place.merge_nonfinite(nonfinite);
  // The job's error first (a file that could not record how it ended says so in it), then any
  // of closing the file.
  std::exception_ptr reported = error;
  const std::exception_ptr finish_error =
      capture_error([&] { reported = file.finish(summary.status, error); });
  times.file_close = clock.lap();
  if (reported && reported == outcome.writer_error && job.one_simulation) {
    // A write that failed names the image it was writing; the file keeps those flushed before,
    // fewer where the disk filled up under the images in flight: said with it.
    try {
      std::rethrow_exception(reported);
    } catch (const InvalidInput&) {
    } catch (const std::bad_alloc&) {  // kept as it is: MemoryError in Python
    } catch (const std::exception& e) {
      const std::int64_t kept = file.images_written();
      reported = std::make_exception_ptr(
          std::runtime_error(std::string(e.what()) + "; the file keeps " +
                             (kept == 0   ? std::string("no image")
                              : kept == 1 ? std::string("its first image")
                                          : "its first " + std::to_string(kept) + " images")));
    }
  }
  place.agree_on(reported);
  place.agree_on(finish_error);

  summary.times = times;
  summary.backend = std::string(backend.name());
  summary.members = job.members();
  summary.batch_size = batch_size;
  summary.batches = place.most(batches);
  summary.first_image = job.members() == 1 ? start_of(0) : 0;
  summary.images_written = file.images_written();
  summary.checkpoint_images = file.checkpoint_images();
  summary.state_step = (summary.first_image * job.steps_per_image) + outcome.steps;
  summary.nonfinite_members =
      std::count_if(nonfinite.begin(), nonfinite.end(), [](std::int64_t i) { return i >= 0; });
  summary.completed = summary.status == "complete";
  summary.settled = summary.status.starts_with("settled after image ");
  summary.signal = static_cast<int>(place.most(cause.empty() ? outcome.signal : 0));
  summary.seconds = place.slowest(progress.elapsed_seconds());
  const std::int64_t job_member_images = place.member_images(member_images_stepped);
  summary.cell_updates_per_s =
      summary.seconds > 0
          ? static_cast<double>(job_member_images) * cell_updates_per_member_image / summary.seconds
          : 0;
  if (place.root() && !job.quiet) place.report();
  return summary;
}

template void custom_initial_state(const Job&, const JobFile<float>&, const BlockPlace&,
                                   std::vector<float>&, std::vector<float>&);
template void custom_initial_state(const Job&, const JobFile<double>&, const BlockPlace&,
                                   std::vector<double>&, std::vector<double>&);
template class Placement<float>;
template class Placement<double>;
template class Alone<float>;
template class Alone<double>;
template JobSummary run_job(Job, JobFile<float>&, Placement<float>&);
template JobSummary run_job(Job, JobFile<double>&, Placement<double>&);

}  // namespace grayscott::pipeline
