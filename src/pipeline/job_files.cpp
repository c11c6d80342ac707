#include "pipeline/job_files.hpp"

#include <optional>
#include <stdexcept>

#include "app/version.hpp"
#include "io/files/run_file.hpp"
#include "io/files/sweep_file.hpp"
#include "io/files/writer_process.hpp"
#include "pipeline/adapters.hpp"
#include "pipeline/progress.hpp"

namespace grayscott::pipeline {

namespace {

// What a run request and a sweep request say alike, into their job.
template <class Request>
Job job_with_common_settings(const Request& request) {
  Job job;
  job.problem = request.problem;
  job.images = request.images;
  job.steps_per_image = request.steps_per_image;
  job.fields = request.fields;
  job.engine = request.engine;
  job.quiet = request.quiet;
  job.resume = request.resume;
  job.save = request.save;
  job.analysis = request.analysis;
  job.on_progress = request.on_progress;
  return job;
}

}  // namespace

Job job_of(const RunRequest& request) {
  Job job = job_with_common_settings(request);
  job.member_params = {request.problem.params};
  job.member_initial = {request.initial};
  job.custom_initial = request.custom_initial;
  job.one_simulation = true;
  job.on_image = request.on_image;
  return job;
}

Job job_of(const SweepRequest& request) {
  Job job = job_with_common_settings(request);
  job.member_params.reserve(request.members.size());
  job.member_initial.reserve(request.members.size());
  for (const SweepMember& member : request.members) {
    Parameters params = request.problem.params;
    params.feed = member.feed;
    params.kill = member.kill;
    job.member_params.push_back(params);
    job.member_initial.push_back({request.init.kind, member.seed, request.init.values});
  }
  job.one_simulation = false;
  job.max_batch_bytes = request.max_batch_bytes;
  return job;
}

namespace {

// The calm images in a row at the end of a member's history, and whether it had settled.
SteadyStart steady_start_of(const io::SteadyHistory& history, const SteadyCriterion& criterion) {
  SteadyStart start;
  start.settled = history.settled_image >= 0;
  for (auto change = history.recent_changes.rbegin();
       change != history.recent_changes.rend() && criterion.calm(*change); ++change)
    ++start.calm_images;
  return start;
}

template <class Real>
class RunJobFile final : public JobFile<Real> {
 public:
  explicit RunJobFile(const RunRequest& request)
      : request_(request), meta_{request.problem,
                                 request.images,
                                 request.steps_per_image,
                                 request.fields,
                                 "",
                                 std::string(version),
                                 request.initial,
                                 file_attributes(request.analysis)} {
    if (request.continued) continued_ = *request.continued;  // read once, by resume_request
  }
  void validate() override { validate_run_request(request_); }
  void check_or_claim(bool claims, bool shared) override {
    const std::string path = request_.output.string();
    if (!request_.resume) {
      if (claims)
        claim_output(request_.output, request_.overwrite, request_.quiet, meta_, request_.notices);
      return;
    }
    if (!continued_) continued_ = io::read_run_state(request_.output);
    refuse_an_unstored_start(*continued_, request_.output);
    if (run_is_finished(continued_->status))
      throw InvalidInput("nothing to resume: " + path + " holds a complete run");
    if (shared && !continued_->extendable_in_parallel) {
      throw InvalidInput(path +
                         " was written by one process of an earlier grayscott, whose files "
                         "parallel HDF5 cannot extend: continue it without mpirun/srun");
    }
  }
  bool needs_chunks_placed() const override {
    return continued_ && !continued_->every_chunk_placed;
  }
  void place_chunks() override { io::place_unwritten_run_chunks(request_.output); }
  std::int64_t start_image(std::int64_t) const override {
    return continued_ ? continued_->checkpoint_images : 0;
  }
  SteadyStart steady_start(std::int64_t, const SteadyCriterion& criterion) const override {
    return continued_ ? steady_start_of(continued_->steady, criterion) : SteadyStart{};
  }
  void open(const std::string& backend, const io::RunFileAccess& access) override {
    meta_.backend = backend;
    if (continued_)
      writer_.emplace(request_.output, meta_,
                      io::RunFileWriter::Continue{start_image(0), continued_->identity}, access);
    else
      writer_.emplace(request_.output, meta_, request_.overwrite, access);
  }
  void read_checkpoint(std::int64_t, std::int64_t, const BlockPlace& block, std::vector<Real>& u,
                       std::vector<Real>& v) const override {
    io::refuse_if_replaced(request_.output, continued_->identity);
    io::read_checkpoint<Real>(request_.output, block.row_begin, block.rows, block.col_begin,
                              block.cols, u, v, block.plane_begin, block.planes);
  }
  void write_initial_state(const Real* u, const Real* v) override {
    writer_->write_initial_state(u, v);
  }
  void read_initial_state(const BlockPlace& block, std::vector<Real>& u,
                          std::vector<Real>& v) const override {
    io::read_initial_state<Real>(request_.output, block.row_begin, block.rows, block.col_begin,
                                 block.cols, u, v, block.plane_begin, block.planes);
  }
  std::unique_ptr<ImageSink<Real>> sink(std::int64_t, std::int64_t, std::size_t,
                                        bool check_before_handover) override {
    return std::make_unique<RunFileSink<Real>>(*writer_, request_.fields, check_before_handover,
                                               nonfinite_advice(request_.problem),
                                               checkpoint_images_);
  }
  std::exception_ptr finish(const std::string& status, std::exception_ptr error) override {
    if (!writer_) return error;
    writer_->finish(status);
    if (!error || writer_->status_recorded()) return error;
    // The disk had no room even for the status: say what the file needs.
    const std::string path = request_.output.string();
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      return std::make_exception_ptr(std::runtime_error(std::string(e.what()) + "; " + path +
                                                        " still says 'running': grayscott repair " +
                                                        path + " records how it ended"));
    } catch (...) {
    }
    return error;
  }
  std::int64_t images_written() const override { return writer_ ? writer_->images_written() : 0; }
  std::int64_t checkpoint_images() const override {
    return checkpoint_images_ > 0 ? checkpoint_images_ : start_image(0);
  }
  std::uint64_t bytes_per_member() const override {
    return sweep_bytes_per_member(request_.problem, request_.fields);
  }

