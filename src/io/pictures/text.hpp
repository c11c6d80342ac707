// Text on pictures through FreeType: the atlas's labels and the annotations of `render --annotate`.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/pictures/png.hpp"

namespace grayscott::io {

// A grey-level coverage mask of a line of text (255 = ink).
struct TextMask {
  std::int64_t width = 0, height = 0;
  std::vector<std::uint8_t> coverage;
};

// One face at one pixel size, owned for the renderer's lifetime. Unusable (and silent) when the
// font is missing or unreadable: callers then draw no text.
class TextRenderer {
 public:
  explicit TextRenderer(const std::filesystem::path& font, std::int64_t pixels = 14);
  ~TextRenderer();
  TextRenderer(const TextRenderer&) = delete;
  TextRenderer& operator=(const TextRenderer&) = delete;
  bool usable() const;
  std::int64_t line_height() const;
  TextMask render(const std::string& text) const;

 private:
  struct Face;
  std::unique_ptr<Face> face_;
};

// The mask turned a quarter anticlockwise (text reading upwards).
TextMask rotated(const TextMask& mask);

// Draws ink of `rgb` over the picture with the mask's coverage, its top-left at (x, y); what falls
// outside the picture is clipped.
void draw(Rgb8Image& image, const TextMask& mask, std::int64_t x, std::int64_t y,
          std::array<std::uint8_t, 3> rgb = {0, 0, 0});

}  // namespace grayscott::io
