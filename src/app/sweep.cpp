#include "app/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include "app/cli.hpp"
#include "app/image_stream.hpp"
#include "app/progress.hpp"
#include "app/version.hpp"
#include "engine/cuda/cuda_backend.hpp"
#include "io/run_file.hpp"
#include "io/sweep_file.hpp"

namespace grayscott::app {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(trim(text.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

double parse_number(std::string_view item, std::string_view what, std::string_view whole) {
  double value = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
  if (item.empty() || ec != std::errc{} || end != item.data() + item.size()) {
    throw InvalidInput(std::string(what) + ": " + in_quotes(item) + " in " + in_quotes(whole) +
                       " is not a number");
  }
  if (!std::isfinite(value)) {
    throw InvalidInput(std::string(what) + ": " + in_quotes(item) + " is not a finite number");
  }
  return value;
}

std::string shortest(double x) {
  char text[64];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, x);
  return std::string(text, end);
}

// The most values one option may produce: beyond this the request is surely a typo.
constexpr std::int64_t max_values = 1'000'000;

}  // namespace

std::vector<double> parse_value_set(std::string_view text, std::string_view what) {
  const std::string whole(text);
  text = trim(text);
  if (text.empty()) throw InvalidInput(std::string(what) + ": no value given");
  const std::string form =
      " (expected START:STOP:COUNT or a comma-separated list, got " + in_quotes(whole) + ")";
  if (text.find(':') != std::string_view::npos) {
    const auto parts = split(text, ':');
    if (parts.size() != 3 || text.find(',') != std::string_view::npos) {
      throw InvalidInput(std::string(what) + ": a range has three parts" + form);
    }
    const double start = parse_number(parts[0], what, whole);
    const double stop = parse_number(parts[1], what, whole);
    std::int64_t count = 0;
    const auto [end, ec] =
        std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), count);
    if (parts[2].empty() || ec != std::errc{} || end != parts[2].data() + parts[2].size()) {
      throw InvalidInput(std::string(what) + ": the count " + in_quotes(parts[2]) + " in " +
                         in_quotes(whole) + " is not a whole number");
    }
    if (count < 1) {
      throw InvalidInput(std::string(what) + ": the count must be at least 1, got " +
                         std::to_string(count) + " in " + in_quotes(whole));
    }
    if (count > max_values) {
      throw InvalidInput(std::string(what) + ": the count " + std::to_string(count) + " exceeds " +
                         std::to_string(max_values));
    }
    if (stop < start) {
      throw InvalidInput(std::string(what) + ": the range " + in_quotes(whole) +
                         " is reversed (STOP is below START)");
    }
    if (count == 1 && stop != start) {
      throw InvalidInput(std::string(what) + ": a range of one value needs START = STOP, got " +
                         in_quotes(whole));
    }
    if (count > 1 && stop == start) {
      throw InvalidInput(std::string(what) + ": START = STOP repeats one value " +
                         std::to_string(count) + " times in " + in_quotes(whole) +
                         " (use a count of 1)");
    }
    std::vector<double> values(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      values[static_cast<std::size_t>(i)] =
          i == count - 1
              ? stop
              : start + (stop - start) * (static_cast<double>(i) / static_cast<double>(count - 1));
    }
    return values;
  }
  std::vector<double> values;
  std::set<double> seen;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) {
      throw InvalidInput(std::string(what) + ": an empty item in " + in_quotes(whole) + form);
    }
    const double value = parse_number(item, what, whole);
    if (!seen.insert(value).second) {
      throw InvalidInput(std::string(what) + ": " + shortest(value) + " appears twice in " +
                         in_quotes(whole));
    }
    values.push_back(value);
  }
  return values;
}

std::vector<std::uint64_t> parse_seed_list(std::string_view text) {
  if (trim(text).empty()) throw InvalidInput("seeds: no value given");
  std::vector<std::uint64_t> seeds;
  std::set<std::uint64_t> seen;
  for (std::string_view item : split(text, ',')) {
    const std::uint64_t seed = parse_seed(item);
    if (!seen.insert(seed).second) {
      throw InvalidInput("seeds: " + std::to_string(seed) + " appears twice in " + in_quotes(text));
    }
    seeds.push_back(seed);
  }
  return seeds;
}

