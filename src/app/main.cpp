// grayscott: the command-line front end. Thin by design: each subcommand parses its options and
// calls the engine and I/O libraries.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "app/version.hpp"
#include "model/model.hpp"
#include "pipeline/run.hpp"
#include "pipeline/under_mpi_errors.hpp"
#include "requests/names.hpp"

int main(int argc, char** argv) {
  using namespace grayscott;
  CLI::App app{"grayscott: the Gray-Scott reaction-diffusion engine", "grayscott"};
  app.set_version_flag("--version", std::string("grayscott ") + version);
  app.require_subcommand(1);
  app::add_run_command(app);
  app::add_render_command(app);
  app::add_info_command(app);
  app::add_repair_command(app);
  app::add_sweep_command(app);
  app::add_bench_command(app);
  app.footer(
      "Examples:\n"
      "  grayscott run --rows 256 --cols 256 --images 100 -o spots.h5 --render spots/\n"
      "  grayscott render spots.h5 --video spots.mp4 --annotate\n"
      "  grayscott sweep --feed 0.01:0.06:8 --kill 0.04:0.07:8 --rows 96 --cols 96 -o sweep.h5\n"
      "  grayscott COMMAND --help          the options of one command\n\n" +
      app::docs_pointer());
  app::read_numbers_strictly(app);
  app::name_metavars(app);
  // An unknown or missing command is named, with the list, before CLI11 says something vaguer.
  std::string commands;
  std::vector<std::string> command_names;
  bool known = false;
  for (const CLI::App* command : app::commands_of(app)) {
    commands += (commands.empty() ? "" : ", ") + command->get_name();
    command_names.push_back(command->get_name());
    known = known || (argc >= 2 && command->check_name(argv[1]));
  }
  const bool first_is_an_option = argc >= 2 && argv[1][0] == '-';  // --help, --version, ...
  if (!known && !first_is_an_option) {
    if (app::secondary_mpi_process()) return 2;
    if (argc < 2) {
      std::fprintf(stderr, "grayscott: error: a command is needed: %s (see grayscott --help)\n",
                   commands.c_str());
    } else {
      const std::string near = requests::nearest_name(argv[1], command_names);
      std::fprintf(stderr,
                   "grayscott: error: unknown command '%s'%s; the commands are %s (see grayscott "
                   "--help)\n",
                   argv[1], near.empty() ? "" : (" (did you mean " + near + "?)").c_str(),
                   commands.c_str());
    }
    return 2;
  }
  // A command's options given before it (grayscott --rows 5 run): CLI11 would say the arguments
  // were not expected, in reverse order.
  if (first_is_an_option && app.get_option_no_throw(argv[1]) == nullptr) {
    // The first name of a command that is not an option's value (-o render run: run).
    const auto takes_a_value = [&](std::string_view option) {
      if (!option.starts_with("-") || option.find('=') != std::string_view::npos) return false;
      for (const CLI::App* command : app::commands_of(app)) {
        const CLI::Option* found = command->get_option_no_throw(std::string(option));
        if (found != nullptr && found->get_items_expected_max() > 0) return true;
      }
      return false;
    };
    int command_at = 0;
    for (int k = 2; k < argc && command_at == 0 && std::string_view(argv[k]) != "--"; ++k) {
      if (std::find(command_names.begin(), command_names.end(), argv[k]) != command_names.end() &&
          !takes_a_value(argv[k - 1]))
        command_at = k;
    }
    if (command_at > 0) {
      const int k = command_at;
      const std::string_view arg = argv[k];
      if (app::secondary_mpi_process()) return 2;
      std::string meant = "grayscott " + std::string(arg);
      for (int j = 1; j < argc; ++j) {
        if (j != k) meant += " " + std::string(argv[j]);
      }
      std::fprintf(stderr, "grayscott: error: options go after the command: %s\n", meant.c_str());
      return 2;
    }
  }
  if (const std::string misread = app::misread_option_value(argc, argv); !misread.empty()) {
    if (app::secondary_mpi_process()) return 2;
    std::fprintf(stderr, "grayscott: error: %s\n", misread.c_str());
    return 2;
  }
  // Where a parse error sends the user: the help of the command being parsed.
  const auto help_for = [&app] {
    const auto parsed = app.get_subcommands();
    return parsed.empty() ? std::string("grayscott --help")
                          : "grayscott " + parsed.back()->get_name() + " --help";
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const app::ConfigPrinted&) {
    return 0;
  } catch (const pipeline::ErrorAlreadyReported& e) {
    return e.exit_code;
  } catch (const pipeline::RunInterrupted& e) {
    // Not an error: the run stopped where it was asked to, and can be continued.
    if (app::secondary_mpi_process()) return 128 + e.signal;
    std::fprintf(stderr, "grayscott: %s\n", e.what());
    return 128 + e.signal;
  } catch (const CLI::ParseError& e) {
    if (app::secondary_mpi_process()) return 2;
    const auto parsed = app.get_subcommands();
    CLI::App& command = parsed.empty() ? app : *parsed.back();
    std::fprintf(stderr, "grayscott: error: %s (see %s)\n",
                 app::explain_parse_error(e, command).c_str(), help_for().c_str());
    return 2;
  } catch (const InvalidInput& e) {
    if (app::secondary_mpi_process()) return 2;
    std::fprintf(stderr, "grayscott: error: %s%s\n", e.what(),
                 app::config_origin_of(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    if (app::secondary_mpi_process()) return 1;
    std::fprintf(stderr, "grayscott: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
