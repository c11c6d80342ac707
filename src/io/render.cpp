#include "io/render.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <system_error>

#include "io/atlas.hpp"
#include "io/png.hpp"
#include "io/run_file.hpp"
#include "model/model.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

std::pair<double, double> parse_range(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw InvalidInput("range: expected LO:HI, got '" + text + "'");
  try {
    std::size_t used_lo = 0, used_hi = 0;
    const std::string lo_text = text.substr(0, colon), hi_text = text.substr(colon + 1);
    const double lo = std::stod(lo_text, &used_lo), hi = std::stod(hi_text, &used_hi);
    if (used_lo != lo_text.size() || used_hi != hi_text.size()) throw std::invalid_argument("");
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) throw std::invalid_argument("");
    return {lo, hi};
  } catch (const std::logic_error&) {
    throw InvalidInput("range: expected LO:HI with finite LO < HI, got '" + text + "'");
  }
}

void check_render_folder(const fs::path& dir) {
  if (dir.empty()) throw InvalidInput("render: the folder name is empty");
  std::error_code ec;
  const auto writable = [](const fs::path& folder) {
    return ::access(folder.c_str(), W_OK | X_OK) == 0;
  };
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      throw InvalidInput("render " + dir.string() + " is a file, not a folder");
    }
    if (!writable(dir)) throw InvalidInput("render folder " + dir.string() + " is not writable");
    return;
  }
  // create_directories makes every missing level below the nearest existing one.
  fs::path ancestor = dir;
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) ancestor = ancestor.parent_path();
  if (ancestor.empty()) ancestor = ".";
  if (!fs::is_directory(ancestor, ec)) {
    throw InvalidInput("render folder " + dir.string() +
                       " cannot be created: " + ancestor.string() + " is a file");
  }
  if (!writable(ancestor)) {
    throw InvalidInput("render folder " + dir.string() +
                       " cannot be created: " + ancestor.string() + " is not writable");
  }
}

std::vector<std::int64_t> field_shape(const RunFileReader& reader, const fs::path& file,
                                      const std::string& field, const std::string& writer) {
  if (field != "u" && field != "v") {
    throw InvalidInput("field: expected u or v, got '" + field + "'");
  }
  if (!reader.has_field(field)) {
    throw InvalidInput(file.string() + " has no field " + field +
                       (field == "u" ? " (" + writer + " with --fields u,v to write it)" : ""));
  }
  return reader.shape(field);
}

std::vector<fs::path> render_run(const fs::path& file, const RenderOptions& options) {
  RunFileReader reader(file);
  const auto dims = field_shape(reader, file, options.field, "run");
  if (dims.size() == 4) return render_atlas(file, options);  // a sweep file
  if (dims.size() != 3)
    throw InvalidInput(file.string() + ": /" + options.field + " is not [images, rows, cols]");
  const std::int64_t images = dims[0], rows = dims[1], cols = dims[2];
  std::int64_t first = 0, last = images;
  if (options.image) {
    if (*options.image < 0 || *options.image >= images) {
      throw InvalidInput("image " + std::to_string(*options.image) +
                         " is out of range (the file holds " + std::to_string(images) + ")");
    }
    first = *options.image, last = first + 1;
  }
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (!fs::is_directory(options.out_dir)) {
    throw InvalidInput("cannot create folder " + options.out_dir.string());
  }
  const int digits = std::max(4, static_cast<int>(std::to_string(images - 1).size()));
  std::vector<fs::path> written;
  for (std::int64_t i = first; i < last; ++i) {
    const auto values = reader.read_image(options.field, i);
    std::string number = std::to_string(i);
    number.insert(
        0, static_cast<std::size_t>(std::max(0, digits - static_cast<int>(number.size()))), '0');
    const std::string name = options.field + "_" + number + ".png";
    const fs::path path = options.out_dir / name;
    write_png(path, colorize(values, rows, cols, options.lo, options.hi));
    written.push_back(path);
  }
  return written;
}

}  // namespace grayscott::io
