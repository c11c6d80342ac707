#include <cstdio>
#include <memory>

#include "app/commands.hpp"
#include "io/render.hpp"

namespace grayscott::app {

void add_render_command(CLI::App& root) {
  struct State {
    std::string file, out = "images", range = "0:0.5", field = "v";
    std::int64_t image = 0;  // used only when --image is given
    bool force = false;
  };
  auto state = std::make_shared<State>();
  CLI::App* render = root.add_subcommand("render", "Write PNG pictures of a run file's images");
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
  render->add_flag("--force", state->force, "Replace pictures that exist already");
  render->callback([state, image] {
    io::check_render_folder(state->out);
    io::RenderOptions options;
    options.out_dir = state->out;
    options.field = state->field;
    std::tie(options.lo, options.hi) = io::parse_range(state->range);
    if (image->count() > 0) options.image = state->image;
    options.overwrite = state->force;
    const auto written = io::render_run(state->file, options);
    std::fprintf(stderr, "rendered %s into %s\n", io::count_pictures(written.size()).c_str(),
                 state->out.c_str());
  });
}

}  // namespace grayscott::app
