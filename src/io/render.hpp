// `grayscott render`: PNG pictures of a run file's images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace grayscott::io {

class RunFileReader;

struct RenderOptions {
  std::filesystem::path out_dir = "images";
  std::string field = "v";
  double lo = 0.0, hi = 0.5;          // the colour range
  std::optional<std::int64_t> image;  // one image only
};

// Parses "LO:HI"; throws InvalidInput.
std::pair<double, double> parse_range(const std::string& text);

// The dimensions of `field` in the file `reader` reads (named `file` in errors). Throws
// InvalidInput when the field is neither u nor v, or when the file lacks it (`writer`, "run" or
// "sweep", names the command whose --fields u,v writes u).
std::vector<std::int64_t> field_shape(const RunFileReader& reader,
                                      const std::filesystem::path& file, const std::string& field,
                                      const std::string& writer);

// Checks, before anything is computed, that pictures can be written into `dir`: it is a writable
// folder, or it does not exist and its nearest existing ancestor is a writable folder (it is
// created when the first picture is written). Creates nothing. Throws InvalidInput, e.g. when
// `dir` is a regular file.
void check_render_folder(const std::filesystem::path& dir);

// Writes DIR/<field>_<image>.png for each image (or the one asked); returns the paths written.
std::vector<std::filesystem::path> render_run(const std::filesystem::path& file,
                                              const RenderOptions& options);

}  // namespace grayscott::io
