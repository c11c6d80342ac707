#include "pipeline/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/files/output_path.hpp"
#include "io/files/run_file.hpp"
#include "io/files/sweep_file.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/run.hpp"

namespace grayscott::pipeline {

namespace {
// The most members a sweep may have: beyond this the request is surely a typo.
constexpr double max_members = 1'000'000;
}  // namespace

std::vector<SweepMember> cross_members(const std::vector<double>& feeds,
                                       const std::vector<double>& kills,
                                       const std::vector<std::uint64_t>& seeds) {
  const double total = static_cast<double>(feeds.size()) * static_cast<double>(kills.size()) *
                       static_cast<double>(seeds.size());
  if (total > max_members) {
    throw InvalidInput("the sweep has " + std::to_string(static_cast<long long>(total)) +
                       " members, more than " +
                       std::to_string(static_cast<long long>(max_members)));
  }
  std::vector<SweepMember> members;
  members.reserve(static_cast<std::size_t>(total));
  for (std::uint64_t seed : seeds) {
    for (double feed : feeds) {
      for (double kill : kills) members.push_back({feed, kill, seed});
    }
  }
  return members;
}

std::uint64_t sweep_bytes_per_member(const Problem& problem, FieldSet fields) {
  const double value = problem.precision == Precision::Single ? 4 : 8;
  const double written = (fields.u ? 1 : 0) + (fields.v ? 1 : 0);
  // Engine: u and v twice (current and next) plus a capture buffer each; writer queue: three
  // slots of the fields written. In floating point: a grid of up to 2^62 cells must not wrap
  // around to a size that fits the memory.
  const double bytes = value * static_cast<double>(problem.grid.rows) *
                       static_cast<double>(problem.grid.cols) * (6 + 3 * written);
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

std::uint64_t default_batch_memory(const Backend& backend, int processes_per_node, int device) {
  const auto sharing = static_cast<std::uint64_t>(std::max(processes_per_node, 1));
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  std::uint64_t limit = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) *
                                                    static_cast<std::uint64_t>(page) / 2
                                              : std::uint64_t{4} << 30;
  limit /= sharing;
  const auto devices = static_cast<std::uint64_t>(backend.on_device() ? backend.device_count() : 0);
  if (devices > 0) {
    // The processes of a node take the devices in turn: this many share each.
    const std::uint64_t per_device = (sharing + devices - 1) / devices;
    limit = std::min<std::uint64_t>(limit, backend.free_memory(device) / 4 * 3 / per_device);
  }
  return limit;
}

std::int64_t batch_members(std::int64_t members, std::uint64_t bytes_per_member,
                           std::uint64_t max_bytes, std::uint64_t max_members) {
  if (bytes_per_member > max_bytes) {
    throw InvalidInput("one member needs " + io::format_bytes(bytes_per_member) +
                       ", more than the batch memory limit of " + io::format_bytes(max_bytes) +
                       " (--max-batch-memory)");
  }
  const auto fit = static_cast<std::int64_t>(std::min<std::uint64_t>(
      {max_bytes / bytes_per_member, max_members, static_cast<std::uint64_t>(members)}));
  const std::int64_t batches = (members + fit - 1) / fit;
  return (members + batches - 1) / batches;
}

namespace {

// A sweep file, written a batch of consecutive members at a time. A member that blows up does not
// stop the others: its first non-finite image is recorded (nonfinite_image) and the sweep goes on.
template <class Real>
class SweepFileSink final : public ImageSink<Real> {
 public:
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
    for (std::int64_t m = 0; m < count_; ++m) {
      images_written_[static_cast<std::size_t>(m)] = slot.index + 1;
    }
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
  std::vector<std::int64_t>& images_written_;  // this batch's members
};

}  // namespace

template <class Real>
SweepPart run_sweep_members(
    const SweepRequest& request, std::int64_t begin, std::int64_t end, std::int64_t batch_size,
    const std::function<io::SweepFileWriter&(const std::string&)>& open_file,
    std::vector<std::int64_t>& nonfinite, Progress& progress) {
  const Problem& problem = request.problem;
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  SweepPart part;
  part.images_written.assign(static_cast<std::size_t>(std::max<std::int64_t>(end - begin, 0)), 0);
  const auto start_of = [&](std::int64_t m) {
    return request.start_images.empty() ? std::int64_t{0}
                                        : request.start_images[static_cast<std::size_t>(m)];
  };
  for (std::int64_t first = begin; first < end && !part.outcome.stopped();) {
    // A batch: consecutive members that start from the same image (all of them, unless the sweep
    // continues from its checkpoints); members already complete are skipped.
    const std::int64_t from = start_of(first);
    if (from >= request.images) {
      part.images_written[static_cast<std::size_t>(first - begin)] = request.images;
      ++first;
      continue;
    }
    std::int64_t count = 1;
    while (count < batch_size && first + count < end && start_of(first + count) == from) ++count;
    std::vector<Parameters> params(static_cast<std::size_t>(count), problem.params);
    for (std::int64_t m = 0; m < count; ++m) {
      const SweepMember& member = request.members[static_cast<std::size_t>(first + m)];
      params[static_cast<std::size_t>(m)].feed = member.feed;
      params[static_cast<std::size_t>(m)].kill = member.kill;
    }
    auto engine = make_engine<Real>(problem, params, request.engine);
    part.backend = engine->backend();
    io::SweepFileWriter& file = open_file(part.backend);
    if (from > 0) {
      std::vector<Real> u, v;
      io::read_sweep_checkpoint<Real>(request.output, first, count, u, v);
      for (std::int64_t m = 0; m < count; ++m) {
        const auto offset = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(m) * cells);
        engine->load(static_cast<std::size_t>(m), {u.data() + offset, cells},
                     {v.data() + offset, cells});
      }
    } else {
      std::vector<Real> u(cells), v(cells);
      for (std::int64_t m = 0; m < count; ++m) {
        const SweepMember& member = request.members[static_cast<std::size_t>(first + m)];
        fill_initial_state<Real>(problem.grid,
                                 {request.init.kind, member.seed, request.init.values}, u, v);
        engine->load(static_cast<std::size_t>(m), u, v);
      }
    }
    // Every member's v where the loop starts, for the first image's change.
    std::vector<Real> start_v;
    if (request.analysis.statistics) {
      start_v.resize(static_cast<std::size_t>(count) * cells);
      for (std::int64_t m = 0; m < count; ++m) {
        engine->copy_state(static_cast<std::size_t>(m), nullptr,
                           start_v.data() + static_cast<std::size_t>(m) * cells);
      }
    }
    ++part.batches;
    std::vector<std::int64_t> batch_written(static_cast<std::size_t>(count), from);
    EngineSource<Real> source(*engine, cells);
    SweepFileSink<Real> sink(file, request.fields, first, count, cells, nonfinite, batch_written);
    LoopPlan plan;
    plan.first_image = from;
    plan.images = request.images;
    plan.steps_per_image = request.steps_per_image;
    plan.fields = request.fields;
    plan.slot_values = static_cast<std::size_t>(count) * cells;
    plan.save = request.save;
    plan.on_image = [&](std::int64_t) {
      part.member_images_done += count;
      progress.update(part.member_images_done);
    };
    plan.statistics = request.analysis.statistics;
    plan.steady = request.analysis.steady;
    plan.stop_once_settled = false;
    plan.classify = request.analysis.classify;
    plan.grid = problem.grid;
    plan.periodic = problem.boundary == Boundary::Periodic;
    plan.members = static_cast<std::size_t>(count);
    plan.start_v = start_v.empty() ? nullptr : start_v.data();
    // A member that settled is stepped no more (where the backend can leave it out): the batch's
    // time falls with the members still changing. Its later images repeat its settled state.
    plan.on_member_settled = [&](std::size_t member, std::int64_t) { engine->freeze(member); };
    Agreement alone;
    part.outcome = run_image_loop<Real>(source, sink, plan, alone);
    std::copy(batch_written.begin(), batch_written.end(),
              part.images_written.begin() + (first - begin));
    if (part.outcome.signal != 0) {
      part.outcome.stop_reason = "interrupted by " + signal_name(part.outcome.signal) +
                                 " after image " + std::to_string(part.outcome.images_done) +
                                 " of members " + std::to_string(first) + " to " +
                                 std::to_string(first + count - 1);
    }
    first += count;
  }
  return part;
}

