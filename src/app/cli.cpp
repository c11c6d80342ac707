#include "app/cli.hpp"

#include <toml++/toml.h>

#include <charconv>
#include <cstdio>

#include "app/commands.hpp"

namespace grayscott::app {

void add_config_option(CLI::App& app, std::string& path) {
  app.add_option("--config", path,
                 "TOML file whose keys are long option names (top level, or in a [" +
                     app.get_name() + "] section); the command line overrides it")
      ->type_name("FILE.toml");
  const std::string description = "Print the effective options as a TOML [" + app.get_name() +
                                  "] section that --config reads back, and do nothing else";
  app.add_flag("--print-config", description);
}

namespace {

std::string shortest(double x) {
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof text, x);
  return std::string(text, end);
}

bool takes_whole_number(const CLI::Option& option) {
  return option.get_type_name().rfind("INT", 0) == 0;
}
bool takes_number(const CLI::Option& option) {
  return takes_whole_number(option) || option.get_type_name().rfind("FLOAT", 0) == 0;
}

// A TOML value as the text a user would have typed after the option, of the type the option
// takes: a number option wants a TOML number (rows = "128" is an error, not 128).
std::string option_text(const CLI::Option& option, const toml::node& node,
                        const std::string& where) {
  if (takes_number(option)) {
    if (auto i = node.as_integer()) return std::to_string(i->get());
    if (auto f = node.as_floating_point(); f && !takes_whole_number(option)) {
      return shortest(f->get());
    }
    throw InvalidInput(
        where + ": expected " + (takes_whole_number(option) ? "a whole number" : "a number") +
        " (without quotes), got " + (node.is_string() ? "a string" : "another type"));
  }
  if (auto s = node.as_string()) return s->get();
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto f = node.as_floating_point()) return shortest(f->get());
  if (auto a = node.as_array()) {
    std::string joined;
    for (const auto& element : *a) {
      if (!joined.empty()) joined += ',';
      if (element.is_array() || element.is_table() || element.is_boolean()) {
        throw InvalidInput(where + ": expected an array of strings or numbers");
      }
      joined += option_text(option, element, where);
    }
    return joined;
  }
  throw InvalidInput(where + ": expected a string, a number or an array");
}

// A flag takes no value (CLI11 gives flags a type size of 1: their expected values say it).
bool is_flag(const CLI::Option& option) { return option.get_items_expected_max() == 0; }

// The options a config file cannot set nor --print-config print.
bool is_about_the_options(const std::string& name) {
  return name == "config" || name == "print-config" || name == "help";
}

// The command's option for a TOML key, or null.
CLI::Option* option_for(CLI::App& app, const std::string& name) {
  if (is_about_the_options(name)) return nullptr;
  CLI::Option* option = app.get_option_no_throw("--" + name);
  if (option == nullptr || option->get_lnames().empty() || option->get_lnames().front() != name) {
    return nullptr;
  }
  return option;
}

void apply_key(CLI::Option& option, const toml::node& node, const std::string& where) {
  if (option.count() > 0) return;  // the command line (or the command's own section) wins
  try {
    if (is_flag(option)) {
      const auto b = node.as_boolean();
      if (!b) throw InvalidInput(where + ": expected true or false");
      if (!b->get()) return;
      option.add_result("true");
    } else {
      option.add_result(option_text(option, node, where));
    }
    option.run_callback();
  } catch (const CLI::ParseError& e) {
    throw InvalidInput(where + ": " + e.what());
  }
}

std::string toml_string(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// The command's effective options as a TOML section: given or default values, flags as booleans.
void print_config(const CLI::App& app) {
  std::printf("[%s]\n", app.get_name().c_str());
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty()) continue;
    const std::string name = option->get_lnames().front();
    if (is_about_the_options(name)) continue;
    if (is_flag(*option)) {
      std::printf("%s = %s\n", name.c_str(), option->count() > 0 ? "true" : "false");
      continue;
    }
    std::string value;
    if (option->count() > 0) {
      for (const std::string& result : option->results()) {
        value += (value.empty() ? "" : ",") + result;
      }
    } else {
      value = option->get_default_str();
      if (value.empty()) continue;  // not given and no default: the program's own choice
    }
    std::printf("%s = %s\n", name.c_str(),
                takes_number(*option) ? value.c_str() : toml_string(value).c_str());
  }
}

}  // namespace

