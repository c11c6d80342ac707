#include "app/cli.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "app/commands.hpp"
#include "io/files/output_path.hpp"
#include "requests/names.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/session.hpp"
#endif

namespace grayscott::app {

void add_config_option(CLI::App& app, std::string& path) {
  app.add_option("--config", path,
                 "TOML file whose keys are long option names (top level, or in a [" +
                     app.get_name() + "] section); the command line overrides it")
      ->type_name("FILE.toml");
  const std::string description =
      "Print the options given as a TOML [" + app.get_name() +
      "] section that --config reads back (the others as comments with the values the run uses), "
      "and do "
      "nothing else";
  app.add_flag("--print-config", description);
}

namespace {

// The command's long option nearest to `name` (requests::nearest_index: one it begins or that
// begins it, or a slip of the keyboard). `primary`: named by its first long name (what a config
// file's key must be), not by the course's alias that matched.
bool is_about_the_options(const std::string& name);

std::string nearest_option(const CLI::App& command, std::string_view name, bool primary = false) {
  std::vector<std::string> known, shown;
  for (const CLI::Option* option : command.get_options()) {
    const auto& names = option->get_lnames();
    // A config file's key is never --help, --config or --print-config (nor suggested as one).
    if (primary && !names.empty() && is_about_the_options(names.front())) continue;
    for (const std::string& each : names) {
      known.push_back(each);
      shown.push_back(primary ? names.front() : each);
    }
  }
  const std::optional<std::size_t> nearest = requests::nearest_index(name, known);
  return nearest ? shown[*nearest] : std::string();
}

}  // namespace

std::string misread_option_value(int argc, const char* const* argv) {
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    if (arg == "--") break;  // what follows is not an option
    // "--output=": CLI11 would take the next argument as its value (a file named --force).
    if (arg.size() > 3 && arg.starts_with("--") && arg.ends_with("=") &&
        arg.find('=') == arg.size() - 1) {
      const std::string option(arg.substr(0, arg.size() - 1));
      return option + "= has an empty value: give one (" + option + "=VALUE), or leave " + option +
             " out for its default";
    }
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' && arg[2] == '=') {
      const std::string option(arg.substr(0, 2)), value(arg.substr(3));
      return std::string(arg) + ": a short option takes its value after a space (" + option + " " +
             value + "); " + std::string(arg) + " would name it '=" + value + "'";
    }
  }
  return {};
}

namespace {

bool takes_whole_number(const CLI::Option& option) {
  const std::string& type = option.get_type_name();
  return type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0;  // UINT: a seed
}
bool takes_number(const CLI::Option& option) {
  return takes_whole_number(option) || option.get_type_name().rfind("FLOAT", 0) == 0;
}

// Whether the option takes a name (a choice such as zero-flux|periodic|fixed, or NAME): in a config
// file a string, a number there being a value of the wrong kind, reported with the others at once.
bool takes_a_name(const CLI::Option& option) {
  const std::string& type = option.get_type_name();
  if (type == "NAME") return true;
  if (type.find('|') == std::string::npos) return false;
  return std::all_of(type.begin(), type.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || c == '-' || c == '|' || c == ',';
  });
}

// What a TOML value is, for a message: "a string", "a float" (4.0 where a whole number is due).
std::string toml_type_name(const toml::node& node) {
  if (node.is_string()) return "a string";
  if (node.is_floating_point()) return "a float";
  if (node.is_integer()) return "an integer";
  if (node.is_boolean()) return "a boolean";
  if (node.is_array()) return "an array";
  if (node.is_table()) return "a table";
  return "a date or time";
}