template SweepPart run_sweep_members<float>(
    const SweepRequest&, std::int64_t, std::int64_t, std::int64_t,
    const std::function<io::SweepFileWriter&(const std::string&)>&, std::vector<std::int64_t>&,
    Progress&);
template SweepPart run_sweep_members<double>(
    const SweepRequest&, std::int64_t, std::int64_t, std::int64_t,
    const std::function<io::SweepFileWriter&(const std::string&)>&, std::vector<std::int64_t>&,
    Progress&);

namespace {

template <class Real>
SweepSummary sweep_with(const SweepRequest& request, io::SweepMetadata meta,
                        std::int64_t batch_size) {
  const auto members = static_cast<std::int64_t>(request.members.size());
  const double cell_updates_per_member_image = static_cast<double>(request.problem.grid.cells()) *
                                               static_cast<double>(request.steps_per_image);
  std::vector<std::int64_t> nonfinite =
      request.resume ? request.nonfinite_image
                     : std::vector<std::int64_t>(static_cast<std::size_t>(members), -1);
  std::optional<io::SweepFileWriter> file;
  std::int64_t remaining = members * request.images;
  for (std::int64_t done : request.start_images) remaining -= done;
  Progress progress(remaining, cell_updates_per_member_image, !request.quiet && ::isatty(2));
  // The file is created once the first engine says what it runs on.
  const SweepPart part = run_sweep_members<Real>(
      request, 0, members, batch_size,
      [&](const std::string& backend) -> io::SweepFileWriter& {
        if (!file) {
          meta.backend = backend;
          if (request.resume)
            file.emplace(request.output, meta, io::SweepFileWriter::Continue{});
          else
            file.emplace(request.output, meta, request.overwrite);
        }
        return *file;
      },
      nonfinite, progress);
  progress.clear();

  SweepSummary summary;
  summary.backend = part.backend;
  summary.members = members;
  summary.batch_size = batch_size;
  summary.batches = part.batches;
  summary.seconds = progress.elapsed_seconds();
  summary.nonfinite_members =
      std::count_if(nonfinite.begin(), nonfinite.end(), [](std::int64_t i) { return i >= 0; });
  summary.signal = part.outcome.signal;
  summary.completed =
      !part.outcome.stopped() && std::all_of(part.images_written.begin(), part.images_written.end(),
                                             [&](std::int64_t n) { return n == request.images; });
  summary.status = summary.completed                   ? "complete"
                   : !part.outcome.stop_reason.empty() ? part.outcome.stop_reason
                                                       : "stopped: an error ended the sweep";
  if (file) file->finish(summary.status, nonfinite);
  if (part.outcome.stepping_error) std::rethrow_exception(part.outcome.stepping_error);
  if (part.outcome.writer_error) std::rethrow_exception(part.outcome.writer_error);
  summary.cell_updates_per_s = summary.seconds > 0
                                   ? static_cast<double>(part.member_images_done) *
                                         cell_updates_per_member_image / summary.seconds
                                   : 0;
  return summary;
}

}  // namespace

