// Videos of the pictures (MP4, WebM, GIF, AVI), encoded by the `ffmpeg` program (Debian's ffmpeg
// package) through a pipe: raw RGB frames in, the file out. No FFmpeg library is linked.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "io/files/abrupt_exit.hpp"
#include "io/pictures/png.hpp"

namespace grayscott::io {

// The ffmpeg program: $GRAYSCOTT_FFMPEG if set, else `ffmpeg` on PATH; empty when there is none.
std::filesystem::path find_ffmpeg();
// "/usr/bin/ffmpeg (ffmpeg version 5.1.9-0+deb12u1)", or why there is none, for `grayscott info`.
std::string ffmpeg_description();

// The container a video name asks for: "mp4", "webm", "gif" or "avi", from its extension. Throws
// InvalidInput for any other name.
std::string video_format(const std::filesystem::path& path);

// Checks, before anything is rendered, that `path` may be written: a known extension, ffmpeg
// present, a folder that exists, and nothing there unless `overwrite`. Throws InvalidInput.
void check_video_output(const std::filesystem::path& path, bool overwrite);

// One video, written frame by frame. Frames must all have the size of the first; odd sizes are
// padded to even ones (as H.264, VP9 and MPEG-4 in 4:2:0 need) by repeating the last row or column.
// The file is encoded under a temporary name beside `path` and moved into place by finish(),
// replacing a file there only when `overwrite`. Throws std::runtime_error with ffmpeg's last
// words when it fails.
class VideoWriter {
 public:
  VideoWriter(const std::filesystem::path& path, double fps, bool overwrite);
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;
  void write(const Rgb8Image& frame);
  std::int64_t frames() const { return frames_; }
  void finish();

 private:
  void start(std::int64_t width, std::int64_t height);
  void abandon();
  int reap_child();  // waits for ffmpeg to end; its exit status
  std::filesystem::path path_, partial_;
  std::optional<RemovedAtAbruptExit> unless_whole_;  // partial_ and ffmpeg, until finish()
  double fps_;
  bool overwrite_;
  std::int64_t width_ = 0, height_ = 0, frames_ = 0;
  pid_t child_ = -1;
  int pipe_ = -1;
  std::FILE* log_ = nullptr;  // ffmpeg's stderr
};

}  // namespace grayscott::io
