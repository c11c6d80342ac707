#include "io/pictures/png.hpp"

#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "io/files/abrupt_exit.hpp"
#include "io/files/output_path.hpp"
#include "io/pictures/colormaps.hpp"
#include "io/pictures/inferno.hpp"
#include "model/model.hpp"

namespace grayscott::io {

namespace {
constexpr ColormapTable gray_ramp() {
  ColormapTable table{};
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto level = static_cast<std::uint8_t>(i);
    table[i] = {level, level, level};
  }
  return table;
}
constexpr ColormapTable gray_colormap = gray_ramp();
}  // namespace

Colormap parse_colormap(const std::string& name) {
  if (name == "inferno") return Colormap::Inferno;
  if (name == "viridis") return Colormap::Viridis;
  if (name == "magma") return Colormap::Magma;
  if (name == "plasma") return Colormap::Plasma;
  if (name == "cividis") return Colormap::Cividis;
  if (name == "gray" || name == "grey") return Colormap::Gray;
  throw InvalidInput("colormap: expected inferno, viridis, magma, plasma, cividis or gray, got '" +
                     name + "'");
}

const ColormapTable& colormap_table(Colormap map) {
  switch (map) {
    case Colormap::Viridis:
      return viridis_colormap;
    case Colormap::Magma:
      return magma_colormap;
    case Colormap::Plasma:
      return plasma_colormap;
    case Colormap::Cividis:
      return cividis_colormap;
    case Colormap::Gray:
      return gray_colormap;
    case Colormap::Inferno:
      break;
  }
  return inferno_colormap;
}

Rgb8Image colorize(std::span<const double> values, std::int64_t rows, std::int64_t cols, double lo,
                   double hi, Colormap map) {
  Rgb8Image image{cols, rows, std::vector<std::uint8_t>(values.size() * 3)};
  const ColormapTable& table = colormap_table(map);
  const double scale = hi > lo ? 255.0 / (hi - lo) : 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = std::isnan(values[i]) ? 0.0 : (values[i] - lo) * scale;
    const auto index = static_cast<std::size_t>(std::clamp(x, 0.0, 255.0) + 0.5);
    const auto& rgb = table[std::min<std::size_t>(index, 255)];
    std::copy(rgb.begin(), rgb.end(), image.pixels.begin() + static_cast<std::ptrdiff_t>(3 * i));
  }
  return image;
}

Rgb8Image enlarged(const Rgb8Image& image, std::int64_t factor) {
  if (factor <= 1) return image;
  Rgb8Image out{image.width * factor, image.height * factor,
                std::vector<std::uint8_t>(
                    static_cast<std::size_t>(3 * image.width * factor * image.height * factor))};
  for (std::int64_t r = 0; r < out.height; ++r) {
    const std::uint8_t* from = image.pixels.data() + 3 * (r / factor) * image.width;
    std::uint8_t* to = out.pixels.data() + 3 * r * out.width;
    for (std::int64_t c = 0; c < out.width; ++c) std::copy_n(from + 3 * (c / factor), 3, to + 3 * c);
  }
  return out;
}

namespace {

void write_png_to(const std::filesystem::path& path, std::FILE* file, const Rgb8Image& image);

}  // namespace

void write_png(const std::filesystem::path& path, const Rgb8Image& image) {
  // Written beside its name and renamed over it: a symbolic link there is replaced, never
  // written through, and a reader sees the old picture or the new one.
  const std::filesystem::path partial = partial_name(path, std::to_string(::getpid()));
  // A file under that name is no picture of this process's (each is made and renamed here, one at
  // a time) but one of an earlier process with this number, killed before it renamed its picture:
  // in a container every process may be PID 1, and "x" alone would refuse every picture after.
  // Unlinked first: a symbolic link there is removed, never followed.
  std::remove(partial.c_str());
  const RemovedAtAbruptExit unless_whole(partial);
  std::FILE* file = std::fopen(partial.c_str(), "wbx");
  if (file == nullptr) {
    throw std::runtime_error("cannot write " + partial.string() + ": " + std::strerror(errno));
  }
  try {
    write_png_to(path, file, image);
  } catch (...) {
    std::fclose(file);
    std::remove(partial.c_str());
    throw;
  }
  const bool written = std::fflush(file) == 0 && !std::ferror(file);
  const int error = errno;
  if (std::fclose(file) != 0 || !written) {
    std::remove(partial.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " +
                             std::strerror(written ? errno : error));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    std::remove(partial.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(rename_error));
  }
}

namespace {

// What stopped libpng: its message, and the system's reason where a write failed (a full disk),
// told by the program in one line rather than printed by libpng.
struct PngFailure {
  std::string message;
  int system_error = 0;
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* failure = static_cast<PngFailure*>(png_get_error_ptr(png));
  failure->system_error = errno;  // what the failed fwrite left
  failure->message = message;
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

void write_png_to(const std::filesystem::path& path, std::FILE* out, const Rgb8Image& image) {
  PngFailure failure;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure, on_png_error, on_png_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  struct PngGuard {
    png_structp* png;
    png_infop* info;
    ~PngGuard() { png_destroy_write_struct(png, info); }
  } guard{&png, &info};
  if (!png || !info) throw std::runtime_error("libpng: out of memory");
  // libpng reports errors by longjmp; nothing with a destructor lives between here and the writes.
  if (setjmp(png_jmpbuf(png))) {
    throw std::runtime_error("cannot write " + path.string() + ": " +
                             (failure.system_error != 0 ? std::strerror(failure.system_error)
                                                        : "libpng: " + failure.message));
  }
  png_init_io(png, out);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (std::int64_t r = 0; r < image.height; ++r) {
    png_write_row(png, const_cast<png_bytep>(image.pixels.data() + 3 * r * image.width));
  }
  png_write_end(png, nullptr);
}

}  // namespace

std::string encode_png(const Rgb8Image& image) {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* memory = ::open_memstream(&data, &size);
  if (memory == nullptr)
    throw std::runtime_error("cannot encode a PNG: " + std::string(std::strerror(errno)));
  try {
    write_png_to("a PNG in memory", memory, image);
  } catch (...) {
    std::fclose(memory);
    std::free(data);
    throw;
  }
  std::fclose(memory);  // sets data and size
  std::string bytes(data, size);
  std::free(data);
  return bytes;
}

std::string libpng_description() { return std::string("libpng ") + png_get_libpng_ver(nullptr); }

}  // namespace grayscott::io
