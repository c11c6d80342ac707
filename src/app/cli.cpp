#include "app/cli.hpp"

#include <toml++/toml.h>

#include <charconv>
#include <limits>
#include <sstream>

#include "engine/registry.hpp"

namespace grayscott::app {

Problem ProblemOptions::to_problem() const {
  Problem p;
  p.grid = {rows, cols};
  p.params = {feed, kill, du, dv, dt};
  p.stencil = Stencil::parse(stencil);
  p.boundary = parse_boundary(boundary);
  p.precision = parse_precision(precision);
  return p;
}

EngineOptions EngineCliOptions::to_engine_options() const {
  if (threads < 0 || threads > max_threads) {
    throw InvalidInput("threads must be 0 (all cores) or a whole number from 1 to " +
                       std::to_string(max_threads) + ", got " + std::to_string(threads));
  }
  if (fuse < 0) throw InvalidInput("fuse must be a non-negative integer");
  if (device < 0) throw InvalidInput("device must be a non-negative integer");
  check_backend_name(backend);
  return {backend, threads, fuse, device};
}

void add_problem_options(CLI::App& app, ProblemOptions& o) {
  app.add_option("--rows,--nbrow", o.rows, "Grid rows")->capture_default_str();
  app.add_option("--cols,--nbcol", o.cols, "Grid columns")->capture_default_str();
  app.add_option("--feed,--feedrate", o.feed, "Feed rate F")->capture_default_str();
  app.add_option("--kill,--killrate", o.kill, "Kill rate k")->capture_default_str();
  app.add_option("--du", o.du, "Diffusion rate of u")->capture_default_str();
  app.add_option("--dv", o.dv, "Diffusion rate of v")->capture_default_str();
  app.add_option("--dt,--deltat", o.dt, "Time step")->capture_default_str();
  app.add_option("--stencil", o.stencil,
                 "oono-puri, pretty, five-point, or 9 comma-separated weights (row-major)")
      ->capture_default_str();
  app.add_option("--boundary", o.boundary, "zero-flux, periodic or fixed")->capture_default_str();
  app.add_option("--precision", o.precision, "single (float32) or double")->capture_default_str();
}

InitialState InitialCliOptions::to_initial_state() const {
  InitialState state;
  state.kind = parse_initial_kind(init);
  if (!seed.empty()) {
    if (state.kind != InitialKind::Noise) throw InvalidInput("seed: --seed needs --init noise");
    state.seed = parse_seed(seed);
  }
  return state;
}

void add_initial_options(CLI::App& app, InitialCliOptions& o) {
  app.add_option("--init", o.init,
                 "Initial state: rectangle, or noise (the rectangle with small random "
                 "perturbations, reproducible from --seed)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the noise initial state (default 0)");
}

std::uint64_t parse_seed(std::string_view text) {
  const std::string whole(text);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() ||
      seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw InvalidInput("seed: expected a whole number from 0 to 2^63-1, got '" + whole + "'");
  }
  return seed;
}

void add_image_options(CLI::App& app, OutputCliOptions& o, const std::string& images_help) {
  app.add_option("--images,--nbimage", o.images, images_help)->capture_default_str();
  app.add_option("--steps-per-image,--nbextrastep", o.steps, "Steps between images")
      ->capture_default_str();
}

void add_output_options(CLI::App& app, OutputCliOptions& o) {
  app.add_option("-o,--output", o.output, "HDF5 output file")->capture_default_str();
  app.add_option("--fields", o.fields, "Fields to write: v, u or u,v")->capture_default_str();
  app.add_flag("--force", o.force, "Overwrite an existing output file");
  app.add_flag("--quiet", o.quiet, "No progress bar and no summary");
}

void add_engine_options(CLI::App& app, EngineCliOptions& o) {
  app.add_option("--backend", o.backend, backend_choices())->capture_default_str();
  app.add_option("--threads", o.threads,
                 "CPU threads (0: all cores; at most " + std::to_string(max_threads) + ")")
      ->capture_default_str();
  app.add_option("--fuse", o.fuse, "Steps fused per pass over the grid (0: the backend's best)")
      ->capture_default_str();
  app.add_option("--device", o.device, "Device ordinal (device backends)")->capture_default_str();
}

FieldSet parse_fields(const std::string& text) {
  FieldSet f{false, false};
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "u")
      f.u = true;
    else if (item == "v")
      f.v = true;
    else
      throw InvalidInput("fields: expected v, u or u,v, got '" + text + "'");
  }
  if (!f.u && !f.v) throw InvalidInput("fields: expected v, u or u,v, got '" + text + "'");
  return f;
}

