// `grayscott render`: PNG pictures of a run file's images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace grayscott::io {

struct RenderOptions {
  std::filesystem::path out_dir = "images";
  std::string field = "v";
  double lo = 0.0, hi = 0.5;          // the colour range
  std::optional<std::int64_t> image;  // one image only
};

// Parses "LO:HI"; throws InvalidInput.
std::pair<double, double> parse_range(const std::string& text);

// Writes DIR/<field>_<image>.png for each image (or the one asked); returns the paths written.
std::vector<std::filesystem::path> render_run(const std::filesystem::path& file,
                                              const RenderOptions& options);

}  // namespace grayscott::io
