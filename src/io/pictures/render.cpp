#include "io/pictures/render.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include "io/files/output_path.hpp"
#include "io/files/reader.hpp"
#include "io/files/writer_process.hpp"
#include "io/files/xdmf.hpp"
#include "io/pictures/atlas.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/text.hpp"
#include "io/pictures/video.hpp"
#include "model/model.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

std::pair<double, double> parse_range(const std::string& text) {
  // LO:HI, or LO,HI as --histogram-range takes a range.
  auto colon = text.find(':');
  if (colon == std::string::npos) colon = text.find(',');
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

VolumeView parse_slice(const std::string& text) {
  const auto equals = text.find('=');
  const std::string axis = text.substr(0, equals);
  VolumeView view;
  if (equals == std::string::npos || (axis != "z" && axis != "y" && axis != "x")) {
    throw InvalidInput("slice: expected z=N, y=N or x=N (N from 0, or mid), got '" + text + "'");
  }
  view.axis = axis == "z" ? 0 : axis == "y" ? 1 : 2;
  const std::string number = text.substr(equals + 1);
  if (number == "mid") return view;
  std::int64_t index = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), index);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() || index < 0) {
    throw InvalidInput("slice: expected z=N, y=N or x=N (N from 0, or mid), got '" + text + "'");
  }
  view.index = index;
  return view;
}

VolumeView parse_projection(const std::string& text) {
  if (text != "max") throw InvalidInput("projection: expected max, got '" + text + "'");
  VolumeView view;
  view.kind = VolumeView::Kind::MaxProjection;
  return view;
}

std::optional<VolumeView> parse_view(const std::optional<std::string>& slice,
                                     const std::optional<std::string>& projection) {
  if (slice && projection) {
    throw InvalidInput("slice and projection exclude each other: a picture shows one plane (" +
                       *slice + ") or the projection (" + *projection + ")");
  }
  if (slice) return parse_slice(*slice);
  if (projection) return parse_projection(*projection);
  return std::nullopt;
}

std::int64_t parse_scale(const std::string& text) {
  if (text == "auto") return 0;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > max_scale) {
    throw InvalidInput("scale: expected auto or a whole number from 1 to " +
                       std::to_string(max_scale) + ", got '" + text + "'");
  }
  return value;
}

void check_pictures_after_run(const fs::path& dir, const fs::path& output, const std::string& field,
                              std::int64_t images, bool overwrite) {
  check_render_folder(dir, output);
  check_pictures_absent(picture_paths(dir, field, 0, images, images), overwrite);
}

void make_picture_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) {
    throw InvalidInput("cannot create folder " + dir.string() +
                       (ec ? ": " + ec.message() : std::string(": a file has that name")));
  }
}