// A TOML value as the text a user would have typed after the option, of the type the option
// takes: a number option wants a TOML number (rows = "128" is an error, not 128).
std::string option_text(const CLI::Option& option, const toml::node& node,
                        const std::string& where) {
  if (takes_number(option)) {
    if (auto i = node.as_integer()) return std::to_string(i->get());
    if (auto f = node.as_floating_point(); f && !takes_whole_number(option)) {
      return shortest_text(f->get());
    }
    throw InvalidInput(where + ": expected " +
                       (takes_whole_number(option) ? "a whole number" : "a number") +
                       " (without quotes), got " + toml_type_name(node));
  }
  if (auto s = node.as_string()) return s->get();
  if (takes_a_name(option) && (node.is_integer() || node.is_floating_point())) {
    throw InvalidInput(where + ": expected a name in quotes (" + option.get_type_name() +
                       "), got " + toml_type_name(node));
  }
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto f = node.as_floating_point()) return shortest_text(f->get());
  if (auto a = node.as_array()) {
    // A file or folder is one name: ["a.h5", "b.h5"] would be the file "a.h5,b.h5".
    const std::string& type = option.get_type_name();
    if (type.rfind("FILE", 0) == 0 || type.rfind("DIR", 0) == 0) {
      throw InvalidInput(where + ": expected a name in quotes (" + type + "), got an array");
    }
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

// The options whose values a config file gave, each with where: a value refused later (by the
// request's checks, which know nothing of files) is traced back to its line.
std::map<std::string, std::string>& taken_from_config() {
  static std::map<std::string, std::string> origins;
  return origins;
}

void apply_key(CLI::Option& option, const toml::node& node, const std::string& where) {
  // The command line (or the command's own section) wins; the key is checked all the same, so
  // that a file is valid or not whatever the command line beside it.
  const bool overridden = option.count() > 0;
  try {
    if (is_flag(option)) {
      const auto b = node.as_boolean();
      if (!b) throw InvalidInput(where + ": expected true or false");
      if (overridden || !b->get()) return;
      option.add_result("true");
    } else {
      const std::string text = option_text(option, node, where);
      if (overridden) return;
      option.add_result(text);
    }
    if (!option.get_lnames().empty()) taken_from_config()[option.get_lnames().front()] = where;
    option.run_callback();
  } catch (const CLI::ParseError& e) {
    throw InvalidInput(where + ": " + e.what());
  }
}

std::string toml_string(const std::string& text) {
  // On one line, whatever the text holds (a newline in a file's name), as a comment needs it.
  std::ostringstream quoted;
  quoted << toml::toml_formatter(toml::value<std::string>(text),
                                 toml::format_flags::allow_unicode_strings);
  return quoted.str();
}

// The command's options as a TOML section: those given (on the command line or by --config) as
// keys, the others as comments showing the values used: `chosen`'s (what a preset, a pattern or
// the grid's depth chose) or the defaults. Only the given ones are keys, so that the section read
// back gives the same run: a key read back counts as given, and a default printed as a key would
// override what a preset, a pattern or the grid's depth chooses.
void print_config(const CLI::App& app, const ChosenValues& chosen) {
  std::printf("[%s]\n", app.get_name().c_str());
  bool noted = false;
  // Before the first option not given: what its comment shows.
  const auto note_once = [&] {
    if (noted) return;
    // Only a command with presets has defaults that another option changes.
    std::printf(app.get_option_no_throw("--preset") != nullptr
                    ? "# not given: the value used, the default or what the preset, the pattern "
                      "or --depth chose\n"
                    : "# not given: the default\n");
    noted = true;
  };
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty()) continue;
    const std::string name = option->get_lnames().front();
    if (is_about_the_options(name)) continue;
    const bool given = option->count() > 0;
    std::string value;
    if (is_flag(*option)) {
      value = given ? "true" : "false";
    } else if (given) {
      // The value the command uses: the last of an option given twice (TakeLast).
      for (const std::string& result : option->reduced_results()) {
        value += (value.empty() ? "" : ",") + result;
      }
    } else if (const auto found = chosen.find(name); found != chosen.end()) {
      value = found->second;  // a preset's, a pattern's or the depth's choice
    } else {
      value = option->get_default_str();
    }
    if (!given && value.empty()) {
      // Not given and no default (a seed, a pattern, a folder of pictures): said, not a key.
      note_once();
      std::printf("# %s: not set\n", name.c_str());
      continue;
    }
    // A seed too is a number in the file (UINT), though a string option (its range is a 64-bit
    // one's).
    if (!is_flag(*option) && !takes_number(*option)) value = toml_string(value);
    if (!given) note_once();
    std::printf("%s%s = %s\n", given ? "" : "# ", name.c_str(), value.c_str());
  }
}

}  // namespace