io::SweepMetadata sweep_metadata(const SweepRequest& request) {
  request.problem.validate();
  if (request.members.empty()) throw InvalidInput("the sweep has no members");
  if (request.images <= 0) throw InvalidInput("images must be a positive integer");
  if (request.steps_per_image <= 0)
    throw InvalidInput("steps-per-image must be a positive integer");
  if (!request.fields.u && !request.fields.v) throw InvalidInput("fields: name u, v or both");
  request.analysis.validate(request.problem, request.steps_per_image);
  io::SweepMetadata meta;
  meta.problem = request.problem;
  // Members differ only in feed and kill: the shared problem is validated once above, each
  // member's rates and stability limit (which feed and kill move) here, from the stencil's
  // spectral radius computed once, so that a million members take milliseconds.
  const double radius = -request.problem.stencil.symbol_range().lowest;
  const auto members = request.members.size();
  meta.feed.reserve(members);
  meta.kill.reserve(members);
  meta.seed.reserve(members);
  Parameters each = request.problem.params;
  for (const SweepMember& member : request.members) {
    each.feed = member.feed;
    each.kill = member.kill;
    each.validate();  // names the bad rate, e.g. a negative feed
    request.problem.check_stability(radius, each);
    meta.feed.push_back(member.feed);
    meta.kill.push_back(member.kill);
    meta.seed.push_back(member.seed);
  }
  meta.init = request.init;
  meta.analysis = file_attributes(request.analysis);
  meta.images = request.images;
  meta.steps_per_image = request.steps_per_image;
  meta.fields = request.fields;
  meta.version = version;
  return meta;
}

SweepRequest resume_sweep_request(const std::filesystem::path& path) {
  const io::SweepFileState state = io::read_sweep_state(path);
  if (state.status == "complete") {
    throw InvalidInput("nothing to resume: " + path.string() + " holds a complete sweep");
  }
  SweepRequest request;
  request.problem = state.meta.problem;
  for (std::size_t m = 0; m < state.meta.feed.size(); ++m) {
    request.members.push_back({state.meta.feed[m], state.meta.kill[m], state.meta.seed[m]});
  }
  request.init = state.meta.init;
  request.images = state.meta.images;
  request.steps_per_image = state.meta.steps_per_image;
  request.fields = state.meta.fields;
  request.analysis = analysis_request(state.meta.analysis);
  request.output = path;
  request.resume = true;
  request.start_images = state.checkpoint_images;
  request.nonfinite_image = state.nonfinite_image;
  request.every_chunk_placed = state.every_chunk_placed;
  return request;
}

SweepSummary execute_sweep(const SweepRequest& original) {
  io::SweepMetadata meta = sweep_metadata(original);
  // The backend is chosen once, for the grid: batches are sized to what one of its engines takes.
  SweepRequest request = original;
  const BackendChoice choice = choose_backend(request.engine, request.problem, 1);
  const Backend& backend = *choice.backend;
  request.engine.backend = backend.name();
  const std::uint64_t limit = request.max_batch_bytes > 0
                                  ? request.max_batch_bytes
                                  : default_batch_memory(backend, 1, request.engine.device);
  const std::int64_t batch_size =
      batch_members(static_cast<std::int64_t>(request.members.size()),
                    sweep_bytes_per_member(request.problem, request.fields), limit,
                    backend.members_per_engine(request.problem));
  if (!request.resume) {
    claim_output(request.output, request.overwrite, request.quiet, meta);
  }
  if (!choice.notice.empty() && !request.quiet) {
    std::fprintf(stderr, "grayscott: %s\n", choice.notice.c_str());
  }
  return request.problem.precision == Precision::Single
             ? sweep_with<float>(request, std::move(meta), batch_size)
             : sweep_with<double>(request, std::move(meta), batch_size);
}

}  // namespace grayscott::pipeline
