#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "app/progress.hpp"
#include "app/run_driver.hpp"
#include "io/render.hpp"
#if GRAYSCOTT_WITH_MPI
#include "app/distributed_run.hpp"
#include "app/under_mpi.hpp"
#endif

namespace grayscott::app {

namespace {
struct RunCliState {
  ProblemOptions problem;
  EngineCliOptions engine;
  InitialCliOptions initial;
  OutputCliOptions out{.output = "output.h5"};
  std::string config, render_dir;
#if GRAYSCOTT_WITH_MPI
  DistributedRunOptions distributed;
#endif
};

// The summary line and the optional pictures, from the one process that reports.
void report(const RunRequest& request, const RunSummary& summary) {
  const Grid& g = request.problem.grid;
  if (!request.quiet) {
    std::fprintf(stderr, "%s %lld images of %lldx%lld (%s, %s) to %s in %s: %s\n",
                 summary.completed ? "wrote" : "wrote only",
                 static_cast<long long>(summary.images_written), static_cast<long long>(g.rows),
                 static_cast<long long>(g.cols),
                 std::string(to_string(request.problem.precision)).c_str(), summary.backend.c_str(),
                 request.output.c_str(), format_duration(summary.seconds).c_str(),
                 format_rate(summary.cell_updates_per_s).c_str());
  }
  if (request.render_dir && summary.images_written > 0) {
    io::RenderOptions render;
    render.out_dir = *request.render_dir;
    const auto pictures = io::render_run(request.output, render);
    if (!request.quiet) {
      std::fprintf(stderr, "rendered %zu pictures into %s\n", pictures.size(),
                   request.render_dir->c_str());
    }
  }
  if (!summary.completed) throw std::runtime_error(request.output.string() + ": " + summary.status);
}

#if GRAYSCOTT_WITH_MPI
// Under an MPI launcher. One rank: exactly the serial program. Several: the distributed run;
// every rank gets the same outcome and rank 0 reports it.
void run_under_mpi(const std::function<RunRequest()>& make_request,
                   const DistributedRunOptions& options) {
  run_on_every_rank([&](const mpi::Session& session) {
    const RunRequest request = make_request();
    if (session.size() == 1) {
      if (!options.decomposition.empty() && options.decomposition != "1x1") {
        throw InvalidInput("decomposition " + options.decomposition + " needs more than one rank");
      }
      report(request, execute_run(request));
      return;
    }
    const RunSummary summary = execute_distributed_run(request, options, session);
    if (session.rank() == 0)
      report(request, summary);
    else if (!summary.completed)
      throw std::runtime_error(summary.status);
  });
}
#endif
}  // namespace

bool secondary_mpi_process() {
#if GRAYSCOTT_WITH_MPI
  // The launchers' rank variables: known before (and without) MPI_Init.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* rank = std::getenv(name)) return std::atoi(rank) != 0;
  }
#endif
  return false;
}

void add_run_command(CLI::App& root) {
  auto state = std::make_shared<RunCliState>();
  CLI::App* run = root.add_subcommand("run", "Run a simulation and write every image to HDF5");
  add_problem_options(*run, state->problem);
  add_initial_options(*run, state->initial);
  add_image_options(*run, state->out, "Images to write");
  add_engine_options(*run, state->engine);
  add_output_options(*run, state->out);
  run->add_option("--render", state->render_dir, "Also write PNG pictures of v into this folder");
  add_config_option(*run, state->config);
#if GRAYSCOTT_WITH_MPI
  run->add_option("--decomposition", state->distributed.decomposition,
                  "Under mpirun/srun: ROWSxCOLS ranks (default: MPI_Dims_create's choice)");
  run->add_option("--halo-depth", state->distributed.halo_depth,
                  "Under mpirun/srun: halo cells = steps per halo exchange (0: automatic; the CPU "
                  "fuses the steps between exchanges)")
      ->capture_default_str();
  run->add_option("--cuda-aware-mpi", state->distributed.cuda_aware_mpi,
                  "Under mpirun/srun, on GPUs: pass halo messages to MPI in device memory "
                  "(auto: when the MPI library says it can)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  run->add_option("--overlap-writes", state->distributed.overlap_writes,
                  "Under mpirun/srun: write each image while the next is computed (auto: when "
                  "each rank leaves a core free for its writer thread)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
#endif

  run->callback([run, state] {
    const auto make_request = [run, state] {
      apply_config(*run, state->config);
      RunRequest request;
      request.problem = state->problem.to_problem();
      request.initial = state->initial.to_initial_state();
      state->out.apply_to(request);
      request.engine = state->engine.to_engine_options();
      if (!state->render_dir.empty()) {
        // The pictures come after the run: a folder they cannot go into is refused before it.
        io::check_render_folder(state->render_dir);
        request.render_dir = state->render_dir;
      }
      return request;
    };
#if GRAYSCOTT_WITH_MPI
    if (mpi::launched_by_mpi_launcher()) return run_under_mpi(make_request, state->distributed);
    if (!state->distributed.decomposition.empty() && state->distributed.decomposition != "1x1") {
      throw InvalidInput("decomposition " + state->distributed.decomposition +
                         " needs an MPI launcher (mpirun -n P, srun)");
    }
#endif
    const RunRequest request = make_request();
    report(request, execute_run(request));
  });
}

}  // namespace grayscott::app