bool given(const CLI::App& app, const char* option) {
  const CLI::Option* found = app.get_option_no_throw(option);
  return found != nullptr && found->count() > 0;
}

void refuse_empty_name(const CLI::App& app, const char* option, const std::string& name) {
  if (name.empty() && given(app, option))
    throw InvalidInput(std::string(option + 2) + ": the file name is empty");
}

void record_given(const CLI::App& app, requests::ProblemSettings& problem) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() > 0 && !option->get_lnames().empty()) {
      problem.given.insert(option->get_lnames().front());
    }
  }
}

std::string config_origin_of(const std::string& message) {
  // The request's checks say "NAME must ..." or "NAME: ..." of a value they refuse.
  const std::size_t end = message.find_first_of(" :");
  if (end == std::string::npos) return {};
  const std::string_view rest = std::string_view(message).substr(end);
  if (!rest.starts_with(" must ") && !rest.starts_with(": ")) return {};
  const auto found = taken_from_config().find(message.substr(0, end));
  return found == taken_from_config().end() ? std::string() : " (" + found->second + ")";
}

void apply_config(CLI::App& app, const std::string& path,
                  const std::function<ChosenValues()>& check) {
  const bool print = app.get_option("--print-config")->count() > 0;
  refuse_empty_name(app, "--config", path);
  if (!path.empty()) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error))
      throw InvalidInput("config " + path + " is a directory, not a TOML file");
#if GRAYSCOTT_WITH_MPI
    // Every rank reads the file: a pipe would be read by one of them, the others finding it empty
    // and running with the defaults.
    if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error) &&
        mpi::launched_by_mpi_launcher()) {
      throw InvalidInput("config " + path +
                         " is not a file (a pipe?): under an MPI launcher every rank reads it, "
                         "so give a file");
    }