void check_render_folder(const fs::path& dir, const fs::path& output) {
  if (dir.empty()) throw InvalidInput("render: the folder name is empty");
  std::error_code ec;
  if (!output.empty()) {
    // The run's file (or its companion) will stand at that name when the pictures are made.
    // "pics.h5/" names the same entry as "pics.h5".
    const fs::path folder = dir.has_filename() ? dir : dir.parent_path();
    const auto same = [&](const fs::path& file) {
      if (folder.lexically_normal() == file.lexically_normal()) return true;
      std::error_code folder_error, file_error;
      const fs::path a = fs::weakly_canonical(folder, folder_error);
      const fs::path b = fs::weakly_canonical(file, file_error);
      return !folder_error && !file_error && a == b;
    };
    for (const fs::path& file : {output, xdmf_path_for(output)}) {
      if (same(file)) {
        throw InvalidInput("render folder " + dir.string() + " is the name of the run's file " +
                           file.string() + ": the pictures need a folder of their own");
      }
    }
  }
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      throw InvalidInput("render " + dir.string() + " is " +
                         special_file_kind(fs::status(dir, ec).type()) + ", not a folder");
    }
    if (const std::string why = why_not_writable(dir); !why.empty()) {
      throw PathDenied("render folder " + dir.string() + " is not writable (" + why + ")");
    }
    return;
  }
  // create_directories makes every missing level below the nearest existing one.
  fs::path ancestor = dir;
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) ancestor = ancestor.parent_path();
  if (ancestor.empty()) ancestor = ".";
  if (!fs::is_directory(ancestor, ec)) {
    throw InvalidInput("render folder " + dir.string() +
                       " cannot be created: " + ancestor.string() + " is " +
                       special_file_kind(fs::status(ancestor, ec).type()));
  }
  if (const std::string why = why_not_writable(ancestor); !why.empty()) {
    throw PathDenied("render folder " + dir.string() + " cannot be created: " + ancestor.string() +
                     " is not writable (" + why + ")");
  }
  // What only making a folder there tells (a file system that takes none, such as /proc): a
  // folder of this process's own name made and removed at once (never one of the names asked
  // for, which another process, or another MPI rank checking the same, may be making), and each
  // level's name checked against the file system's longest, so that a run does not find out
  // after its last image.
  const fs::path relative = dir.lexically_relative(ancestor);
  if (relative.empty() || *relative.begin() == "..") return;
  const fs::path probe = ancestor / (".grayscott-probe-" + std::to_string(::getpid()));
  if (::mkdir(probe.c_str(), 0700) == 0) {
    ::rmdir(probe.c_str());
  } else if (errno != EEXIST) {
    throw InvalidInput("render folder " + dir.string() + " cannot be created in " +
                       ancestor.string() + ": " + std::strerror(errno));
  }
  const long longest = ::pathconf(ancestor.c_str(), _PC_NAME_MAX);
  for (const fs::path& level : relative) {
    if (longest > 0 && level.native().size() > static_cast<std::size_t>(longest)) {
      throw InvalidInput("render folder " + dir.string() + " cannot be created: " + level.string() +
                         ": " + std::strerror(ENAMETOOLONG));
    }
  }
}

std::int64_t resolve_image(std::int64_t image, std::int64_t images) {
  if (images <= 0) {
    throw InvalidInput("image " + std::to_string(image) + ": the file holds no image");
  }
  if (image < -images || image >= images) {
    throw InvalidInput("image " + std::to_string(image) + " is out of range: the file holds " +
                       std::to_string(images) + " images (0 to " + std::to_string(images - 1) +
                       ", or -" + std::to_string(images) + " to -1 from the end)");
  }
  return image < 0 ? images + image : image;
}

std::uint64_t render_bytes(std::int64_t rows, std::int64_t cols) {
  // In floating point: absurd dimensions must not wrap around to a small number.
  const double bytes = (8.0 + 8.0 + 3.0) * static_cast<double>(rows) * static_cast<double>(cols);
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

void check_render_memory(std::uint64_t bytes, const std::string& what, std::uint64_t available) {
  if (bytes > available) {
    throw InvalidInput(what + " needs " + format_bytes(bytes) + " of memory to render, but only " +
                       format_bytes(available) + " is available");
  }
}

std::vector<std::int64_t> field_shape(const RunFileReader& reader, const fs::path& file,
                                      const std::string& field, const std::string& writer) {
  if (field != "u" && field != "v") {
    throw InvalidInput("field: expected u or v, got '" + field + "'");
  }
  if (!reader.has_field(field)) {
    const std::string other = field == "u" ? "v" : "u";
    throw InvalidInput(file.string() + " has no field " + field +
                       (reader.has_field(other)
                            ? " (it holds " + other + ": --field " + other + "; " + writer +
                                  " with --fields u,v writes both)"
                            : ""));
  }
  return reader.shape(field);
}

void check_pictures_absent(const std::vector<fs::path>& pictures, bool overwrite) {
  // Even --force replaces only regular files (and symbolic links, never followed).
  for (const fs::path& picture : pictures) check_replaceable(picture, "picture");
  if (overwrite) return;
  std::size_t existing = 0;
  const fs::path* first = nullptr;
  for (const fs::path& picture : pictures) {
    std::error_code ec;
    if (fs::symlink_status(picture, ec).type() == fs::file_type::not_found) continue;
    if (!first) first = &picture;
    ++existing;
  }
  if (!first) return;
  throw PathExists(
      first->string() +
      (existing > 1 ? " and " + std::to_string(existing - 1) + " more pictures exist" : " exists") +
      " (--force replaces them)");
}

std::vector<fs::path> picture_paths(const fs::path& dir, const std::string& field,
                                    std::int64_t first, std::int64_t last, std::int64_t images) {
  const int digits = std::max(4, static_cast<int>(std::to_string(images - 1).size()));
  std::vector<fs::path> pictures;
  for (std::int64_t i = first; i < last; ++i) {
    std::string number = std::to_string(i);
    number.insert(
        0, static_cast<std::size_t>(std::max(0, digits - static_cast<int>(number.size()))), '0');
    pictures.push_back(dir / (field + "_" + number + ".png"));
  }
  return pictures;
}

std::string drawn_field(const fs::path& file, const std::string& asked) {
  if (!asked.empty()) return asked;
  try {
    const RunFileReader reader(file);
    return !reader.has_field("v") && reader.has_field("u") ? "u" : "v";
  } catch (const std::exception&) {
    return "v";
  }
}

std::string count_pictures(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " picture" : " pictures");
}