std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
  const std::string whole(text);
  text = trim(text);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
  double scale = 1;
  if (!unit.empty()) {
    const char letter = static_cast<char>(unit.front() & ~0x20);  // upper case
    const std::string_view rest = unit.substr(1);
    const bool known_suffix = rest.empty() || rest == "B" || rest == "iB" || rest == "b";
    scale = letter == 'K'                   ? 0x1p10
            : letter == 'M'                 ? 0x1p20
            : letter == 'G'                 ? 0x1p30
            : letter == 'T'                 ? 0x1p40
            : letter == 'B' && rest.empty() ? 1
                                            : 0;
    if (!known_suffix) scale = 0;
  }
  const double bytes = number * scale;
  if (text.empty() || ec != std::errc{} || scale == 0 || !(bytes >= 1) || bytes > 0x1p62) {
    throw InvalidInput(std::string(what) + ": expected a size such as 512M, 4G or 1.5GiB, got " +
                       in_quotes(whole));
  }
  return static_cast<std::uint64_t>(bytes);
}

std::vector<SweepMember> cross_members(const std::vector<double>& feeds,
                                       const std::vector<double>& kills,
                                       const std::vector<std::uint64_t>& seeds) {
  const double total = static_cast<double>(feeds.size()) * static_cast<double>(kills.size()) *
                       static_cast<double>(seeds.size());
  if (total > static_cast<double>(max_values)) {
    throw InvalidInput("the sweep has " + shortest(total) + " members, more than " +
                       std::to_string(max_values));
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

std::uint64_t default_batch_memory(BackendKind backend, int processes_per_node) {
  const auto sharing = static_cast<std::uint64_t>(std::max(processes_per_node, 1));
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  std::uint64_t limit = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) *
                                                    static_cast<std::uint64_t>(page) / 2
                                              : std::uint64_t{4} << 30;
  limit /= sharing;
  const bool cuda_runs =
      backend == BackendKind::Cuda || (backend == BackendKind::Auto && cuda::available(nullptr));
  if (cuda_runs) {
    try {
      const auto devices = cuda::devices();
      // The processes of a node take the devices in turn: this many share each.
      const std::uint64_t per_device = (sharing + devices.size() - 1) / devices.size();
      for (const auto& device : devices) {
        limit = std::min<std::uint64_t>(limit, device.memory_bytes / 4 * 3 / per_device);
      }
    } catch (const std::exception&) {
      // No device after all: the engine reports it when the sweep starts.
    }
  }
  return limit;
}

std::int64_t batch_members(std::int64_t members, std::uint64_t bytes_per_member,
                           std::uint64_t max_bytes) {
  if (bytes_per_member > max_bytes) {
    throw InvalidInput("one member needs " + io::format_bytes(bytes_per_member) +
                       ", more than the batch memory limit of " + io::format_bytes(max_bytes) +
                       " (--max-batch-memory)");
  }
  const auto fit = static_cast<std::int64_t>(
      std::min<std::uint64_t>(max_bytes / bytes_per_member, static_cast<std::uint64_t>(members)));
  const std::int64_t batches = (members + fit - 1) / fit;
  return (members + batches - 1) / batches;
}

template <class Real>
SweepPart run_sweep_members(
    const SweepRequest& request, std::int64_t begin, std::int64_t end, std::int64_t batch_size,
    const std::function<io::SweepFileWriter&(const std::string&)>& open_file,
    std::vector<std::int64_t>& nonfinite, Progress& progress) {
  const Problem& problem = request.problem;
  const auto cells = static_cast<std::size_t>(problem.grid.cells());
  SweepPart part;
  part.images_written.assign(static_cast<std::size_t>(std::max<std::int64_t>(end - begin, 0)), 0);
  for (std::int64_t first = begin; first < end && !part.outcome.stopped(); first += batch_size) {
    const std::int64_t count = std::min(batch_size, end - first);
    std::vector<Parameters> params(static_cast<std::size_t>(count), problem.params);
    for (std::int64_t m = 0; m < count; ++m) {
      const SweepMember& member = request.members[static_cast<std::size_t>(first + m)];
      params[static_cast<std::size_t>(m)].feed = member.feed;
      params[static_cast<std::size_t>(m)].kill = member.kill;
    }
    auto engine = make_engine<Real>(problem, params, request.engine);
    part.backend = engine->backend();
    io::SweepFileWriter& file = open_file(part.backend);
    {
      std::vector<Real> u(cells), v(cells);
      for (std::int64_t m = 0; m < count; ++m) {
        const SweepMember& member = request.members[static_cast<std::size_t>(first + m)];
        fill_initial_state<Real>(problem.grid, {request.init, member.seed}, u, v);
        engine->load(static_cast<std::size_t>(m), u, v);
      }
    }
    ++part.batches;
    part.outcome = stream_images<Real>(
        *engine, request.images, request.steps_per_image, request.fields,
        static_cast<std::size_t>(count) * cells,
        [&](ImageSlot<Real>& slot) {
          for (std::int64_t m = 0; m < count; ++m) {
            const std::size_t offset = static_cast<std::size_t>(m) * cells;
            engine->read_captured(static_cast<std::size_t>(m),
                                  slot.u.empty() ? nullptr : slot.u.data() + offset,
                                  slot.v.empty() ? nullptr : slot.v.data() + offset);
          }
        },
        [&](const ImageSlot<Real>& slot) -> std::string {
          // A member that blows up does not stop the others: its first non-finite image is
          // recorded in the file.
          for (std::int64_t m = 0; m < count; ++m) {
            auto& first_bad = nonfinite[static_cast<std::size_t>(first + m)];
            if (first_bad >= 0) continue;
            const std::size_t offset = static_cast<std::size_t>(m) * cells;
            const bool finite =
                (slot.u.empty() || all_finite<Real>({slot.u.data() + offset, cells})) &&
                (slot.v.empty() || all_finite<Real>({slot.v.data() + offset, cells}));
            if (!finite) first_bad = slot.index;
          }
          file.write_images(first, count, slot.index, slot.u.empty() ? nullptr : slot.u.data(),
                            slot.v.empty() ? nullptr : slot.v.data());
          for (std::int64_t m = 0; m < count; ++m) {
            part.images_written[static_cast<std::size_t>(first - begin + m)] = slot.index + 1;
          }
          return {};
        },
        [&](std::int64_t) {
          part.member_images_done += count;
          progress.update(part.member_images_done);
        });
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
  std::vector<std::int64_t> nonfinite(static_cast<std::size_t>(members), -1);
  std::optional<io::SweepFileWriter> file;
  Progress progress(members * request.images, cell_updates_per_member_image,
                    !request.quiet && ::isatty(2));
  // The file is created once the first engine says what it runs on.
  const SweepPart part = run_sweep_members<Real>(
      request, 0, members, batch_size,
      [&](const std::string& backend) -> io::SweepFileWriter& {
        if (!file) {
          meta.backend = backend;
          file.emplace(request.output, meta);
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
  summary.completed =
      !part.outcome.stopped() && part.member_images_done == members * request.images;
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
  io::SweepMetadata meta;
  meta.problem = request.problem;
  // Members differ only in feed and kill, which neither the grid nor the stability limit depend
  // on: the shared problem is validated once above, each member's rates alone here, so that a
  // million members take milliseconds.
  const auto members = request.members.size();
  meta.feed.reserve(members);
  meta.kill.reserve(members);
  meta.seed.reserve(members);
  Parameters each = request.problem.params;
  for (const SweepMember& member : request.members) {
    each.feed = member.feed;
    each.kill = member.kill;
    each.validate();  // names the bad rate, e.g. a negative feed
    meta.feed.push_back(member.feed);
    meta.kill.push_back(member.kill);
    meta.seed.push_back(member.seed);
  }
  meta.init = request.init;
  meta.images = request.images;
  meta.steps_per_image = request.steps_per_image;
  meta.fields = request.fields;
  meta.version = version;
  return meta;
}

SweepSummary execute_sweep(const SweepRequest& request) {
  io::SweepMetadata meta = sweep_metadata(request);
  const std::uint64_t limit = request.max_batch_bytes > 0
                                  ? request.max_batch_bytes
                                  : default_batch_memory(request.engine.backend);
  const std::int64_t batch_size =
      batch_members(static_cast<std::int64_t>(request.members.size()),
                    sweep_bytes_per_member(request.problem, request.fields), limit);
  io::check_output_path(request.output, request.overwrite, io::sweep_output_bytes(meta));
  return request.problem.precision == Precision::Single
             ? sweep_with<float>(request, std::move(meta), batch_size)
             : sweep_with<double>(request, std::move(meta), batch_size);
}

}  // namespace grayscott::app
