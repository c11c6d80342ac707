#include <cstdio>
#include <memory>
#include <set>

#include "app/cli.hpp"
#include "app/commands.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/run.hpp"
#include "pipeline/stop_signal.hpp"
#include "pipeline/sweep.hpp"
#include "requests/value_sets.hpp"
#if GRAYSCOTT_WITH_MPI
#include "pipeline/distributed_sweep.hpp"
#include "pipeline/under_mpi.hpp"
#endif

namespace grayscott::app {

namespace {

using pipeline::format_duration;
using pipeline::format_rate;
using pipeline::SweepRequest;
using pipeline::SweepSummary;

// The closing summary on stderr; an incomplete sweep is an error.
void report(const SweepRequest& request, const SweepSummary& summary) {
  const Grid& g = request.problem.grid;
  if (!request.quiet) {
    // A continued sweep steps each member from its own checkpoint: the time and the rate are
    // this invocation's, not the members' whole.
    const char* verb = request.resume ? (summary.completed ? "completed" : "continued only part of")
                                      : (summary.completed ? "wrote" : "wrote only part of");
    std::fprintf(
        stderr,
        "%s %lld member%s x %lld image%s of %s (%s, %s, %lld batch%s of up to "
        "%lld) to %s in %s: %s%s\n",
        verb, static_cast<long long>(summary.members), summary.members == 1 ? "" : "s",
        static_cast<long long>(request.images), request.images == 1 ? "" : "s", g.text().c_str(),
        std::string(to_string(request.problem.precision)).c_str(), summary.backend.c_str(),
        static_cast<long long>(summary.batches), summary.batches == 1 ? "" : "es",
        static_cast<long long>(summary.batch_size), request.output.c_str(),
        format_duration(summary.seconds).c_str(), format_rate(summary.cell_updates_per_s).c_str(),
        request.resume ? " (each member from its checkpoint, or from its start where it had none)"
                       : "");
  }
  if (const std::string warning = pipeline::nonfinite_members_warning(summary, request.output);
      !warning.empty()) {
    std::fprintf(stderr, "grayscott: warning: %s\n", warning.c_str());
  }
  if (summary.signal != 0 && !summary.completed) {
    throw pipeline::RunInterrupted(
        summary.status + "; continue with: " + pipeline::continue_command(request), summary.signal);
  }
  if (!summary.completed) throw std::runtime_error(request.output.string() + ": " + summary.status);
}

struct SweepCliState {
  requests::SweepSettings settings;
  std::string config, resume;
};

// A continued sweep's parameters come from its file: only how and where it computes may change.
void refuse_parameters_with_resume(const CLI::App& sweep) {
  for (const CLI::Option* option : sweep.get_options()) {
    if (option->count() == 0 || option->get_lnames().empty()) continue;
    static const std::set<std::string> allowed = {
        "resume", "checkpoint-every", "backend", "threads", "fuse", "device",
        "quiet",  "max-batch-memory", "config",  "help"};
    const std::string& name = option->get_lnames().front();
    if (!allowed.count(name)) {
      throw InvalidInput("--" + name +
                         " with --resume: a continued sweep keeps the parameters "
                         "of its file");
    }
  }
}
}  // namespace

void add_sweep_command(CLI::App& root) {
  auto state = std::make_shared<SweepCliState>();
  CLI::App* sweep = root.add_subcommand(
      "sweep", "Run a batch of simulations over feed and kill values (and seeds) into one file");
  sweep->footer(
      "Examples:\n"
      "  grayscott sweep --feed 0.01:0.06:8 --kill 0.04:0.07:8 --rows 96 --cols 96 --images 100 "
      "-o sweep.h5\n"
      "  grayscott sweep --feed 0.03,0.04 --kill 0.06 --init noise --seeds 1,2,3 --rows 128 "
      "--cols 128 --images 100 -o seeds.h5\n"
      "  grayscott render sweep.h5 --out atlas/      the atlas of the last images\n\n" +
      docs_pointer());
  requests::SweepSettings& settings = state->settings;
  // A sweep takes sets of rates: its --feed and --kill are the sweep's own.
  add_settings(*sweep, settings.problem, requests::problem_settings(), {"feed", "kill"});
  add_settings(*sweep, settings, requests::sweep_settings());
  add_settings(*sweep, settings.engine, requests::engine_settings());
  add_settings(*sweep, settings.out, requests::output_settings());
  sweep->get_option("--images")->description("Images per member");
  sweep
      ->add_option("--resume", state->resume,
                   "Continue the sweep in this file, each member from its last checkpoint")
      ->type_name("FILE");
  add_config_option(*sweep, state->config);

  sweep->callback([sweep, state] {
    const auto make_request = [sweep, state] {
      // Nothing is written yet: a stop signal ends the process at once (a config read from a
      // FIFO or stdin may block).
      const pipeline::StopAtOnce reading_options;
      apply_config(*sweep, state->config, request_check(*sweep, state->settings, state->resume));
      record_given(*sweep, state->settings.problem);
      const requests::SweepSettings& given = state->settings;
      refuse_empty_name(*sweep, "--resume", state->resume);
      if (!state->resume.empty()) refuse_parameters_with_resume(*sweep);
      SweepRequest request =
          state->resume.empty() ? given.request() : given.continuing(state->resume);
      pipeline::announce_stop_signals(!request.quiet && !secondary_mpi_process());
      pipeline::say_at_second_interrupt(
          pipeline::left_unfinished(request.output.string(), pipeline::continue_command(request)));
      return request;
    };
#if GRAYSCOTT_WITH_MPI
    // Under mpirun/srun: the members are split over the ranks; rank 0 reports.
    if (mpi::launched_by_mpi_launcher()) {
      const pipeline::StopSignals stop_signals;
      return pipeline::run_on_every_rank([&](const mpi::Session& session) {
        const SweepRequest request = make_request();
        if (session.size() == 1) return report(request, pipeline::execute_sweep(request));
        const SweepSummary summary = pipeline::execute_distributed_sweep(request, session);
        if (session.rank() == 0)
          report(request, summary);
        else if (summary.signal != 0 && !summary.completed)
          throw pipeline::RunInterrupted(summary.status, summary.signal);
        else if (!summary.completed)
          throw std::runtime_error(summary.status);
      });
    }
#endif
    const pipeline::StopSignals stop_signals;
    const SweepRequest request = make_request();
    report(request, pipeline::execute_sweep(request));
  });
}

}  // namespace grayscott::app
