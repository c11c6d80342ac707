// Each subcommand registers itself on the root app; its callback does the work.
#pragma once

#include <CLI/CLI.hpp>

namespace grayscott::app {

void add_run_command(CLI::App& root);
void add_render_command(CLI::App& root);
void add_info_command(CLI::App& root);
void add_bench_command(CLI::App& root);

}  // namespace grayscott::app
