#include "io/pictures/video.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "io/files/output_path.hpp"
#include "model/model.hpp"

extern char** environ;

namespace grayscott::io {

namespace fs = std::filesystem;

fs::path find_ffmpeg() {
  if (const char* env = std::getenv("GRAYSCOTT_FFMPEG"); env && *env) {
    return ::access(env, X_OK) == 0 ? fs::path(env) : fs::path();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / "ffmpeg";
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

namespace {

// Runs `argv` with stdin from `in_fd` (or /dev/null when -1) and stdout/stderr into `out`;
// returns the child's pid. Throws std::runtime_error.
pid_t spawn(const std::vector<std::string>& args, int in_fd, int out_fd) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(error));
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// The last non-empty line of what ffmpeg said.
std::string last_line(std::FILE* log) {
  if (log == nullptr) return "";
  std::fflush(log);
  std::rewind(log);
  std::string text, line;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, log)) {
    line = buffer;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) text = line;
  }
  return text;
}

}  // namespace

std::string ffmpeg_description() {
  const fs::path ffmpeg = find_ffmpeg();
  if (ffmpeg.empty()) {
    return "not found (render --video needs the ffmpeg program: apt-get install ffmpeg)";
  }
  std::FILE* log = std::tmpfile();
  if (log == nullptr) return ffmpeg.string();
  std::string version;
  try {
    const pid_t pid = spawn({ffmpeg.string(), "-hide_banner", "-version"}, -1, ::fileno(log));
    const int status = wait_for(pid);
    std::fflush(log);
    std::rewind(log);
    char buffer[256] = {0};
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && std::fgets(buffer, sizeof buffer, log)) {
      version = buffer;
      while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) {
        version.pop_back();
      }
      // "ffmpeg version 5.1.9-0+deb12u1 Copyright ...": the version is enough.
      const auto copyright = version.find(" Copyright");
      if (copyright != std::string::npos) version.resize(copyright);
    }
  } catch (const std::exception&) {
  }
  std::fclose(log);
  if (version.empty()) return ffmpeg.string() + " (does not run)";
  return ffmpeg.string() + " (" + version + ")";
}

std::string video_format(const fs::path& path) {
  const std::string ext = lowercase_extension(path);
  for (const char* format : {"mp4", "webm", "gif", "avi"}) {
    if (ext != std::string(".") + format) continue;
    if (only_an_extension(path)) {
      throw InvalidInput("video " + path.string() +
                         ": the name is all extension (name the file, e.g. --video run.mp4)");
    }
    return format;
  }
  throw InvalidInput("video " + path.string() +
                     ": expected a name ending in .mp4, .webm, .gif or .avi");
}

void check_video_output(const fs::path& path, bool overwrite) {
  video_format(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw PathIsDirectory("video " + path.string() + " is a directory, not a file");
  }
  check_replaceable(path, "video");
  if (fs::exists(fs::symlink_status(path, ec)) && !overwrite) {
    throw PathExists("video " + path.string() + " already exists (use --force to overwrite)");
  }
  const fs::path folder = folder_of(path);
  if (!fs::is_directory(folder, ec)) {
    throw PathNotFound("video folder " + folder.string() + " does not exist");
  }
  if (const std::string why = why_not_writable(folder); !why.empty()) {
    throw PathDenied("video folder " + folder.string() + " is not writable (" + why + ")");
  }
  if (find_ffmpeg().empty()) {
    const char* env = std::getenv("GRAYSCOTT_FFMPEG");
    throw InvalidInput(env && *env ? "render --video: GRAYSCOTT_FFMPEG=" + std::string(env) +
                                         " is not an executable program"
                                   : std::string("render --video needs the ffmpeg program, which "
                                                 "is not on PATH (Debian: apt-get install "
                                                 "ffmpeg; or set GRAYSCOTT_FFMPEG)"));
  }
}

VideoWriter::VideoWriter(const fs::path& path, double fps, bool overwrite)
    : path_(path), fps_(fps), overwrite_(overwrite) {
  check_video_output(path, overwrite);
  if (!(fps > 0) || fps > 1000) throw InvalidInput("fps: expected a number from 0 to 1000");
  partial_ = partial_name(path, std::to_string(::getpid()));
  remove_abandoned_partials(path, partial_);  // a video's of a rendering killed by SIGKILL
  unless_whole_.emplace(partial_);
}

VideoWriter::~VideoWriter() { abandon(); }

void VideoWriter::abandon() {
  if (pipe_ >= 0) ::close(pipe_), pipe_ = -1;
  if (child_ > 0) {
    ::kill(child_, SIGTERM);
    reap_child();
  }
  if (log_ != nullptr) std::fclose(log_), log_ = nullptr;
  std::error_code ignored;
  if (!partial_.empty()) fs::remove(partial_, ignored);
}

