// A run request and a sweep request as the one driver's job (pipeline/job.hpp): the job's members
// and the file they write, in a run's layout or a sweep's.
#pragma once

#include <memory>

#include "pipeline/job.hpp"
#include "pipeline/run.hpp"
#include "pipeline/sweep.hpp"

namespace grayscott::pipeline {

// One member: the request's rates and initial state; stops at its first non-finite image and,
// with --until-steady, once settled.
Job job_of(const RunRequest& request);
// The members of the sweep, each with its feed, kill and seed; a member that blows up or settles
// leaves the others stepping.
Job job_of(const SweepRequest& request);

// The run file (or the file a resumed request continues); the request must outlive it.
template <class Real>
std::unique_ptr<JobFile<Real>> run_file_of(const RunRequest& request);
// The sweep file (or the file a resumed request continues); the request must outlive it.
template <class Real>
std::unique_ptr<JobFile<Real>> sweep_file_of(const SweepRequest& request);

}  // namespace grayscott::pipeline
