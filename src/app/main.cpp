// grayscott: the command-line front end. Thin by design: each subcommand parses its options and
// calls the engine and I/O libraries.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "app/commands.hpp"
#include "app/version.hpp"
#include "model/model.hpp"
#include "pipeline/run.hpp"
#include "pipeline/under_mpi_errors.hpp"

int main(int argc, char** argv) {
  using namespace grayscott;
  CLI::App app{"grayscott: the Gray-Scott reaction-diffusion engine", "grayscott"};
  app.set_version_flag("--version", std::string("grayscott ") + version);
  app.require_subcommand(1);
  app::add_run_command(app);
  app::add_render_command(app);
  app::add_info_command(app);
  app::add_sweep_command(app);
  app::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const pipeline::ErrorAlreadyReported& e) {
    return e.exit_code;
  } catch (const pipeline::RunInterrupted& e) {
    // Not an error: the run stopped where it was asked to, and can be continued.
    if (app::secondary_mpi_process()) return 128 + e.signal;
    std::fprintf(stderr, "grayscott: %s\n", e.what());
    return 128 + e.signal;
  } catch (const CLI::ParseError& e) {
    if (app::secondary_mpi_process()) return 2;
    std::fprintf(stderr, "grayscott: error: %s (see grayscott --help)\n", e.what());
    return 2;
  } catch (const InvalidInput& e) {
    if (app::secondary_mpi_process()) return 2;
    std::fprintf(stderr, "grayscott: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    if (app::secondary_mpi_process()) return 1;
    std::fprintf(stderr, "grayscott: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