void record_given(const CLI::App& app, requests::ProblemSettings& problem) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() > 0 && !option->get_lnames().empty()) {
      problem.given.insert(option->get_lnames().front());
    }
  }
}

void apply_config(CLI::App& app, const std::string& path) {
  const bool print = app.get_option("--print-config")->count() > 0;
  if (!path.empty()) {
    toml::table table;
    try {
      table = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
      const auto& at = e.source().begin;
      if (at.line == 0) throw InvalidInput("config " + path + ": " + std::string(e.description()));
      throw InvalidInput("config " + path + " line " + std::to_string(at.line) + ": " +
                         std::string(e.description()));
    }
    CLI::App* root = app.get_parent() != nullptr ? app.get_parent() : &app;
    const auto is_command = [&](const std::string& name) {
      for (const CLI::App* command : commands_of(*root)) {
        if (command->get_name() == name) return true;
      }
      return false;
    };
    const auto where = [&](const toml::node& node, const std::string& name) {
      return "config " + path + " line " + std::to_string(node.source().begin.line) + ", key '" +
             name + "'";
    };
    const auto unknown_key = [&](const std::string& at) {
      return InvalidInput(at + ": unknown key (keys are the long option names of '" +
                          app.get_name() + "', e.g. rows, feed, stencil)");
    };
    // The command's own section first: its keys win over the top level's.
    if (const toml::table* section = table[app.get_name()].as_table()) {
      for (const auto& [key, node] : *section) {
        const std::string name(key.str());
        CLI::Option* option = option_for(app, name);
        if (option == nullptr) throw unknown_key(where(node, app.get_name() + "." + name));
        apply_key(*option, node, where(node, app.get_name() + "." + name));
      }
    }
    for (const auto& [key, node] : table) {
      const std::string name(key.str());
      if (node.is_table()) {
        if (is_command(name)) continue;  // a section: its command's
        throw InvalidInput(where(node, name) + ": unknown section (sections are the commands)");
      }
      CLI::Option* option = option_for(app, name);
      if (option == nullptr) {
        // A top-level key is shared by the commands: one that some other command takes is
        // that command's business.
        bool elsewhere = false;
        for (CLI::App* command : commands_of(*root)) {
          elsewhere = elsewhere || (command != &app && option_for(*command, name) != nullptr);
        }
        if (elsewhere) continue;
        throw unknown_key(where(node, name));
      }
      apply_key(*option, node, where(node, name));
    }
  }
  if (print) {
    if (!secondary_mpi_process()) print_config(app);
    throw ConfigPrinted();
  }
}

}  // namespace grayscott::app

namespace grayscott::app {

std::vector<CLI::App*> commands_of(CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string docs_pointer() {
  return "Documentation: README.md and docs/ in the grayscott source tree (docs/file-format.md, "
         "docs/sweeps.md, docs/cluster.md, docs/python.md, docs/backends.md).";
}

void name_metavars(CLI::App& app) {
  // The settings' metavars come from their table (requests/settings.hpp); these name the rest,
  // only where CLI11 would say TEXT: its INT and FLOAT already say what a number option takes.
  const std::pair<const char*, std::string> names[] = {
      {"output", "FILE.h5"},
      {"out", "DIR"},
      {"config", "FILE.toml"},
      {"decomposition", "ROWSxCOLS"},
      {"range", "LO:HI"},
      {"field", "u|v"},
      {"video", "FILE.mp4|.webm|.gif"},
      {"colormap", "NAME"},
      {"scale", "N|auto"},
      {"resume", "FILE.h5"},
      {"file", "FILE.h5"},
      {"preset", "NAME"},
      {"io", "none|hdf5"},
  };
  const auto rename = [&](CLI::App& command) {
    for (CLI::Option* option : command.get_options()) {
      if (is_flag(*option)) continue;
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
  for (CLI::App* command : commands_of(app)) {
    rename(*command);
  }
}

}  // namespace grayscott::app
