#include "pipeline/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>

#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/files/output_path.hpp"
#include "io/files/sweep_file.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/job_files.hpp"

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
  const double bytes = value * static_cast<double>(problem.grid.depth) *
                       static_cast<double>(problem.grid.rows) *
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

void validate_members(const Problem& problem, const std::vector<SweepMember>& members) {
  if (members.empty()) throw InvalidInput("the sweep has no members");
  // The stencil's spectral radius computed once, so that a million members take milliseconds.
  const double radius = -problem.stencil.symbol_range().lowest;
  Parameters each = problem.params;
  for (const SweepMember& member : members) {
    each.feed = member.feed;
    each.kill = member.kill;
    each.validate();  // names the bad rate, e.g. a negative feed
    problem.check_stability(radius, each);
  }
}

io::SweepMetadata sweep_metadata(const SweepRequest& request) {
  request.problem.validate();
  validate_members(request.problem, request.members);
  check_image_schedule(request.images, request.steps_per_image);
  if (!request.fields.u && !request.fields.v) throw InvalidInput("fields: name u, v or both");
  request.analysis.validate(request.problem, request.steps_per_image);
  io::SweepMetadata meta;
  meta.problem = request.problem;
  const auto members = request.members.size();
  meta.feed.reserve(members);
  meta.kill.reserve(members);
  meta.seed.reserve(members);
  for (const SweepMember& member : request.members) {
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

std::string nonfinite_members_warning(const SweepSummary& summary,
                                      const std::filesystem::path& output) {
  const std::int64_t n = summary.nonfinite_members;
  if (n == 0) return {};
  return std::to_string(n) + " member" + (n == 1 ? "" : "s") +
         " became non-finite (see /nonfinite_image in " + output.string() + ")";
}

std::string continue_command(const SweepRequest& request) {
  return "grayscott sweep --resume " + request.output.string();
}

SweepRequest resume_sweep_request(const std::filesystem::path& path) {
  const io::SweepFileState state = io::read_sweep_state(path);
  if (state.status == "complete") {
    throw InvalidInput("nothing to resume: " + path.string() + " holds a complete sweep");
  }
  SweepRequest request;
  request.continued_file = state.identity;
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
  request.steady_history = state.steady;
  return request;
}

namespace {

template <class Real>
SweepSummary execute_sweep_with(const SweepRequest& request) {
  const std::unique_ptr<JobFile<Real>> file = sweep_file_of<Real>(request);
  Alone<Real> alone;
  return run_job(job_of(request), *file, alone);
}

}  // namespace

SweepSummary execute_sweep(const SweepRequest& request) {
  return request.problem.precision == Precision::Single ? execute_sweep_with<float>(request)
                                                        : execute_sweep_with<double>(request);
}

}  // namespace grayscott::pipeline
