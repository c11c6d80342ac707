#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.hpp"
#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/repair.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/video.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/session.hpp"
#endif

namespace grayscott::app {

namespace {

// What a run or sweep file holds and what it needs, for `grayscott info FILE`.
void describe_file(const std::string& path) {
  const io::FileReport r = io::inspect_file(path);
  const Problem& p = r.problem;
  std::printf("file: %s (a grayscott %s file%s%s)\n", path.c_str(), r.sweep ? "sweep" : "run",
              r.version.empty() ? "" : ", written by grayscott ", r.version.c_str());
  std::printf("grid: %lldx%lld, %s precision, stencil %s, boundary %s\n",
              static_cast<long long>(p.grid.rows), static_cast<long long>(p.grid.cols),
              std::string(to_string(p.precision)).c_str(), p.stencil.name().c_str(),
              std::string(to_string(p.boundary)).c_str());
  if (r.sweep) {
    std::printf("members: %lld\n", static_cast<long long>(r.members));
    std::printf("rates: du %.10g, dv %.10g, dt %.10g (feed and kill per member)\n", p.params.du,
                p.params.dv, p.params.dt);
  } else {
    std::printf("rates: feed %.10g, kill %.10g, du %.10g, dv %.10g, dt %.10g\n", p.params.feed,
                p.params.kill, p.params.du, p.params.dv, p.params.dt);
  }
  std::printf("images: %lld of %lld, %lld steps each; fields %s\n",
              static_cast<long long>(r.images), static_cast<long long>(r.images_requested),
              static_cast<long long>(r.steps_per_image), r.fields.c_str());
  std::printf("status: %s\n", r.status.c_str());
  std::printf("checkpoint: %s\n", r.checkpoint_images > 0
                                      ? ("after image " + std::to_string(r.checkpoint_images)).c_str()
                                      : "none (continues from the initial state)");
  std::string state;
  if (r.live_writer != 0) {
    state = "being written by process " + std::to_string(r.live_writer) +
            " (h5py reads it with swmr=True)";
  } else if (r.needs_repair()) {
    state = "needs repair: its writer was killed (h5py refuses it without swmr=True); run "
            "grayscott repair " + path;
  } else if (r.status == "complete") {
    state = "complete";
  } else {
    state = "readable";
  }
  const bool resumable = r.live_writer == 0 && r.status != "complete";
  if (resumable) {
    state += std::string(state.empty() ? "" : "; ") + "continue it with grayscott " +
             (r.sweep ? "sweep" : "run") + " --resume " + path;
  }
  std::printf("state: %s\n", state.c_str());
}

}  // namespace

void add_info_command(CLI::App& root) {
  CLI::App* info = root.add_subcommand(
      "info", "Show the backends, devices and libraries this build can use, or what FILE holds");
  auto file = std::make_shared<std::string>();
  info->add_option("file", *file, "a run or sweep file: its parameters, images, status, state");
  info->callback([file] {
    if (!file->empty()) {
      describe_file(*file);
      return;
    }
    std::printf("grayscott %s\n", version);
    std::printf("hdf5: %s\n", io::h5::library_description().c_str());
    std::printf("png: %s\n", io::libpng_description().c_str());
    std::printf("ffmpeg: %s\n", io::ffmpeg_description().c_str());
    for (const Backend* backend : registered_backends()) {
      for (const std::string& line : backend->describe()) {
        std::printf("%.*s: %s\n", static_cast<int>(backend->name().size()), backend->name().data(),
                    line.c_str());
      }
    }
#if GRAYSCOTT_WITH_MPI
    std::printf("mpi: %s\n", mpi::library_description().c_str());
#else
    std::printf("mpi: not in this build (configure with -DGRAYSCOTT_MPI=ON)\n");
#endif
  });
}

}  // namespace grayscott::app
