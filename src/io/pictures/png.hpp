// Pictures of the fields: an 8-bit RGB PNG through libpng, coloured with a colormap (inferno by
// default).
#pragma once

#include <array>
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

// The colormaps pictures can use: matplotlib's perceptual maps and a grey ramp.
enum class Colormap { Inferno, Viridis, Magma, Plasma, Cividis, Gray };
using ColormapTable = std::array<std::array<std::uint8_t, 3>, 256>;
// "inferno", "viridis", "magma", "plasma", "cividis", "gray" (or "grey"); throws InvalidInput.
Colormap parse_colormap(const std::string& name);
const ColormapTable& colormap_table(Colormap map);

// Maps values linearly from [lo, hi] onto the colormap (values outside are clamped; NaN shows as
// the colormap's low end).
Rgb8Image colorize(std::span<const double> values, std::int64_t rows, std::int64_t cols, double lo,
                   double hi, Colormap map = Colormap::Inferno);

// The picture enlarged `factor` times along each axis, each cell a factor x factor square.
Rgb8Image enlarged(const Rgb8Image& image, std::int64_t factor);

void write_png(const std::filesystem::path& path, const Rgb8Image& image);
// The PNG file's bytes, in memory (a notebook's picture).
std::string encode_png(const Rgb8Image& image);

// "libpng 1.6.39": the library this program runs with, for `grayscott info`.
std::string libpng_description();

}  // namespace grayscott::io
