#include <unistd.h>

#include <cstdio>
#include <memory>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "io/pictures/render.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"

namespace grayscott::app {

namespace {

// After rendering an unfinished file: what it holds, so that nobody takes its pictures for a
// whole run. `before`: the note of the file as it was before the rendering, which stands where
// the file was completed meanwhile (its pictures are of what it held then).
void note_unfinished(const std::string& file, const std::string& field, const std::string& before) {
  const std::string after = io::unfinished_note(file, field);
  print_note(after.empty() ? before : after);
}

// The note of the file before it is rendered; none where it cannot be read (the rendering then
// says why, in its own words).
std::string note_before(const std::string& file, const std::string& field) {
  try {
    return io::unfinished_note(file, field);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

void add_render_command(CLI::App& root) {
  struct State {
    std::string file, out = "images", range = "0:0.5", field;  // field: the file's, by default
    std::int64_t image = 0;  // used only when --image is given
    bool force = false, quiet = false;
    std::string video, colormap = "inferno", scale = "auto", config, slice, projection;
    bool annotate = false;
    std::int64_t every = 1, seed = 0;
    double fps = 10;
  };
  auto state = std::make_shared<State>();
  CLI::App* render = root.add_subcommand(
      "render", "Write PNG pictures or a video (MP4, WebM, GIF, AVI) of a run file's images");
  render->footer(
      "Examples:\n"
      "  grayscott render run.h5 --out pictures/ --annotate --colormap viridis\n"
      "  grayscott render run.h5 --video run.mp4 --every 4 --fps 25\n"
      "  grayscott render sweep.h5 --out atlas/      one tile per (feed, kill)\n"
      "  grayscott render volume.h5 --slice z=8      a volume's plane z = 8 (default: the middle)\n"
      "  grayscott render volume.h5 --projection max --video volume.mp4\n\n" +
      docs_pointer());
  render
      ->add_option("file", state->file,
                   "HDF5 file written by grayscott run, or by grayscott sweep (writes an atlas)")
      ->required();
  render->add_option("--out", state->out, "Folder for the pictures")->capture_default_str();
  render
      ->add_option("--range", state->range,
                   "Values mapped to the colormap's ends, LO:HI (or LO,HI)")
      ->capture_default_str();
  CLI::Option* image =
      render->add_option("--image", state->image,
                         "Render only this image: from 0, or from the end when negative (-1: the "
                         "last); of a sweep, the image its atlas shows (default: the last)");
  render->add_option("--field", state->field,
                     "u or v (default: v, or u where the file holds u alone)");
  render->add_flag("--force", state->force, "Replace pictures or a video that exist already");
  render->add_option(
      "--video", state->video,
      "Write a video instead of pictures: NAME.mp4, .webm, .gif or .avi (through the "
      "ffmpeg program); of a sweep, its atlas");
  render->add_option("--every", state->every, "Video: one frame per N images, and always the last")
      ->capture_default_str();
  render->add_option("--fps", state->fps, "Video: frames per second")->capture_default_str();
  CLI::Option* seed = render->add_option(
      "--seed", state->seed, "Video of a sweep: the members of this seed (default: the first)");
  render
      ->add_option("--colormap", state->colormap,
                   "inferno, viridis, magma, plasma, cividis or gray")
      ->capture_default_str();
  render
      ->add_option("--scale", state->scale,
                   "Pixels per cell along each axis, 1 to 64 (auto: enough for a longer side of "
                   "about 512 pixels; of a sweep, for its grid of tiles, large tiles subsampled "
                   "to 256)")
      ->capture_default_str();
  render->add_flag("--annotate", state->annotate,
                   "A title (field, step, time) above each picture and a colorbar below");
  CLI::Option* slice = render->add_option(
      "--slice", state->slice,
      "A volume's pictures: the plane z=N (rows x cols), y=N (depth x cols) or x=N (depth x "
      "rows), N from 0 or mid (default: z=mid, the middle plane across z)");
  render
      ->add_option("--projection", state->projection,
                   "A volume's pictures: max, the largest value along z over each cell of a plane "
                   "(a maximum-intensity projection)")
      ->excludes(slice);
  render->add_flag("--quiet", state->quiet, "No progress bar and no summary");
  add_config_option(*render, state->config);
  // The appearance, the same for pictures and videos.
  const auto look = [state](io::RenderOptions& options) {
    options.field = state->field;
    std::tie(options.lo, options.hi) = io::parse_range(state->range);
    options.colormap = io::parse_colormap(state->colormap);
    options.annotate = state->annotate;
    options.scale = io::parse_scale(state->scale);
    // Empty: not given (an empty --slice or --projection is refused as it is read).
    const auto given_text = [](const std::string& text) {
      return text.empty() ? std::nullopt : std::optional<std::string>(text);
    };
    options.volume = io::parse_view(given_text(state->slice), given_text(state->projection));
  };
  render->callback([render, state, image, seed, look] {
    // Under mpirun or srun the ranks would write the same pictures at once: rank 0 alone does.
    if (secondary_mpi_process()) return;
    // `render ""` (a script's empty variable): said as such, not as a file named "" not found.
    if (state->file.empty()) throw InvalidInput("render: the file name is empty");
    // Checked before --print-config prints them too: what it prints is a rendering that runs.
    const auto check_options = [&] {
      refuse_empty_name(*render, "--video", state->video);
      // A video's options without one would be ignored: pictures are written of every image.
      for (const char* option : {"--every", "--fps", "--seed"}) {
        if (state->video.empty() && given(*render, option)) {
          throw InvalidInput(std::string(option) +
                             " is a video's option: give --video NAME.mp4 (pictures are written "
                             "of every image, of a sweep's every seed)");
        }
      }
      // And the pictures' folder with a video, which would be ignored as well.
      if (!state->video.empty() && given(*render, "--out")) {
        throw InvalidInput(
            "--out names the pictures' folder: a video is written where --video "
            "names it (--video DIR/NAME.mp4)");
      }
      io::RenderOptions appearance;
      look(appearance);  // the range, colormap, scale and view parse
    };
    apply_config(*render, state->config, [&] {
      check_options();
      return ChosenValues{};  // no option of render's is chosen by another
    });
    check_options();
    state->field = io::drawn_field(state->file, state->field);
    // A stop signal ends the rendering between two pictures or frames (no partial file left).
    const pipeline::StopSignals stop_signals;
    const auto stop_requested = [] { return pipeline::stop_requested() != 0; };
    const auto interrupted = [](const std::string& what) {
      const int signal = pipeline::stop_requested();
      return pipeline::RunInterrupted(
          "render: interrupted by " + pipeline::signal_name(signal) + ": " + what, signal);
    };
    if (!state->video.empty()) {
      io::RenderOptions options;
      options.stop_requested = stop_requested;
      options.video = state->video;
      look(options);
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
      std::int64_t frames = 0;
      const std::string before = state->quiet ? "" : note_before(state->file, state->field);
      try {
        frames = io::render_video(state->file, options);
      } catch (const io::RenderStopped& stopped) {
        progress.clear();
        throw interrupted(stopped.what());
      } catch (...) {
        progress.clear();
        throw;
      }
      progress.clear();
      if (!state->quiet) {
        std::fprintf(stderr, "rendered %lld frame%s into %s\n", static_cast<long long>(frames),
                     frames == 1 ? "" : "s", state->video.c_str());
        note_unfinished(state->file, state->field, before);
      }
      return;
    }
    io::check_render_folder(state->out);
    io::RenderOptions options;
    options.out_dir = state->out;
    options.stop_requested = stop_requested;
    look(options);
    if (image->count() > 0) options.image = state->image;
    options.overwrite = state->force;
    pipeline::Progress progress(0, 0, !state->quiet && ::isatty(STDERR_FILENO));
    options.on_frame = [&](std::int64_t done, std::int64_t total) {
      progress.set_total(total);
      progress.update(done);
    };
    const std::string before = state->quiet ? "" : note_before(state->file, state->field);
    std::vector<std::filesystem::path> written;
    try {
      written = io::render_run(state->file, options);
    } catch (...) {
      progress.clear();  // the error on a line of its own
      throw;
    }
    progress.clear();
    if (stop_requested()) {
      throw interrupted("stopped after " + io::count_pictures(written.size()) + " into " +
                        state->out);
    }
    if (!state->quiet) {
      std::fprintf(stderr, "rendered %s into %s\n", io::count_pictures(written.size()).c_str(),
                   state->out.c_str());
      // The other pictures of that field the folder holds, from an earlier rendering, which would
      // be taken for this run's.
      if (!options.image) print_note(io::earlier_pictures_note(state->out, state->field, written));
      note_unfinished(state->file, state->field, before);
    }
  });
}

}  // namespace grayscott::app