int VideoWriter::reap_child() {
  // Ended at an abrupt exit while it is waited for (ffmpeg finishing a file, or its SIGTERM), and
  // no longer once it is reaped, when its pid may become another process's: waited for first
  // without reaping (its pid stays its own), unregistered, then reaped.
  siginfo_t ended{};
  while (::waitid(P_PID, static_cast<id_t>(child_), &ended, WEXITED | WNOWAIT) != 0 &&
         errno == EINTR) {
  }
  if (unless_whole_) unless_whole_->set_writer(0);
  const int status = wait_for(child_);
  child_ = -1;
  return status;
}

void VideoWriter::start(std::int64_t width, std::int64_t height) {
  width_ = width + (width % 2), height_ = height + (height % 2);
  const std::string format = video_format(path_);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", fps_);
  std::vector<std::string> args = {find_ffmpeg().string(),
                                   "-hide_banner",
                                   "-nostdin",
                                   "-loglevel",
                                   "error",
                                   "-f",
                                   "rawvideo",
                                   "-pix_fmt",
                                   "rgb24",
                                   "-video_size",
                                   std::to_string(width_) + "x" + std::to_string(height_),
                                   "-framerate",
                                   rate,
                                   "-i",
                                   "pipe:0"};
  if (format == "mp4") {
    args.insert(args.end(), {"-c:v", "libx264", "-preset", "medium", "-crf", "18", "-pix_fmt",
                             "yuv420p", "-movflags", "+faststart", "-f", "mp4"});
  } else if (format == "avi") {
    // The Python course's format (OpenCV's VideoWriter with the DIVX code): MPEG-4 Part 2 in
    // AVI, ffmpeg's own encoder, tagged DIVX as that course's players expect.
    args.insert(args.end(), {"-c:v", "mpeg4", "-vtag", "DIVX", "-q:v", "2", "-pix_fmt", "yuv420p",
                             "-f", "avi"});
  } else if (format == "webm") {
    args.insert(args.end(), {"-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "30", "-deadline", "good",
                             "-cpu-used", "4", "-row-mt", "1", "-pix_fmt", "yuv420p", "-f",
                             "webm"});
  } else {
    // One palette for the whole animation, from every frame; no dithering on smooth fields.
    args.insert(args.end(), {"-vf", "split[a][b];[a]palettegen=stats_mode=full[p];[b][p]paletteuse",
                             "-loop", "0", "-f", "gif"});
  }
  // As a file, whatever the name: ffmpeg reads "-x.mp4" as an option and "a:b.mp4" as a protocol.
  args.insert(args.end(), {"-y", "file:" + partial_.string()});
  log_ = std::tmpfile();
  if (log_ == nullptr) throw std::runtime_error("cannot create a temporary file for ffmpeg's log");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  try {
    child_ = spawn(args, fds[0], ::fileno(log_));
    unless_whole_->set_writer(child_);
  } catch (...) {
    ::close(fds[0]), ::close(fds[1]);
    throw;
  }
  ::close(fds[0]);
  pipe_ = fds[1];
}

void VideoWriter::write(const Rgb8Image& frame) {
  if (frames_ == 0) start(frame.width, frame.height);
  if (frame.width + (frame.width % 2) != width_ || frame.height + (frame.height % 2) != height_) {
    throw std::logic_error("video: frames differ in size");
  }
  // Padded to the even size: the last column and row repeated.
  std::vector<std::uint8_t> row(static_cast<std::size_t>(3 * width_));
  // A pipe whose reader died raises SIGPIPE: ignored here, the write's EPIPE says it.
  struct sigaction ignore {}, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  bool broken = false;
  for (std::int64_t r = 0; r < height_ && !broken; ++r) {
    const std::int64_t from = std::min(r, frame.height - 1);
    const std::uint8_t* src = frame.pixels.data() + 3 * from * frame.width;
    std::copy_n(src, 3 * frame.width, row.begin());
    if (width_ > frame.width) std::copy_n(src + 3 * (frame.width - 1), 3, row.end() - 3);
    std::size_t done = 0;
    while (done < row.size()) {
      const ssize_t n = ::write(pipe_, row.data() + done, row.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        broken = true;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  if (broken) {
    ::close(pipe_), pipe_ = -1;
    const int status = reap_child();
    const std::string said = last_line(log_);
    abandon();
    throw std::runtime_error("ffmpeg stopped while encoding " + path_.string() +
                             (said.empty() ? "" : ": " + said) +
                             (WIFEXITED(status) ? " (exit " + std::to_string(WEXITSTATUS(status)) + ")"
                                                : ""));
  }
  ++frames_;
}

void VideoWriter::finish() {
  if (frames_ == 0) {
    abandon();
    throw InvalidInput("video " + path_.string() + ": no frame to encode");
  }
  ::close(pipe_), pipe_ = -1;
  const int status = reap_child();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string said = last_line(log_);
    abandon();
    throw std::runtime_error("ffmpeg could not encode " + path_.string() +
                             (said.empty() ? "" : ": " + said));
  }
  std::fclose(log_), log_ = nullptr;
  move_into_place(partial_, path_, overwrite_);
  partial_.clear();
  unless_whole_.reset();
}

}  // namespace grayscott::io
