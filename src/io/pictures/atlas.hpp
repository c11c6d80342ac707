// The atlas of a sweep file: one PNG with a tile per (feed, kill) showing one image of that member
// (the last by default), kill increasing to the right, feed increasing upwards (Pearson's map),
// the axes ticked at round values (io/pictures/ticks.hpp). A sweep with several seeds gets one
// atlas per seed.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/pictures/png.hpp"
#include "io/pictures/render.hpp"
#include "io/pictures/ticks.hpp"

namespace grayscott::io {

// Where everything goes in an atlas picture.
struct AtlasLayout {
  std::int64_t tile_rows = 0, tile_cols = 0;  // pixels of one tile
  std::int64_t subsample = 1;                 // one image pixel in `subsample` along each axis
  std::int64_t enlarge = 1;                   // each kept pixel drawn enlarge x enlarge
  std::int64_t gap = 0;                       // pixels between tiles
  std::int64_t left = 0, top = 0;             // the tile grid's origin (margins for the labels)
  std::int64_t width = 0, height = 0;         // the whole picture
  std::int64_t feeds = 0, kills = 0;
  // The tick marks: pixels [left - 1 - tick_length, left - 1) left of the grid, rows
  // [grid_bottom() + 1, grid_bottom() + 1 + tick_length) below it; the labels beyond them.
  std::int64_t tick_length = 0;
  // Top-left pixel of the tile of feed index f (ascending) and kill index k (ascending).
  std::int64_t tile_x(std::int64_t k) const { return left + k * (tile_cols + gap); }
  std::int64_t tile_y(std::int64_t f) const { return top + (feeds - 1 - f) * (tile_rows + gap); }
  // Where the axes put each tile's value: its centre (a tile covers [tile_x, tile_x + tile_cols)).
  double column_centre(std::int64_t k) const {
    return static_cast<double>(tile_x(k)) + static_cast<double>(tile_cols) / 2;
  }
  double row_centre(std::int64_t f) const {
    return static_cast<double>(tile_y(f)) + static_cast<double>(tile_rows) / 2;
  }
  std::int64_t grid_width() const { return kills * tile_cols + (kills - 1) * gap; }
  std::int64_t grid_height() const { return feeds * tile_rows + (feeds - 1) * gap; }
  std::int64_t grid_bottom() const { return top + grid_height(); }  // the first row below it
};

// The room the axes' value labels take across their axis, in pixels: the widest feed label and
// the longest kill label (kill labels read upwards).
struct AtlasLabelRoom {
  std::int64_t feed = 0, kill = 0;
};

// Tiles are the images themselves at `scale` pixels per cell (render's --scale). Automatic
// (scale 0): a large image subsampled by the smallest whole factor that keeps its tile at most
// max_atlas_tile pixels on a side, and small ones enlarged by the largest whole factor that keeps
// the grid of tiles within about auto_scale's 512 pixels (and each tile within max_atlas_tile), so
// that a map of small members is not a thumbnail.
inline constexpr std::int64_t max_atlas_tile = 256;
AtlasLayout plan_atlas(std::int64_t rows, std::int64_t cols, std::int64_t feeds, std::int64_t kills,
                       std::int64_t scale = 0, AtlasLabelRoom labels = {});

// The ticks of an atlas's axes, at their places in the picture: feed ticks along y (feed
// increasing upwards), kill ticks along x.
struct AtlasTicks {
  std::vector<AxisTick> feed, kill;
};

// The font for the labels: $GRAYSCOTT_FONT if set, else DejaVu Sans (Debian's fonts-dejavu-core);
// empty when none is found (the atlas is then written without text, with a warning).
std::filesystem::path atlas_font();

// True when `file` holds a sweep (a 4-D /v or /u).
bool is_sweep_file(const std::filesystem::path& file);

// The pattern classes' colours in an annotated atlas (analysis/classify.hpp's order): decayed
// grey, uniform white, spots cyan, stripes green, holes magenta, mixed orange, waves red.
inline constexpr std::array<std::array<std::uint8_t, 3>, 7> class_colours{{{128, 128, 128},
                                                                           {255, 255, 255},
                                                                           {0, 210, 255},
                                                                           {40, 200, 40},
                                                                           {255, 0, 255},
                                                                           {255, 150, 0},
                                                                           {230, 20, 20}}};

// The atlas pictures of a sweep file, one image (and one seed) at a time: the file is opened, its
// axes read and the memory checked once, so that a video paints one frame after another.
class AtlasPainter {
 public:
  // Throws InvalidInput for a file that is not a sweep or holds no image.
  AtlasPainter(const std::filesystem::path& file, const RenderOptions& options);
  ~AtlasPainter();
  // The images to paint: those some member holds (a sweep stopped early holds fewer than it
  // planned; the tiles of members that had not reached an image are left blank).
  std::int64_t images() const;
  // The images of the members of seed `seed`: those every one holds, and those some one holds
  // (its atlas's frames).
  struct SeedImages {
    std::int64_t every, some;
  };
  SeedImages images_of_seed(std::int64_t seed) const;
  const std::vector<std::int64_t>& seeds() const;  // in order of first appearance
  const AtlasLayout& layout() const;
  const AtlasTicks& ticks() const;
  // The atlas of image `image` (resolved, from 0) for the members of seed `seed`.
  Rgb8Image paint(std::int64_t image, std::int64_t seed) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Writes DIR/atlas.png (one seed) or DIR/atlas_seed<S>.png (one per seed); returns the paths.
// options.image picks the image shown (default: the last one every member holds).
std::vector<std::filesystem::path> render_atlas(const std::filesystem::path& file,
                                                const RenderOptions& options);

}  // namespace grayscott::io
