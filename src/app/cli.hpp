// Shared pieces of the command line: the settings of requests/settings.hpp as options (with the
// course's names as aliases), TOML configuration files, and one-line errors.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "requests/settings.hpp"

namespace grayscott::app {

// Adds the settings of `table` (requests/settings.hpp) to `app` as options that fill `settings`:
// the long name, the course's alias, the help, the default and the metavar all come from the
// table. Settings named in `skip` are left out (a command that takes them otherwise).
template <class S>
void add_settings(CLI::App& app, S& settings, std::span<const requests::Setting<S>> table,
                  std::initializer_list<std::string_view> skip = {}) {
  for (const requests::Setting<S>& setting : table) {
    if (std::find(skip.begin(), skip.end(), setting.option) != skip.end()) continue;
    std::string names = "--" + std::string(setting.option);
    if (setting.option == "output") names = "-o," + names;
    if (!setting.alias.empty()) names += ",--" + std::string(setting.alias);
    const std::string help(setting.help);
    std::visit(
        [&](auto field) {
          auto& value = field(settings);
          if constexpr (std::is_same_v<std::remove_reference_t<decltype(value)>, bool>) {
            app.add_flag(names, value, help);
          } else {
            // Given twice, or under its name and its course alias, the later value wins.
            CLI::Option* option = app.add_option(names, value, help)
                                      ->capture_default_str()
                                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
            if (!setting.choices.empty()) option->type_name(std::string(setting.choices));
          }
        },
        setting.value);
  }
}

// Whether `app` has `option` ("--resume") and it was given on its command line or in --config.
bool given(const CLI::App& app, const char* option);
// Throws InvalidInput ("resume: the file name is empty") when `option` was given an empty file
// name: a script's empty variable, not "none" (which would run the defaults).
void refuse_empty_name(const CLI::App& app, const char* option, const std::string& name);

// Records in `problem.given` the long name of every option of `app` given on its command line or
// in --config, so that a preset or a pattern leaves those as given.
void record_given(const CLI::App& app, requests::ProblemSettings& problem);

// What --print-config shows in place of an option's default: the value that a preset, a pattern
// or the grid's depth chose instead, by the option's long name.
using ChosenValues = std::map<std::string, std::string, std::less<>>;

// For --print-config (apply_config's `check`): the options of `app` checked as its request would
// check them, on a copy of `settings` (a continued run's or sweep's, `resume` given, come from its
// file, unchecked here), and the values its preset, pattern or depth chose.
template <class Settings>
std::function<ChosenValues()> request_check(const CLI::App& app, const Settings& settings,
                                            const std::string& resume) {
  return [&app, &settings, &resume]() -> ChosenValues {
    if (!resume.empty()) return {};
    Settings checked = settings;
    record_given(app, checked.problem);
    (void)checked.request();
    return checked.problem.resolved_choices();
  };
}

// CLI11's parse errors in the words of this program: an unknown option with the nearest known
// one ("did you mean --images?"), a value of the wrong type with the type the option takes.
std::string explain_parse_error(const CLI::ParseError& error, CLI::App& command);

// Adds --config FILE to `app`. Call apply_config() after parsing: each TOML key names a long
// option of `app`; options given on the command line win. Throws InvalidInput naming the file,
// the line and the key for a malformed file or an unknown key.
// A file may hold sections [run], [sweep], [render], [bench]: a section applies to its command
// only and wins over the top-level keys; a top-level key applies to each command that has the
// option (one that no command has is an error). A value of the wrong type (rows = "128") is an
// error. With --print-config (added too), apply_config prints the command's effective options as
// a TOML section that --config reads back, and throws ConfigPrinted: the command does nothing
// else. `check` (when given) validates the options first, so that what is printed is a valid run,
// and returns the values a preset, a pattern or the depth chose, printed in place of defaults.
void add_config_option(CLI::App& app, std::string& path);
void apply_config(CLI::App& app, const std::string& path,
                  const std::function<ChosenValues()>& check = {});
// Where a refused value came from, for its message: " (config run.toml line 3, key 'rows')" when
// `message` ("rows must be a positive integer") begins with an option's name whose value
// apply_config took from a file; empty otherwise.
std::string config_origin_of(const std::string& message);
struct ConfigPrinted {};

// Every command of `app` (CLI11's get_subcommands() lists only those given on the command line).
std::vector<CLI::App*> commands_of(CLI::App& app);

// The message for an option's value that CLI11 would misread, or "" when there is none: "--name="
// with nothing after the '=' (it takes the next argument as the value), and "-o=NAME" (a short
// option's value is all that follows the letter: a file named "=NAME").
std::string misread_option_value(int argc, const char* const* argv);

// The help footers' last line: where the documentation is.
std::string docs_pointer();

// Prints "note: NOTE" on stderr, on a line of its own; nothing when `note` is empty.
void print_note(const std::string& note);

// Makes every whole-number option of `app` and its commands read decimal digits only (CLI11
// reads 010 as eight and 0x40 as 64): "010" is ten, "0x40" an error naming the option; and every
// number option refuse an empty text (CLI11 reads it as 0).
void read_numbers_strictly(CLI::App& app);

// Gives every option of `app` and its commands a metavar that says what it takes (FILE, DIR,
// LO:HI, single|double, ...) in place of CLI11's TEXT, INT and FLOAT where those say too little.
void name_metavars(CLI::App& app);

}  // namespace grayscott::app
