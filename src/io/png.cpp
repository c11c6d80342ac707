#include "io/png.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "io/inferno.hpp"

namespace grayscott::io {

Rgb8Image colorize(std::span<const double> values, std::int64_t rows, std::int64_t cols, double lo,
                   double hi) {
  Rgb8Image image{cols, rows, std::vector<std::uint8_t>(values.size() * 3)};
  const double scale = hi > lo ? 255.0 / (hi - lo) : 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = std::isnan(values[i]) ? 0.0 : (values[i] - lo) * scale;
    const auto index = static_cast<std::size_t>(std::clamp(x, 0.0, 255.0) + 0.5);
    const auto& rgb = inferno_colormap[std::min<std::size_t>(index, 255)];
    std::copy(rgb.begin(), rgb.end(), image.pixels.begin() + static_cast<std::ptrdiff_t>(3 * i));
  }
  return image;
}

void write_png(const std::filesystem::path& path, const Rgb8Image& image) {
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file) throw std::runtime_error("cannot write " + path.string());
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  struct PngGuard {
    png_structp* png;
    png_infop* info;
    ~PngGuard() { png_destroy_write_struct(png, info); }
  } guard{&png, &info};
  if (!png || !info) throw std::runtime_error("libpng: out of memory");
  // libpng reports errors by longjmp; nothing with a destructor lives between here and the writes.
  if (setjmp(png_jmpbuf(png))) throw std::runtime_error("libpng: cannot write " + path.string());
  png_init_io(png, file.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (std::int64_t r = 0; r < image.height; ++r) {
    png_write_row(png, const_cast<png_bytep>(image.pixels.data() + 3 * r * image.width));
  }
  png_write_end(png, nullptr);
}

}  // namespace grayscott::io