#endif
    // A device's bytes are no TOML (/dev/zero would be read until memory runs out); a pipe is
    // read (a shell's <(...), /dev/stdin), a FIFO waits for its writer as `cat` would.
    if (const auto type = std::filesystem::status(path, error).type();
        type == std::filesystem::file_type::character ||
        type == std::filesystem::file_type::block || type == std::filesystem::file_type::socket) {
      throw InvalidInput("config " + path + " is " + io::special_file_kind(type) +
                         ", not a TOML file");
    }
    // Read here, not by toml::parse_file, which asks the file's size first: a pipe has none, and
    // a file that is missing deserves its own reason. A file of options is small: one that goes
    // on past a mebibyte (a pipe that never ends) is no config.
    constexpr std::size_t largest = std::size_t{1} << 20;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidInput("config " + path + ": " + std::strerror(errno));
    std::string contents;
    for (char chunk[65536]; in.read(chunk, sizeof chunk) || in.gcount() > 0;) {
      contents.append(chunk, static_cast<std::size_t>(in.gcount()));
      if (contents.size() > largest)
        throw InvalidInput("config " + path + " holds more than 1 MiB: not a file of options");
    }
    if (in.bad()) throw InvalidInput("config " + path + ": cannot be read");
    toml::table table;
    try {
      table = toml::parse(contents, std::string_view(path));
    } catch (const toml::parse_error& e) {
      const auto& at = e.source().begin;
      if (at.line == 0) throw InvalidInput("config " + path + ": " + std::string(e.description()));
      throw InvalidInput("config " + path + " line " + std::to_string(at.line) + ": " +
                         std::string(e.description()));
    }
    CLI::App* root = app.get_parent() != nullptr ? app.get_parent() : &app;
    // The commands that read a config file: their names are the sections.
    std::vector<CLI::App*> readers;
    std::string sections;
    for (CLI::App* command : commands_of(*root)) {
      if (command->get_option_no_throw("--config") == nullptr) continue;
      readers.push_back(command);
      sections += (sections.empty() ? "" : ", ") + command->get_name();
    }
    const auto section_command = [&](const std::string& name) -> CLI::App* {
      const auto found = std::find_if(readers.begin(), readers.end(),
                                      [&](const CLI::App* c) { return c->get_name() == name; });
      return found == readers.end() ? nullptr : *found;
    };
    const auto where = [&](const toml::node& node, const std::string& name) {
      return "config " + path + " line " + std::to_string(node.source().begin.line) + ", key '" +
             name + "'";
    };
    // Every unknown key and every value of the wrong kind is reported at once, in the file's
    // order, each with its line (an unknown key with the nearest option name when there is one).
    std::vector<std::pair<std::int64_t, std::string>> unknown, wrong;
    const auto apply = [&](CLI::Option& option, const toml::node& node, const std::string& name) {
      try {
        apply_key(option, node, where(node, name));
      } catch (const InvalidInput& e) {
        std::string text = e.what();
        const std::string prefix = "config " + path + " ";
        if (text.rfind(prefix, 0) == 0) text.erase(0, prefix.size());
        wrong.emplace_back(node.source().begin.line, text);
      }
    };
    // Keys the command's own options could not take (the examples of its options then follow).
    bool unknown_here = false;
    const auto unknown_key = [&](const toml::node& node, const std::string& key,
                                 const std::string& name, bool top_level,
                                 CLI::App* other_command = nullptr) {
      // Another command's section: its keys are that command's options, checked now so that a
      // misspelt key is told when the file is first used, not when that command runs (its values
      // are checked then).
      unknown_here = unknown_here || other_command == nullptr;
      std::string near = nearest_option(other_command ? *other_command : app, name,
                                        /*primary=*/true);
      // A top-level key, shared by the commands, may be another command's option misspelt.
      for (CLI::App* command : commands_of(*root)) {
        if (!near.empty() || !top_level || command == &app) continue;
        if (const std::string other = nearest_option(*command, name, /*primary=*/true);
            !other.empty())
          near = other + ", an option of " + command->get_name();
      }
      const std::string what =
          other_command ? "not an option of " + other_command->get_name() : "unknown key";
      const std::string hint =
          name == "config"         ? " (a config file names options, not another config)"
          : name == "print-config" ? " (--print-config is asked for on the command line)"
          : near.empty()           ? ""
                                   : " (did you mean " + near + "?)";
      unknown.emplace_back(node.source().begin.line, "line " +
                                                         std::to_string(node.source().begin.line) +
                                                         ", key '" + key + "': " + what + hint);
    };
    // The command's own section first: its keys win over the top level's.
    if (const toml::table* section = table[app.get_name()].as_table()) {
      for (const auto& [key, node] : *section) {
        const std::string name(key.str());
        CLI::Option* option = option_for(app, name);
        if (option == nullptr) {
          unknown_key(node, app.get_name() + "." + name, name, false);
          continue;
        }
        apply(*option, node, app.get_name() + "." + name);
      }
    }
    for (const auto& [key, node] : table) {
      const std::string name(key.str());
      if (node.is_array_of_tables() && section_command(name) != nullptr) {
        throw InvalidInput(where(node, name) + ": [[" + name + "]] is an array of tables; a " +
                           "command's section is [" + name + "]");
      }
      if (node.is_table()) {
        CLI::App* command = section_command(name);
        if (command == nullptr) {
          throw InvalidInput(where(node, name) + ": unknown section (the sections are " + sections +
                             ", the commands that read a config file)");
        }
        if (command == &app) continue;  // read above
        for (const auto& [other_key, other_node] : *node.as_table()) {
          const std::string other_name(other_key.str());
          if (option_for(*command, other_name) == nullptr)
            unknown_key(other_node, name + "." + other_name, other_name, false, command);
        }
        continue;
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
        unknown_key(node, name, name, true);
        continue;
      }
      apply(*option, node, name);
    }
    if (!unknown.empty() || !wrong.empty()) {
      std::vector<std::pair<std::int64_t, std::string>> problems = unknown;
      problems.insert(problems.end(), wrong.begin(), wrong.end());
      std::stable_sort(problems.begin(), problems.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string message = "config " + path;
      for (std::size_t i = 0; i < problems.size(); ++i) {
        message += (i == 0 ? " " : "; ") + problems[i].second;
      }
      if (!unknown_here) throw InvalidInput(message);
      // Three of this command's own options as examples.
      std::string examples;
      int shown = 0;
      for (const CLI::Option* option : app.get_options()) {
        if (option->get_lnames().empty() || shown == 3) continue;
        const std::string& name = option->get_lnames().front();
        if (is_about_the_options(name)) continue;
        examples += (shown++ == 0 ? "" : ", ") + name;
      }
      throw InvalidInput(message + " (keys are the long option names of '" + app.get_name() +
                         "', e.g. " + examples + ")");
    }
  }
  if (print) {
    const ChosenValues chosen = check ? check() : ChosenValues{};
    if (!secondary_mpi_process()) print_config(app, chosen);
    throw ConfigPrinted();
  }
}

}  // namespace grayscott::app

