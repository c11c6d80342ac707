// Pictures of the fields: an 8-bit RGB PNG through libpng, coloured with inferno.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace grayscott::io {

struct Rgb8Image {
  std::int64_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // row-major, 3 bytes a pixel
};

// Maps values linearly from [lo, hi] onto the inferno colormap (values outside are clamped;
// NaN shows as the colormap's low end).
Rgb8Image colorize(std::span<const double> values, std::int64_t rows, std::int64_t cols, double lo,
                   double hi);

void write_png(const std::filesystem::path& path, const Rgb8Image& image);

// "libpng 1.6.39": the library this program runs with, for `grayscott info`.
std::string libpng_description();

}  // namespace grayscott::io