void add_config_option(CLI::App& app, std::string& path) {
  app.add_option("--config", path,
                 "TOML file whose keys are long option names; the command line overrides it");
}

namespace {

std::string shortest(double x) {
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof text, x);
  return std::string(text, end);
}

// A TOML value as the text a user would have typed after the option.
std::string option_text(const toml::node& node, const std::string& where) {
  if (auto s = node.as_string()) return s->get();
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto f = node.as_floating_point()) return shortest(f->get());
  if (auto b = node.as_boolean()) return b->get() ? "true" : "false";
  if (auto a = node.as_array()) {
    std::string joined;
    for (const auto& element : *a) {
      if (!joined.empty()) joined += ',';
      joined += option_text(element, where);
    }
    return joined;
  }
  throw InvalidInput(where + ": expected a string, number, boolean or array");
}

}  // namespace

void apply_config(CLI::App& app, const std::string& path) {
  if (path.empty()) return;
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    if (at.line == 0) throw InvalidInput("config " + path + ": " + std::string(e.description()));
    throw InvalidInput("config " + path + " line " + std::to_string(at.line) + ": " +
                       std::string(e.description()));
  }
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const std::string where = "config " + path + " line " +
                              std::to_string(node.source().begin.line) + ", key '" + name + "'";
    CLI::Option* option = name == "config" ? nullptr : app.get_option_no_throw("--" + name);
    if (option == nullptr || option->get_lnames().empty() || option->get_lnames().front() != name) {
      throw InvalidInput(where + ": unknown key (keys are the long option names of '" +
                         app.get_name() + "', e.g. rows, feed, stencil)");
    }
    if (option->count() > 0) continue;  // the command line wins
    try {
      if (option->get_type_size() == 0) {  // a flag
        const auto b = node.as_boolean();
        if (!b) throw InvalidInput(where + ": expected true or false");
        if (!b->get()) continue;
        option->add_result("true");
      } else {
        option->add_result(option_text(node, where));
      }
      option->run_callback();
    } catch (const CLI::ParseError& e) {
      throw InvalidInput(where + ": " + e.what());
    }
  }
}

}  // namespace grayscott::app

namespace grayscott::app {

std::string docs_pointer() {
  return "Documentation: README.md and docs/ in the grayscott source tree (docs/file-format.md, "
         "docs/sweeps.md, docs/cluster.md, docs/python.md, docs/backends.md).";
}

void name_metavars(CLI::App& app) {
  std::string backends = backend_choices();  // "auto, cpu or cuda" -> "auto|cpu|cuda"
  for (const std::string separator : {", ", " or "}) {
    for (std::size_t at; (at = backends.find(separator)) != std::string::npos;) {
      backends.replace(at, separator.size(), "|");
    }
  }
  // Only where CLI11 would say TEXT: its INT and FLOAT already say what a number option takes.
  const std::pair<const char*, std::string> names[] = {
      {"stencil", "NAME|9 WEIGHTS"},
      {"boundary", "zero-flux|periodic|fixed"},
      {"precision", "single|double"},
      {"init", "rectangle|noise"},
      {"seed", "UINT"},
      {"seeds", "S1,S2,..."},
      {"backend", backends},
      {"output", "FILE.h5"},
      {"fields", "v|u|u,v"},
      {"render", "DIR"},
      {"out", "DIR"},
      {"config", "FILE.toml"},
      {"decomposition", "ROWSxCOLS"},
      {"max-batch-memory", "BYTES"},
      {"feed", "F1,F2,...|FROM:TO:N"},
      {"kill", "K1,K2,...|FROM:TO:N"},
      {"range", "LO:HI"},
      {"field", "u|v"},
      {"video", "FILE.mp4|.webm|.gif"},
      {"colormap", "NAME"},
      {"scale", "N|auto"},
      {"resume", "FILE.h5"},
      {"checkpoint-every", "N|DURATION"},
      {"file", "FILE.h5"},
      {"preset", "NAME"},
      {"io", "none|hdf5"},
  };
  const auto rename = [&](CLI::App& command) {
    for (CLI::Option* option : command.get_options()) {
      if (option->get_type_size() == 0) continue;  // a flag
      const std::string shown = option->get_type_name();
      if (shown.rfind("TEXT", 0) != 0) continue;
      const auto& long_names = option->get_lnames();
      const std::string name =
          !long_names.empty() ? long_names.front() : option->get_name(false, true);
      for (const auto& [key, metavar] : names) {
        if (name == key) option->type_name(metavar);
      }
    }
  };
  rename(app);
  for (CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    rename(*command);
  }
}

}  // namespace grayscott::app
