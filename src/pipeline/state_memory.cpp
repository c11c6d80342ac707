#include "pipeline/state_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/registry.hpp"
#include "io/files/memory.hpp"
#include "io/files/output_path.hpp"

namespace grayscott::pipeline {

std::uint64_t available_memory_for(const Backend& backend, int device) {
  return backend.on_device() ? backend.free_memory(device) : io::available_memory();
}

int held_images(FieldSet carried, bool statistics, bool watched) {
  const int fields = (carried.u ? 1 : 0) + (carried.v ? 1 : 0);
  // Two images of the fields carried, one of them (a checkpoint's: a run's last image is one)
  // carrying u and v: fields + 2 for one field or two.
  return std::max(fields, 1) + 2 + (statistics ? 1 : 0) + (watched && fields < 2 ? 1 : 0);
}

namespace {

// One field of `members` states of `problem` in `blocks_here` blocks (0: the whole grid), and
// how a refusal names it.
struct FieldsOf {
  // In floating point: an absurd grid must not wrap around to a small number.
  double bytes = 0;
  // "512x512 cells (single precision)", "the blocks of 2 ranks on this node, each of up to ...".
  std::string whose;
  // Several blocks: `whose` ends in a parenthesis that a comma follows.
  bool blocks = false;
  // What the user sets: "rows x cols".
  std::string axes;
  std::string state() const { return (blocks ? "the states of " : "the state of ") + whose; }
  std::string images() const {
    return "the images of " + whose + (blocks ? ", " : " ") + "on their way to the file";
  }
};

FieldsOf fields_of(const Problem& problem, std::size_t members, int blocks_here) {
  FieldsOf f;
  const double element = problem.precision == Precision::Single ? 4.0 : 8.0;
  const int sharing = std::max(blocks_here, 1);
  f.bytes = element * static_cast<double>(members) * static_cast<double>(sharing) *
            static_cast<double>(problem.grid.depth) * static_cast<double>(problem.grid.rows) *
            static_cast<double>(problem.grid.cols);
  const std::string cells = problem.grid.text() + " cells (" +
                            std::string(to_string(problem.precision)) + " precision" +
                            (members > 1 ? ", " + std::to_string(members) + " members" : "") + ")";
  f.blocks = sharing > 1;
  f.whose = blocks_here == 0 ? cells
            : sharing == 1   ? "this rank's block of " + cells
                             : "the blocks of " + std::to_string(sharing) +
                                 " ranks on this node, each of up to " + cells;
  f.axes = problem.grid.volume() ? "depth x rows x cols" : "rows x cols";
  return f;
}

// Throws OutOfMemory when `needed` bytes (of `what`, a plural or not) exceed `available` (0:
// unknown, never refused).
void refuse_beyond(const FieldsOf& f, double needed, std::uint64_t available,
                   const std::string& what, bool plural, bool on_device) {
  if (available == 0 || needed <= static_cast<double>(available)) return;
  const std::uint64_t bytes = needed >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(needed);
  throw OutOfMemory(f.axes + ": " + what + (plural ? " need " : " needs ") +
                    io::format_bytes(bytes) + " of " + (on_device ? "device" : "host") +
                    " memory, and " + io::format_bytes(available) + " is available");
}

}  // namespace

void check_state_fits(const Problem& problem, std::size_t members, const EngineOptions& options,
                      int blocks_here, int images_held) {
  const Backend& backend = *choose_backend(options, problem, members).backend;
  const FieldsOf f = fields_of(problem, members, blocks_here);
  const bool device = backend.on_device();
  // The state alone first, named as a Simulation that holds no images names it.
  refuse_beyond(f, 4.0 * f.bytes, available_memory_for(backend, options.device),
                f.blocks ? f.state() + "," : f.state(), f.blocks, device);
  if (images_held == 0) return;
  if (device) {
    check_images_fit(problem, members, images_held, blocks_here);
  } else {
    refuse_beyond(
        f, (4.0 + images_held) * f.bytes, io::available_memory(),
        f.state() + (f.blocks ? ", and " : " and ") + "the images on their way to the file", true,
        false);
  }
}

void check_images_fit(const Problem& problem, std::size_t members, int images_held,
                      int blocks_here) {
  const FieldsOf f = fields_of(problem, members, blocks_here);
  refuse_beyond(f, images_held * f.bytes, io::available_memory(), f.images(), true, false);
}

}  // namespace grayscott::pipeline
