// Each subcommand registers itself on the root app; its callback does the work.
#pragma once

#include <CLI/CLI.hpp>

namespace grayscott::app {

void add_run_command(CLI::App& root);
void add_render_command(CLI::App& root);
void add_info_command(CLI::App& root);
void add_repair_command(CLI::App& root);
void add_sweep_command(CLI::App& root);
void add_bench_command(CLI::App& root);

// True in every process but the first of a job started by an MPI launcher (mpirun, srun): the
// ranks of one run share one error message, printed by rank 0; the others exit quietly.
bool secondary_mpi_process();

}  // namespace grayscott::app