std::string earlier_pictures_note(const fs::path& dir, const std::string& field,
                                  const std::vector<fs::path>& written) {
  const std::string prefix = field + "_";
  // Only pictures of a run's images (an atlas's names are its seeds').
  if (written.empty() || written.front().filename().string().rfind(prefix, 0) != 0) return {};
  std::set<std::string> ours;
  for (const fs::path& path : written) ours.insert(path.filename().string());
  const auto is_picture_of_field = [&](const std::string& name) {
    if (name.size() < prefix.size() + 4 + 4 || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - 4, 4, ".png") != 0)
      return false;
    const auto digits =
        std::string_view(name).substr(prefix.size(), name.size() - 4 - prefix.size());
    return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<std::string> others;
  std::error_code ec;
  for (fs::directory_iterator entry(dir, ec), end; !ec && entry != end; entry.increment(ec)) {
    const std::string name = entry->path().filename().string();
    if (is_picture_of_field(name) && !ours.count(name)) others.push_back(name);
  }
  if (others.empty()) return {};
  std::sort(others.begin(), others.end());
  const std::string which =
      others.size() == 1 ? others.front() : others.front() + " to " + others.back();
  return dir.string() + " also holds " + count_pictures(others.size()) + " of " + field +
         " that this rendering did not write (" + which + "), left as they were";
}

std::string unfinished_note(const fs::path& file, const std::string& field) {
  RunFileReader reader(file);
  if (!reader.has_attribute("status")) return {};
  const std::string status = reader.attribute_string("status");
  if (status == "complete") return {};
  const auto dims = reader.shape(field);
  const std::int64_t planned =
      reader.has_attribute("images") ? reader.attribute_int64("images") : -1;
  const std::string of_planned = planned >= 0 ? " of " + std::to_string(planned) : "";
  // Its images grow while it is rendered: what it holds now is not what was read.
  if (status == "running" && live_writer(reader) != 0) {
    return file.string() + " is still being written (" +
           (planned >= 0 ? std::to_string(planned) + " images planned" : "status: running") +
           "): the pictures are of the images it held when read";
  }
  // Its writer was killed: what it holds is settled, and repair makes it a file every reader
  // opens.
  const std::string remedy = status == "running"
                                 ? "; its writer is gone: grayscott repair " + file.string() +
                                       " makes it readable by every reader"
                                 : "";
  const std::size_t image_axes = reader.depth() > 1 ? 3 : 2;
  // A run's images: [images, rows, cols], or a volume's [images, depth, rows, cols].
  if (dims.size() == image_axes + 1) {
    return file.string() + " holds " + std::to_string(dims[0]) + of_planned +
           " images (status: " + status + ")" + remedy;
  }
  // A sweep's: [members, images, ...], each member's first /images_written of them written.
  if (dims.size() == image_axes + 2 && reader.has_field("images_written")) {
    const std::vector<std::int64_t> written = reader.read_int64("images_written");
    if (!written.empty()) {
      const auto [least, most] = std::minmax_element(written.begin(), written.end());
      const std::string held = *least == *most
                                   ? std::to_string(*least)
                                   : std::to_string(*least) + " to " + std::to_string(*most);
      return file.string() + ": its members hold " + held + of_planned +
             " images (status: " + status + ")" +
             (*least < *most ? "; a member's tile is blank past its last image" : "") + remedy;
    }
  }
  return file.string() + " is not complete (status: " + status + ")" + remedy;
}

