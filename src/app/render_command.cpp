#include <unistd.h>

#include <cstdio>
#include <memory>

#include "app/commands.hpp"
#include "io/render.hpp"
#include "pipeline/progress.hpp"

namespace grayscott::app {

void add_render_command(CLI::App& root) {
  struct State {
    std::string file, out = "images", range = "0:0.5", field = "v";
    std::int64_t image = 0;  // used only when --image is given
    bool force = false, quiet = false;
    std::string video;
    std::int64_t every = 1, seed = 0;
    double fps = 10;
  };
  auto state = std::make_shared<State>();
  CLI::App* render = root.add_subcommand(
      "render", "Write PNG pictures or a video (MP4, WebM, GIF) of a run file's images");
  render
      ->add_option("file", state->file,
                   "HDF5 file written by grayscott run, or by grayscott sweep (writes an atlas)")
      ->required();
  render->add_option("--out", state->out, "Folder for the pictures")->capture_default_str();
  render->add_option("--range", state->range, "Values mapped to the colormap's ends, LO:HI")
      ->capture_default_str();
  CLI::Option* image =
      render->add_option("--image", state->image,
                         "Render only this image: from 0, or from the end when negative (-1: the "
                         "last); of a sweep, the image its atlas shows (default: the last)");
  render->add_option("--field", state->field, "u or v")->capture_default_str();
  render->add_flag("--force", state->force, "Replace pictures or a video that exist already");
  render->add_option("--video", state->video,
                     "Write a video instead of pictures: NAME.mp4, .webm or .gif (through the "
                     "ffmpeg program); of a sweep, its atlas");
  render->add_option("--every", state->every, "Video: one frame per N images")
      ->capture_default_str();
  render->add_option("--fps", state->fps, "Video: frames per second")->capture_default_str();
  CLI::Option* seed = render->add_option(
      "--seed", state->seed, "Video of a sweep: the members of this seed (default: the first)");
  render->add_flag("--quiet", state->quiet, "No progress bar and no summary");
  render->callback([state, image, seed] {
    if (!state->video.empty()) {
      io::RenderOptions options;
      options.video = state->video;
      options.field = state->field;
      std::tie(options.lo, options.hi) = io::parse_range(state->range);
      if (image->count() > 0) options.image = state->image;
      if (seed->count() > 0) options.seed = state->seed;
      options.every = state->every;
      options.fps = state->fps;
      options.overwrite = state->force;
      pipeline::Progress progress(0, 0, !state->quiet && ::isatty(STDERR_FILENO));
      options.on_frame = [&](std::int64_t done, std::int64_t total) {
        progress.set_total(total);
        progress.update(done);
      };
      const std::int64_t frames = io::render_video(state->file, options);
      progress.clear();
      if (!state->quiet) {
        std::fprintf(stderr, "rendered %lld frame%s into %s\n", static_cast<long long>(frames),
                     frames == 1 ? "" : "s", state->video.c_str());
      }
      return;
    }
    io::check_render_folder(state->out);
    io::RenderOptions options;
    options.out_dir = state->out;
    options.field = state->field;
    std::tie(options.lo, options.hi) = io::parse_range(state->range);
    if (image->count() > 0) options.image = state->image;
    options.overwrite = state->force;
    const auto written = io::render_run(state->file, options);
    if (!state->quiet) std::fprintf(stderr, "rendered %s into %s\n", io::count_pictures(written.size()).c_str(),
                 state->out.c_str());
  });
}

}  // namespace grayscott::app
