#include "io/pictures/text.hpp"

#include <ft2build.h>
#include FT_FREETYPE_H

#include <algorithm>
#include <type_traits>

namespace grayscott::io {

struct TextRenderer::Face {
  struct FreeLibrary {
    void operator()(FT_Library l) const { FT_Done_FreeType(l); }
  };
  struct FreeFace {
    void operator()(FT_Face f) const { FT_Done_Face(f); }
  };
  std::unique_ptr<std::remove_pointer_t<FT_Library>, FreeLibrary> library;
  std::unique_ptr<std::remove_pointer_t<FT_Face>, FreeFace> face;
};

TextRenderer::TextRenderer(const std::filesystem::path& font, std::int64_t pixels)
    : face_(std::make_unique<Face>()) {
  if (font.empty()) return;
  FT_Library library = nullptr;
  if (FT_Init_FreeType(&library) != 0) return;
  face_->library.reset(library);
  FT_Face face = nullptr;
  if (FT_New_Face(face_->library.get(), font.c_str(), 0, &face) != 0) return;
  face_->face.reset(face);
  if (FT_Set_Pixel_Sizes(face_->face.get(), 0, static_cast<FT_UInt>(pixels)) != 0) {
    face_->face.reset();
  }
}

TextRenderer::~TextRenderer() = default;

bool TextRenderer::usable() const { return face_->face != nullptr; }

std::int64_t TextRenderer::line_height() const {
  return usable() ? (face_->face->size->metrics.height >> 6) : 0;
}

TextMask TextRenderer::render(const std::string& text) const {
  TextMask mask;
  if (!usable()) return mask;
  FT_Face face = face_->face.get();
  const std::int64_t ascender = face->size->metrics.ascender >> 6;
  mask.height = line_height();
  for (char c : text) {
    if (FT_Load_Char(face, static_cast<unsigned char>(c), FT_LOAD_DEFAULT) == 0) {
      mask.width += face->glyph->advance.x >> 6;
    }
  }
  mask.coverage.assign(static_cast<std::size_t>(mask.width * mask.height), 0);
  std::int64_t pen = 0;
  for (char c : text) {
    if (FT_Load_Char(face, static_cast<unsigned char>(c), FT_LOAD_RENDER) != 0) continue;
    const FT_GlyphSlot glyph = face->glyph;
    const FT_Bitmap& bitmap = glyph->bitmap;
    for (unsigned r = 0; r < bitmap.rows; ++r) {
      for (unsigned col = 0; col < bitmap.width; ++col) {
        const std::int64_t x = pen + glyph->bitmap_left + col;
        const std::int64_t y = ascender - glyph->bitmap_top + r;
        if (x < 0 || y < 0 || x >= mask.width || y >= mask.height) continue;
        auto& out = mask.coverage[static_cast<std::size_t>(y * mask.width + x)];
        out = std::max(out, bitmap.buffer[r * static_cast<unsigned>(bitmap.pitch) + col]);
      }
    }
    pen += glyph->advance.x >> 6;
  }
  return mask;
}

TextMask rotated(const TextMask& m) {
  TextMask r{m.height, m.width, std::vector<std::uint8_t>(m.coverage.size())};
  for (std::int64_t y = 0; y < m.height; ++y) {
    for (std::int64_t x = 0; x < m.width; ++x) {
      r.coverage[static_cast<std::size_t>((m.width - 1 - x) * r.width + y)] =
          m.coverage[static_cast<std::size_t>(y * m.width + x)];
    }
  }
  return r;
}

void draw(Rgb8Image& image, const TextMask& mask, std::int64_t x, std::int64_t y,
          std::array<std::uint8_t, 3> rgb) {
  for (std::int64_t r = 0; r < mask.height; ++r) {
    for (std::int64_t c = 0; c < mask.width; ++c) {
      const std::int64_t px = x + c, py = y + r;
      if (px < 0 || py < 0 || px >= image.width || py >= image.height) continue;
      const unsigned ink = mask.coverage[static_cast<std::size_t>(r * mask.width + c)];
      for (int channel = 0; channel < 3; ++channel) {
        auto& value = image.pixels[static_cast<std::size_t>(3 * (py * image.width + px) + channel)];
        value = static_cast<std::uint8_t>((value * (255u - ink) + rgb[channel] * ink) / 255u);
      }
    }
  }
}

}  // namespace grayscott::io