std::string no_image_message(const RunFileReader& reader, const fs::path& file) {
  const std::string status =
      reader.has_attribute("status") ? reader.attribute_string("status") : "no status";
  return file.string() + " holds no image (status: " + status + ")";
}

namespace {

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

// A run file's step of each image (image + 1 times steps_per_image for files without /step) and
// its dt (1 when the file does not say), for the titles of annotated pictures.
struct ImageClock {
  std::vector<std::int64_t> steps;
  std::int64_t steps_per_image = 1;
  double dt = 1;
  ImageClock(const RunFileReader& reader) {
    if (reader.has_field("step")) steps = reader.read_int64("step");
    if (reader.has_attribute("steps_per_image")) {
      steps_per_image = reader.attribute_int64("steps_per_image");
    }
    if (reader.has_attribute("dt")) dt = reader.attribute_double("dt");
    if (reader.has_attribute("feed") && reader.has_attribute("kill")) {
      rates = ", F = " + shortest_text(reader.attribute_double("feed")) +
              ", k = " + shortest_text(reader.attribute_double("kill"));
    }
  }
  std::string rates;  // ", F = 0.014, k = 0.054": the run's rates, for its pictures' titles
  std::int64_t step(std::int64_t image) const {
    return image < static_cast<std::int64_t>(steps.size()) ? steps[static_cast<std::size_t>(image)]
                                                           : (image + 1) * steps_per_image;
  }
};

// Memory of one picture: render_bytes, and the enlarged or annotated copy when there is one (with
// room for the title and the colorbar).
std::uint64_t picture_bytes(std::int64_t rows, std::int64_t cols, const RenderOptions& options) {
  if (options.scale == 1 && !options.annotate) return render_bytes(rows, cols);
  const auto scale = static_cast<std::uint64_t>(options.scale);
  return render_bytes(rows, cols) + 3 * (static_cast<std::uint64_t>(rows) * scale + 64) *
                                        (static_cast<std::uint64_t>(cols) * scale + 200);
}

}  // namespace

void check_scale(const RenderOptions& options) {
  if (options.scale < 1 || options.scale > max_scale) {
    throw InvalidInput("scale: expected a whole number from 1 to " + std::to_string(max_scale) +
                       ", got " + std::to_string(options.scale));
  }
}