 private:
  const RunRequest& request_;
  io::RunMetadata meta_;
  std::optional<io::RunFileState> continued_;
  std::optional<io::RunFileWriter> writer_;
  std::int64_t checkpoint_images_ = 0;  // the newest checkpoint the sinks saved (0: none)
};

template <class Real>
class SweepJobFile final : public JobFile<Real> {
 public:
  explicit SweepJobFile(const SweepRequest& request)
      : request_(request),
        nonfinite_(request.resume ? request.nonfinite_image
                                  : std::vector<std::int64_t>(request.members.size(), -1)),
        written_(request.members.size(), 0) {
    for (std::size_t m = 0; m < written_.size(); ++m)
      written_[m] = start_image(static_cast<std::int64_t>(m));
  }
  void validate() override { meta_ = sweep_metadata(request_); }
  void check_or_claim(bool claims, bool) override {
    // A continued sweep's file was read by resume_sweep_request.
    if (!request_.resume && claims)
      claim_output(request_.output, request_.overwrite, request_.quiet, meta_, request_.notices);
  }
  bool needs_chunks_placed() const override {
    return request_.resume && !request_.every_chunk_placed;
  }
  void place_chunks() override { io::place_unwritten_chunks(request_.output); }
  std::int64_t start_image(std::int64_t member) const override {
    return request_.start_images.empty() ? 0
                                         : request_.start_images[static_cast<std::size_t>(member)];
  }
  SteadyStart steady_start(std::int64_t member, const SteadyCriterion& criterion) const override {
    const auto m = static_cast<std::size_t>(member);
    return m < request_.steady_history.size()
               ? steady_start_of(request_.steady_history[m], criterion)
               : SteadyStart{};
  }
  void open(const std::string& backend, const io::RunFileAccess& access) override {
    meta_.backend = backend;
    const io::SweepFileAccess sweep_access{access.file_access, access.writes_companions,
                                           access.partial_tag};
    if (request_.resume)
      writer_.emplace(request_.output, meta_,
                      io::SweepFileWriter::Continue{request_.continued_file}, sweep_access);
    else
      writer_.emplace(request_.output, meta_, request_.overwrite, sweep_access);
  }
  void read_checkpoint(std::int64_t first, std::int64_t count, const BlockPlace&,
                       std::vector<Real>& u, std::vector<Real>& v) const override {
    io::refuse_if_replaced(request_.output, request_.continued_file);
    io::read_sweep_checkpoint<Real>(request_.output, first, count, u, v);
  }
  std::unique_ptr<ImageSink<Real>> sink(std::int64_t first, std::int64_t count, std::size_t cells,
                                        bool) override {
    return std::make_unique<SweepFileSink<Real>>(*writer_, request_.fields, first, count, cells,
                                                 nonfinite_, written_);
  }
  std::vector<std::int64_t>* nonfinite_images() override { return &nonfinite_; }
  std::exception_ptr finish(const std::string& status, std::exception_ptr error) override {
    if (writer_) writer_->finish(status, nonfinite_);
    return error;
  }
  std::int64_t images_written() const override { return 0; }
  std::int64_t checkpoint_images() const override { return 0; }
  std::uint64_t bytes_per_member() const override {
    return sweep_bytes_per_member(request_.problem, request_.fields);
  }

 private:
  const SweepRequest& request_;
  io::SweepMetadata meta_;
  std::vector<std::int64_t> nonfinite_;  // per member: its first non-finite image, or -1
  std::vector<std::int64_t> written_;    // per member: images written
  std::optional<io::SweepFileWriter> writer_;
};

}  // namespace

template <class Real>
std::unique_ptr<JobFile<Real>> run_file_of(const RunRequest& request) {
  return std::make_unique<RunJobFile<Real>>(request);
}
template <class Real>
std::unique_ptr<JobFile<Real>> sweep_file_of(const SweepRequest& request) {
  return std::make_unique<SweepJobFile<Real>>(request);
}

template std::unique_ptr<JobFile<float>> run_file_of(const RunRequest&);
template std::unique_ptr<JobFile<double>> run_file_of(const RunRequest&);
template std::unique_ptr<JobFile<float>> sweep_file_of(const SweepRequest&);
template std::unique_ptr<JobFile<double>> sweep_file_of(const SweepRequest&);

}  // namespace grayscott::pipeline