namespace grayscott::app {

std::string explain_parse_error(const CLI::ParseError& error, CLI::App& command) {
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // Words after "--" that the command does not take reach the program's own extras (in
    // reverse order, as CLI11 lists them): an option of the command among them was meant as one.
    const std::vector<std::string> remaining = command.remaining();
    std::vector<std::string> extras = remaining;
    if (extras.empty() && command.get_parent() != nullptr) {
      extras = command.get_parent()->remaining();
      std::reverse(extras.begin(), extras.end());
    }
    for (const std::string& extra : extras) {
      if (extra.starts_with("-") && command.get_option_no_throw(extra) != nullptr) {
        return "'" + extra + "' comes after '--', which ends the options: give " +
               command.get_name() + "'s options before it";
      }
    }
    for (const std::string& extra : remaining) {
      if (extra.rfind("--", 0) != 0) continue;
      const std::string name = extra.substr(2, extra.find('=') - 2);
      const std::string near = nearest_option(command, name);
      return "unknown option --" + name + (near.empty() ? "" : " (did you mean --" + near + "?)");
    }
    // A short option this command does not have (render's -o): the one long option of that
    // letter, where there is one.
    for (const std::string& extra : remaining) {
      if (extra.size() != 2 || extra[0] != '-' ||
          !std::isalpha(static_cast<unsigned char>(extra[1])))
        continue;
      std::vector<std::string> begun;
      for (const CLI::Option* option : command.get_options()) {
        for (const std::string& name : option->get_lnames())
          if (name.front() == extra[1]) begun.push_back(name);
      }
      return "unknown option " + extra +
             (begun.size() == 1 ? " (did you mean --" + begun.front() + "?)" : std::string());
    }
    if (!extras.empty()) return "unexpected argument '" + extras.front() + "'";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    // CLI11 says "Could not convert: --rows = ten".
    const std::string text = error.what();
    const std::size_t colon = text.find(": "), equals = text.find(" = ");
    if (colon != std::string::npos && equals != std::string::npos && equals > colon) {
      const std::string name = text.substr(colon + 2, equals - colon - 2);
      const std::string value = text.substr(equals + 3);
      const CLI::Option* option = command.get_option_no_throw(name);
      const std::string type = option != nullptr ? option->get_type_name() : "";
      const std::string expected = type.rfind("INT", 0) == 0     ? "a whole number"
                                   : type.rfind("FLOAT", 0) == 0 ? "a number"
                                                                 : "another value";
      return name + ": expected " + expected + ", got '" + value + "'";
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    // CLI11 says "--config: At Most 1 required but received 2".
    const std::string text = error.what();
    const std::string marker = ": At Most 1 required but received ";
    if (const std::size_t at = text.find(marker); at != std::string::npos) {
      return text.substr(0, at) + " given " + text.substr(at + marker.size()) +
             " times; it takes one value";
    }
  }
  return error.what();
}

std::vector<CLI::App*> commands_of(CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

void print_note(const std::string& note) {
  if (!note.empty()) std::fprintf(stderr, "note: %s\n", note.c_str());
}

std::string docs_pointer() {
  return "Documentation: README.md and docs/ in the grayscott source tree (docs/file-format.md, "
         "docs/sweeps.md, docs/cluster.md, docs/python.md, docs/backends.md).";
}

void read_numbers_strictly(CLI::App& app) {
  // CLI11 reads a whole number with strtoll's base 0, where 010 is eight and 0x40 is 64: a
  // leading zero would silently change the grid. Every whole-number option takes decimal digits
  // only (a sign and spaces around them allowed), leading zeros dropped before CLI11 reads them.
  const CLI::Validator decimal(
      [](std::string& text) -> std::string {
        std::string_view digits = text;
        while (!digits.empty() && std::isspace(static_cast<unsigned char>(digits.front()))) {
          digits.remove_prefix(1);
        }
        while (!digits.empty() && std::isspace(static_cast<unsigned char>(digits.back()))) {
          digits.remove_suffix(1);
        }
        const std::string sign = !digits.empty() && (digits[0] == '-' || digits[0] == '+')
                                     ? std::string(1, digits[0])
                                     : std::string();
        digits.remove_prefix(sign.size());
        const bool all_digits =
            !digits.empty() &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!all_digits) return "expected a whole number, got '" + text + "'";
        while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
        // Beyond 64 bits CLI11 would read the nearest (2^63-1), and a message say "got
        // 9223372036854775807" of a number nobody gave.
        const std::string_view limit = sign == "-" ? "9223372036854775808" : "9223372036854775807";
        if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit)) {
          return "'" + text + "' is out of range (" +
                 (sign == "-" ? "at least -2^63" : "at most 2^63-1") + ")";
        }
        text = sign + std::string(digits);
        return {};
      },
      "", "decimal");
  const auto blank = [](const std::string& text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
  };
  // CLI11 reads an empty text as the number 0: `--feed ""` (a script's empty variable) would run
  // with F = 0. A number option takes a number.
  const CLI::Validator some_number(
      [blank](std::string& text) -> std::string {
        return blank(text) ? "expected a number, got '" + text + "'" : std::string();
      },
      "", "some number");
  // A text option given empty would mean its default, silently (--pattern "", --render ""): said.
  // The files whose empty name has words of its own (output, resume, config, video, seeds) keep
  // them, as do the commands' own files (render "", info "", repair "": the file name is empty).
  const auto some_text = [blank](const std::string& option) {
    return CLI::Validator(
        [blank, option](std::string& text) -> std::string {
          return blank(text)
                     ? "an empty value: give one, or leave --" + option + " out for its default"
                     : std::string();
        },
        "", "some text");
  };
  const std::set<std::string> named_when_empty = {"output", "resume", "config", "video", "seeds"};
  // `-o --force` (the file's name forgotten) made a file named "--force": a text that is one of
  // the command's options is no value.
  const auto not_an_option = [](const CLI::App& command) {
    return CLI::Validator(
        [&command](std::string& text) -> std::string {
          const std::string name = text.substr(0, text.find('='));
          if (name.size() > 2 && name.rfind("--", 0) == 0 &&
              command.get_option_no_throw(name) != nullptr) {
            return "'" + text + "' is an option of " + command.get_name() +
                   ", not a value (the value is missing before it)";
          }
          return {};
        },
        "", "not an option");
  };
  const auto apply = [&](CLI::App& command) {
    for (CLI::Option* option : command.get_options()) {
      if (is_flag(*option)) continue;
      if (!takes_number(*option)) option->transform(not_an_option(command));
      if (takes_whole_number(*option)) {
        option->transform(decimal);
      } else if (takes_number(*option)) {
        option->transform(some_number);
      } else if (!option->get_lnames().empty() &&
                 named_when_empty.count(option->get_lnames().front()) == 0) {
        option->transform(some_text(option->get_lnames().front()));
      }
    }
  };
  apply(app);
  for (CLI::App* command : commands_of(app)) apply(*command);
}

void name_metavars(CLI::App& app) {
  // The settings' metavars come from their table (requests/settings.hpp); these name the rest,
  // only where CLI11 would say TEXT: its INT and FLOAT already say what a number option takes.
  const std::pair<const char*, std::string> names[] = {
      {"output", "FILE.h5"}, {"out", "DIR"},      {"config", "FILE.toml"},
      {"range", "LO:HI"},    {"field", "u|v"},    {"video", "FILE.mp4|.webm|.gif|.avi"},
      {"colormap", "NAME"},  {"scale", "N|auto"}, {"resume", "FILE.h5"},
      {"file", "FILE.h5"},   {"preset", "NAME"},  {"io", "none|hdf5"},
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