// A model time in plain notation (10000, 0.5, 1234.56; never 1e+04): at most six significant
// digits after the point, trailing zeros dropped.
std::string plain_number(double value) {
  const double magnitude = std::abs(value);
  const int before = magnitude >= 1 ? static_cast<int>(std::floor(std::log10(magnitude))) + 1 : 1;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", std::max(0, 6 - before), value);
  std::string out = text;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

std::int64_t auto_scale(std::int64_t rows, std::int64_t cols) {
  const std::int64_t longer = std::max<std::int64_t>(1, std::max(rows, cols));
  return std::clamp<std::int64_t>(512 / longer, 1, max_scale);
}

std::string picture_title(const std::string& field, std::int64_t step, double dt) {
  return field + " at step " + std::to_string(step) +
         ", t = " + plain_number(static_cast<double>(step) * dt);
}

namespace {
// The annotations' font: loaded once for the process, not per frame.
const TextRenderer& annotation_text() {
  static const TextRenderer text(atlas_font(), 14);
  return text;
}
}  // namespace

Rgb8Image make_picture(std::span<const double> values, std::int64_t rows, std::int64_t cols,
                       const RenderOptions& options, const std::string& title,
                       const std::string& widest_title) {
  Rgb8Image image = enlarged(colorize(values, rows, cols, options.lo, options.hi, options.colormap),
                             std::max<std::int64_t>(1, options.scale));
  if (!options.annotate) return image;
  const TextRenderer& text = annotation_text();
  constexpr std::int64_t pad = 6, bar_height = 12, min_width = 160;
  const std::int64_t line = text.line_height();
  const TextMask widest = text.render(widest_title);
  const std::int64_t width = std::max({image.width, widest.width + 2 * pad, min_width});
  const std::int64_t top = line > 0 ? pad + line + pad : pad;
  const std::int64_t bar_top = top + image.height + pad;
  const std::int64_t height = bar_top + bar_height + (line > 0 ? 2 + line : 0) + pad;
  Rgb8Image canvas{width, height,
                   std::vector<std::uint8_t>(static_cast<std::size_t>(3 * width * height), 255)};
  const std::int64_t x0 = (width - image.width) / 2;
  for (std::int64_t r = 0; r < image.height; ++r) {
    std::copy_n(image.pixels.begin() + 3 * r * image.width, 3 * image.width,
                canvas.pixels.begin() + 3 * ((top + r) * width + x0));
  }
  // The colorbar: the colormap from LO (left) to HI (right), framed in grey, labelled below.
  const ColormapTable& table = colormap_table(options.colormap);
  const std::int64_t bar_left = pad, bar_right = width - pad;  // [left, right)
  for (std::int64_t x = bar_left; x < bar_right; ++x) {
    const bool edge = x == bar_left || x == bar_right - 1;
    const auto index = static_cast<std::size_t>(
        (x - bar_left) * 255 / std::max<std::int64_t>(1, bar_right - bar_left - 1));
    for (std::int64_t y = bar_top; y < bar_top + bar_height; ++y) {
      const bool frame = edge || y == bar_top || y == bar_top + bar_height - 1;
      std::uint8_t* px = canvas.pixels.data() + 3 * (y * width + x);
      if (frame) {
        px[0] = px[1] = px[2] = 128;
      } else {
        std::copy_n(table[std::min<std::size_t>(index, 255)].begin(), 3, px);
      }
    }
  }
  if (line > 0) {
    draw(canvas, text.render(title), pad, pad);
    const std::int64_t label_top = bar_top + bar_height + 2;
    const TextMask lo = text.render(short_number(options.lo));
    const TextMask hi = text.render(short_number(options.hi));
    const TextMask mid = text.render(short_number((options.lo + options.hi) / 2));
    draw(canvas, lo, bar_left, label_top);
    draw(canvas, hi, bar_right - hi.width, label_top);
    if (lo.width + mid.width + hi.width + 4 * pad < bar_right - bar_left) {
      draw(canvas, mid, (bar_left + bar_right - mid.width) / 2, label_top);
    }
  }
  return canvas;
}

VolumePicture plan_volume_picture(const std::optional<VolumeView>& view, std::int64_t depth,
                                  std::int64_t rows, std::int64_t cols) {
  VolumePicture p;
  p.view = view.value_or(VolumeView{});
  p.depth = depth, p.rows = rows, p.cols = cols;
  p.picture_rows = rows, p.picture_cols = cols;
  if (p.view.kind == VolumeView::Kind::Slice) {
    const std::int64_t extent[3] = {depth, rows, cols};
    const std::int64_t along = extent[p.view.axis];
    const std::int64_t index = p.view.index.value_or(along / 2);
    if (index >= along) {
      const char axis = "zyx"[p.view.axis];
      // z counts planes, y rows, x columns.
      const char* cells = p.view.axis == 0   ? " planes (z"
                          : p.view.axis == 1 ? " rows (y"
                                             : " columns (x";
      throw InvalidInput("slice " + std::string(1, axis) + "=" + std::to_string(index) +
                         " is out of range: the grid has " + std::to_string(along) + cells +
                         " = 0 to " + std::to_string(along - 1) + ")");
    }
    p.view.index = index;
    // A slice across y is depth x cols, across x depth x rows (plane 0 at the top).
    if (p.view.axis == 1) p.picture_rows = depth;
    if (p.view.axis == 2) p.picture_cols = rows, p.picture_rows = depth;
    p.title = std::string(", ") + "zyx"[p.view.axis] + " = " + std::to_string(index);
  } else {
    p.read_bytes = 16 * static_cast<std::uint64_t>(depth) * static_cast<std::uint64_t>(rows) *
                   static_cast<std::uint64_t>(cols);
    p.title = ", largest along z";
  }
  return p;
}

std::vector<double> volume_picture_values(const RunFileReader& reader, const std::string& field,
                                          std::int64_t image, std::int64_t member,
                                          const VolumePicture& picture) {
  if (picture.view.kind == VolumeView::Kind::Slice) {
    return reader.read_slice(field, image, picture.view.axis, *picture.view.index, member);
  }
  // The largest value along z over each cell of a plane (NaN where any plane holds NaN).
  const std::vector<double> volume = reader.read_image(field, image, member);
  const auto plane = static_cast<std::size_t>(picture.rows * picture.cols);
  std::vector<double> out(volume.begin(), volume.begin() + static_cast<std::ptrdiff_t>(plane));
  for (std::size_t z = 1; z < static_cast<std::size_t>(picture.depth); ++z) {
    const double* values = volume.data() + z * plane;
    for (std::size_t k = 0; k < plane; ++k) {
      if (std::isnan(values[k]) || values[k] > out[k]) out[k] = values[k];
    }
  }
  return out;
}

namespace {

// A run file's images as pictures: its shape checked, the images asked resolved, the scale
// settled (0: auto_scale), the memory checked and the titles' clock read, once for pictures and
// videos alike. A volume's picture is the plane options.volume asks for (a slice, by default
// across z through the middle, or the projection of its largest values along z).
// A sweep's images: [members, images, rows, cols] (a run's volume has as many axes).
// A file with such a dataset that is not a grayscott sweep's is refused as such (its atlas would
// fail on the first attribute it lacks).
bool is_sweep_shape(const RunFileReader& reader, const fs::path& file,
                    const std::vector<std::int64_t>& dims) {
  const bool sweep_shape = dims.size() == (reader.depth() > 1 ? 5u : 4u);
  if (sweep_shape && !reader.sweep()) {
    throw InvalidInput(file.string() +
                       " is not a grayscott sweep file (no attribute kind = "
                       "\"sweep\"), and its images have a sweep's axes (members, images, ...)");
  }
  return sweep_shape;
}

class RunPictures {
 public:
  RunPictures(const RunFileReader& reader, const fs::path& file, const RenderOptions& options,
              const std::vector<std::int64_t>& dims)
      : reader_(reader), options_(options), clock_(reader) {
    const bool volume = reader.depth() > 1;
    if (!volume && dims.size() != 3) {
      throw InvalidInput(file.string() + ": /" + options.field + " is not [images, rows, cols]");
    }
    if (volume && dims.size() != 4) {
      throw InvalidInput(file.string() + ": /" + options.field +
                         " is not [images, depth, rows, cols]");
    }
    if (!volume && options.volume) {
      throw InvalidInput(file.string() +
                         " holds a plane (depth 1): a slice or a projection picks a view of a "
                         "volume");
    }
    images_ = dims[0], rows_ = dims[dims.size() - 2], cols_ = dims[dims.size() - 1];
    if (images_ == 0) throw InvalidInput(no_image_message(reader, file));
    if (std::find(dims.begin() + 1, dims.end(), 0) != dims.end()) {
      std::string extents;
      for (auto d = dims.begin() + 1; d != dims.end(); ++d) {
        if (!extents.empty()) extents += 'x';
        extents += std::to_string(*d);
      }
      throw InvalidInput(file.string() + ": the images of /" + options.field + " are empty (" +
                         extents + "): nothing to draw");
    }
    std::uint64_t read_bytes = 0;  // more than the picture's values: a projection's volume
    if (volume) {
      depth_ = dims[1];
      volume_ = plan_volume_picture(options.volume, depth_, rows_, cols_);
      rows_ = volume_.picture_rows, cols_ = volume_.picture_cols;
      read_bytes = volume_.read_bytes;
      view_title_ = volume_.title;
    }
    if (options_.image) {
      first_ = resolve_image(*options_.image, images_);
      last_ = first_ + 1;
    } else {
      last_ = images_;
    }
    if (options_.scale == 0) options_.scale = auto_scale(rows_, cols_);
    check_scale(options_);
    check_render_memory(picture_bytes(rows_, cols_, options_) + read_bytes,
                        "an image of " + (volume ? std::to_string(depth_) + "x" : std::string()) +
                            std::to_string(dims[dims.size() - 2]) + "x" +
                            std::to_string(dims[dims.size() - 1]));
    if (options_.annotate && !annotation_text().usable()) {
      std::fprintf(
          stderr,
          "grayscott: warning: no usable font for the annotations (install fonts-dejavu-core or "
          "set GRAYSCOTT_FONT); writing the colorbar without text\n");
    }
    widest_ = title(last_ - 1);
  }
  std::int64_t images() const { return images_; }
  std::int64_t first() const { return first_; }
  std::int64_t last() const { return last_; }
  Rgb8Image picture(std::int64_t image) const {
    return make_picture(values(image), rows_, cols_, options_, title(image), widest_);
  }

 private:
  std::string title(std::int64_t image) const {
    return picture_title(options_.field, clock_.step(image), clock_.dt) + view_title_ +
           clock_.rates;
  }
  // The picture's rows_ x cols_ values.
  std::vector<double> values(std::int64_t image) const {
    if (depth_ == 0) return reader_.read_image(options_.field, image);
    return volume_picture_values(reader_, options_.field, image, 0, volume_);
  }
  const RunFileReader& reader_;
  RenderOptions options_;
  ImageClock clock_;
  std::int64_t images_ = 0, rows_ = 0, cols_ = 0, first_ = 0, last_ = 0;
  std::int64_t depth_ = 0;  // a volume's planes; 0: the file holds a plane
  VolumePicture volume_;
  std::string view_title_;  // ", z = 8": the view of a volume, for the titles
  std::string widest_;      // the last image's title, the widest: every picture gets the same size
};

}  // namespace

std::vector<fs::path> render_run(const fs::path& file, const RenderOptions& options) {
  RunFileReader reader(file);
  const auto dims = field_shape(reader, file, options.field, "run");
  if (is_sweep_shape(reader, file, dims)) {
    if (options.volume && reader.depth() <= 1) {
      throw InvalidInput(file.string() +
                         " holds planes (depth 1): a slice or a projection picks a view of a "
                         "volume");
    }
    return render_atlas(file, options);
  }
  const RunPictures run(reader, file, options, dims);
  const auto pictures =
      picture_paths(options.out_dir, options.field, run.first(), run.last(), run.images());
  check_pictures_absent(pictures, options.overwrite);
  make_picture_folder(options.out_dir);
  remove_abandoned_partials(pictures);  // those of a rendering killed by SIGKILL
  std::vector<fs::path> written;
  for (std::int64_t i = run.first(); i < run.last(); ++i) {
    const fs::path& path = pictures[static_cast<std::size_t>(i - run.first())];
    write_png(path, run.picture(i));
    written.push_back(path);
    if (options.on_frame) {
      options.on_frame(static_cast<std::int64_t>(written.size()), run.last() - run.first());
    }
    if (options.stop_requested && options.stop_requested()) break;
  }
  return written;
}

std::int64_t render_video(const fs::path& file, const RenderOptions& options) {
  if (options.every < 1) throw InvalidInput("every: expected a whole number from 1 up");
  if (!(options.fps > 0) || options.fps > 1000) {
    throw InvalidInput("fps: expected a number above 0 and at most 1000");
  }
  check_video_output(options.video, options.overwrite);
  RunFileReader reader(file);
  const auto dims = field_shape(reader, file, options.field, "run");
  std::optional<AtlasPainter> atlas;  // a sweep file: its atlas, frame by frame
  std::optional<RunPictures> run;
  std::int64_t first = 0, last = 0, seed = 0;
  if (is_sweep_shape(reader, file, dims)) {
    if (options.volume && reader.depth() <= 1) {
      throw InvalidInput(file.string() +
                         " holds planes (depth 1): a slice or a projection picks a view of a "
                         "volume");
    }
    atlas.emplace(file, options);
    const auto& seeds = atlas->seeds();
    seed = options.seed.value_or(seeds.front());
    if (std::find(seeds.begin(), seeds.end(), seed) == seeds.end()) {
      throw InvalidInput("seed " + std::to_string(seed) + ": " + file.string() +
                         " has no member with that seed");
    }
    // Its frames: the images some member of that seed holds (of a sweep stopped early, no frame
    // of blank tiles only).
    last = atlas->images_of_seed(seed).some;
    if (last == 0)
      throw InvalidInput(file.string() + ": no member of seed " + std::to_string(seed) +
                         " has written an image");
    if (options.image) {
      first = resolve_image(*options.image, last);
      last = first + 1;
    }
  } else {
    if (options.seed) throw InvalidInput("--seed picks the members of a sweep's atlas video");
    run.emplace(reader, file, options, dims);
    first = run->first(), last = run->last();
  }
  const auto frame = [&](std::int64_t image) {
    return atlas ? atlas->paint(image, seed) : run->picture(image);
  };
  // Every n-th image from the first, and the last one always: a video ends where the run does.
  std::vector<std::int64_t> picked;
  for (std::int64_t i = first; i < last; i += options.every) picked.push_back(i);
  if (picked.back() != last - 1) picked.push_back(last - 1);
  const auto frames = static_cast<std::int64_t>(picked.size());
  // The first frame tells the size of them all.
  const Rgb8Image first_frame = frame(first);
  if (video_format(options.video) == "gif") {
    // ffmpeg keeps every frame of a GIF until the end, to choose one palette for all of them.
    const std::uint64_t bytes = static_cast<std::uint64_t>(frames) * 3 *
                                static_cast<std::uint64_t>(first_frame.width + 1) *
                                static_cast<std::uint64_t>(first_frame.height + 1);
    if (bytes > available_memory() / 2) {
      throw InvalidInput("a GIF of " + std::to_string(frames) + " frames of " +
                         std::to_string(first_frame.width) + "x" +
                         std::to_string(first_frame.height) + " needs " + format_bytes(bytes) +
                         " of memory while ffmpeg encodes it, more than half of what is free; "
                         "render every n-th image (--every) or an .mp4");
    }
  }
  VideoWriter video(options.video, options.fps, options.overwrite);
  std::int64_t done = 0;
  const auto stopped = [&] { return options.stop_requested && options.stop_requested(); };
  const auto stop = [&] {
    return RenderStopped("stopped after " + std::to_string(done) + " of " + std::to_string(frames) +
                         " frames; " + options.video.string() + " was not written");
  };
  try {
    for (std::size_t k = 0; k < picked.size(); ++k) {
      if (stopped()) throw stop();
      video.write(k == 0 ? first_frame : frame(picked[k]));  // the first starts ffmpeg
      ++done;
      if (options.on_frame) options.on_frame(done, frames);
    }
    if (stopped()) throw stop();  // asked during the last frame (its on_frame raised, say)
    video.finish();
  } catch (const RenderStopped&) {
    throw;
  } catch (...) {
    // Ctrl-C on a terminal reaches ffmpeg too, which then stops reading: the stop, not an error.
    if (stopped()) throw stop();
    throw;
  }
  return done;
}

}  // namespace grayscott::io
