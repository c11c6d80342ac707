#include "io/pictures/atlas.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <type_traits>

#include "analysis/classify.hpp"
#include "io/files/output_path.hpp"
#include "io/files/reader.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/text.hpp"
#include "model/model.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

constexpr std::uint8_t background = 255;  // white page, black text
constexpr std::int64_t label_px = 14;     // text height in pixels
constexpr std::int64_t pad = 6;
constexpr std::int64_t tick_length = 4;
// Between a tick mark's end and its label.
constexpr std::int64_t label_gap = 3;
static_assert(class_colours.size() == analysis::pattern_class_names.size());

// Distinct values in ascending order, and each value's index.
std::map<double, std::int64_t> axis(const std::vector<double>& values) {
  std::map<double, std::int64_t> index;
  for (double v : values) index.emplace(v, 0);
  std::int64_t i = 0;
  for (auto& [value, at] : index) at = i++;
  return index;
}

// The middle of a mask's ink along its rows (`across_rows`) or its columns: where a label's
// digits centre on their tick, whatever the font's room above and below them.
double ink_middle(const TextMask& mask, bool across_rows) {
  const std::int64_t lines = across_rows ? mask.height : mask.width;
  const std::int64_t along = across_rows ? mask.width : mask.height;
  std::int64_t first = -1, last = -1;
  for (std::int64_t i = 0; i < lines; ++i) {
    for (std::int64_t j = 0; j < along; ++j) {
      const std::int64_t at = across_rows ? i * mask.width + j : j * mask.width + i;
      if (mask.coverage[static_cast<std::size_t>(at)] == 0) continue;
      if (first < 0) first = i;
      last = i;
      break;
    }
  }
  return first < 0 ? static_cast<double>(lines) / 2 : static_cast<double>(first + last + 1) / 2;
}

// The pixel a tick at `position` marks: the one that holds it (a tile's centre between two
// pixels marks the second).
std::int64_t tick_pixel(double position) {
  return static_cast<std::int64_t>(std::floor(position + 1e-6));
}

}  // namespace

AtlasLayout plan_atlas(std::int64_t rows, std::int64_t cols, std::int64_t feeds, std::int64_t kills,
                       std::int64_t scale, AtlasLabelRoom labels) {
  AtlasLayout a;
  a.feeds = feeds;
  a.kills = kills;
  const std::int64_t longer = std::max<std::int64_t>(1, std::max(rows, cols));
  if (scale > 0) {
    a.enlarge = scale;
  } else {
    a.subsample = (longer + max_atlas_tile - 1) / max_atlas_tile;
    const std::int64_t grid_longer =
        std::max<std::int64_t>(1, std::max(feeds * rows, kills * cols));
    a.enlarge = std::max<std::int64_t>(
        1, std::min({auto_scale(grid_longer, 1), max_atlas_tile / longer, max_scale}));
  }
  a.tile_rows = (rows + a.subsample - 1) / a.subsample * a.enlarge;
  a.tile_cols = (cols + a.subsample - 1) / a.subsample * a.enlarge;
  a.gap = 2;
  a.tick_length = tick_length;
  // Room for: the axis title, the widest value label, the tick marks and the gaps on either side
  // of them; the title line on top.
  const std::int64_t feed_labels = labels.feed, kill_labels = labels.kill;
  const std::int64_t to_labels = 1 + tick_length + label_gap;
  a.left = pad + label_px * 3 / 2 + pad + feed_labels + to_labels;
  a.top = pad + label_px * 3 / 2 + pad;
  a.width = a.left + a.grid_width() + pad;
  a.height = a.top + a.grid_height() + to_labels + kill_labels + pad + label_px * 3 / 2 + pad;
  return a;
}

fs::path atlas_font() {
  if (const char* env = std::getenv("GRAYSCOTT_FONT"); env && *env) return env;
  for (const char* candidate :
       {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf"}) {
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate;
  }
  return {};
}

bool is_sweep_file(const fs::path& file) {
  RunFileReader reader(file);
  for (const char* field : {"v", "u"}) {
    // [members, images, rows, cols], of volumes [members, images, depth, rows, cols]; a run's
    // volume is [images, depth, rows, cols].
    if (reader.has_field(field))
      return reader.shape(field).size() == (reader.depth() > 1 ? 5u : 4u);
  }
  return false;
}

struct AtlasPainter::State {
  State(const fs::path& file, const RenderOptions& options)
      : reader(file),
        field(options.field),
        lo(options.lo),
        hi(options.hi),
        colormap(options.colormap),
        annotate(options.annotate),
        scale(options.scale),
        text(atlas_font(), label_px) {
    if (scale != 0) check_scale(options);
    const auto dims = field_shape(reader, file, field, "sweep");
    // Of volumes, each tile is a member's slice (or projection), options.volume's view.
    const bool volume = reader.depth() > 1;
    if (dims.size() != (volume ? 5u : 4u)) {
      throw InvalidInput(file.string() + ": /" + field + " is not [members, images, " +
                         (volume ? "depth, " : "") + "rows, cols]");
    }
    members = dims[0], images = dims[1], rows = dims[dims.size() - 2], cols = dims.back();
    std::uint64_t read_bytes = 0;
    if (volume) {
      view = plan_volume_picture(options.volume, dims[2], rows, cols);
      rows = view->picture_rows, cols = view->picture_cols;
      read_bytes = view->read_bytes;
    }
    feed = reader.read_doubles("feed"), kill = reader.read_doubles("kill");
    seed = reader.read_int64("seed");
    if (static_cast<std::int64_t>(feed.size()) != members ||
        static_cast<std::int64_t>(kill.size()) != members ||
        static_cast<std::int64_t>(seed.size()) != members) {
      throw InvalidInput(file.string() + ": /feed, /kill and /seed do not match the members");
    }
    if (images == 0) throw InvalidInput(no_image_message(reader, file));
    // Each member's images in the file, its first ones: all of them but in a sweep stopped or
    // killed before its end, whose later images are not the sweep's (unwritten, reading 0, or
    // NaN after a repair).
    written = reader.has_field("images_written")
                  ? reader.read_int64("images_written")
                  : std::vector<std::int64_t>(static_cast<std::size_t>(members), images);
    if (static_cast<std::int64_t>(written.size()) != members) {
      throw InvalidInput(file.string() + ": /images_written does not match the members");
    }
    for (std::int64_t& w : written) w = std::clamp<std::int64_t>(w, 0, images);
    if (*std::max_element(written.begin(), written.end()) == 0) {
      throw InvalidInput(no_image_message(reader, file));
    }
    if (reader.has_field("step")) steps = reader.read_int64("step");
    feed_index = axis(feed), kill_index = axis(kill);
    for (std::int64_t s : seed) {  // in order of first appearance
      if (std::find(seeds.begin(), seeds.end(), s) == seeds.end()) seeds.push_back(s);
    }
    place_ticks();
    noise = reader.has_attribute("init") && reader.attribute_string("init") == "noise";
    if (reader.has_attribute("dt")) dt = reader.attribute_double("dt");
    if (annotate) layout.height += colorbar_section;
    // With --annotate, each tile marked by its pattern class where the sweep has them
    // (grayscott sweep --classify), and a legend below the colorbar.
    if (annotate && reader.has_field("stats/class")) {
      classes = reader.read_int64("stats/class");  // member-major: [member * images + image]
    }
    make_room_for_text();
    // One member's image at a time, and the atlas picture itself.
    check_render_memory(
        render_bytes(rows, cols) + read_bytes +
            3 * static_cast<std::uint64_t>(layout.width) *
                static_cast<std::uint64_t>(layout.height),
        "an atlas of " + std::to_string(rows) + "x" + std::to_string(cols) + " images");
    if (!text.usable()) {
      std::fprintf(
          stderr,
          "grayscott: warning: no usable font for the atlas labels (install fonts-dejavu-core or "
          "set GRAYSCOTT_FONT); writing the atlas without text\n");
    }
  }

  RunFileReader reader;
  std::string field;
  double lo, hi;
  Colormap colormap;
  bool annotate;       // a colorbar below the axes, the model time in the title
  std::int64_t scale;  // pixels per cell (0: plan_atlas's automatic choice)
  TextRenderer text;
  std::int64_t members = 0, images = 0, rows = 0, cols = 0;  // rows x cols: a tile's values
  std::optional<VolumePicture> view;  // of a sweep of volumes: what each tile shows
  std::vector<double> feed, kill;
  std::vector<std::int64_t> seed, steps, seeds;
  std::vector<std::int64_t> written;  // per member, its images in the file (its first ones)
  std::map<double, std::int64_t> feed_index, kill_index;
  AtlasLayout layout;
  bool noise = false;
  double dt = 0;                      // 0: unknown (no model time in the title)
  std::vector<std::int64_t> classes;  // /stats/class, or empty
  AtlasTicks ticks;

  // The axes' ticks, and the layout with room for their labels. The ticks' places along the
  // axes do not depend on that room: they are chosen relative to the grid, then moved with it.
  void place_ticks() {
    const auto feeds = static_cast<std::int64_t>(feed_index.size());
    const auto kills = static_cast<std::int64_t>(kill_index.size());
    const AtlasLayout grid = plan_atlas(rows, cols, feeds, kills, scale);
    std::vector<double> feed_values, kill_values, feed_centres, kill_centres;
    for (const auto& [value, f] : feed_index) {
      feed_values.push_back(value);
      feed_centres.push_back(grid.row_centre(f) - static_cast<double>(grid.top));
    }
    for (const auto& [value, k] : kill_index) {
      kill_values.push_back(value);
      kill_centres.push_back(grid.column_centre(k) - static_cast<double>(grid.left));
    }
    // Labels take a line of text along their axis (kill labels read upwards): a line and a
    // little more apart, they never touch.
    const double spacing = static_cast<double>((text.usable() ? text.line_height() : label_px) + 2);
    ticks.feed = choose_ticks(feed_values, feed_centres, spacing);
    ticks.kill = choose_ticks(kill_values, kill_centres, spacing);
    AtlasLabelRoom room;
    for (const AxisTick& tick : ticks.feed)
      room.feed = std::max(room.feed, text.render(tick.text).width);
    for (const AxisTick& tick : ticks.kill)
      room.kill = std::max(room.kill, text.render(tick.text).width);
    layout = plan_atlas(rows, cols, feeds, kills, scale, room);
    for (AxisTick& tick : ticks.feed) tick.position += static_cast<double>(layout.top);
    for (AxisTick& tick : ticks.kill) tick.position += static_cast<double>(layout.left);
  }
  // The title's text at `step` for the seed `seed_value`.
  std::string title(std::int64_t step, std::int64_t seed_value) const {
    std::string t = annotate && dt > 0 ? picture_title(field, step, dt)
                                       : field + " at step " + std::to_string(step);
    if (view) t += view->title;
    if (seeds.size() > 1 || noise) t += ", seed " + std::to_string(seed_value);
    return t;
  }
  // The colour bar's ends and the field's name beneath it, with --annotate.
  TextMask bar_low() const { return text.render(plain_number(lo)); }
  TextMask bar_high() const { return text.render(plain_number(hi)); }

  // A narrow grid (few members, small tiles) widens the picture to its text: the longest title
  // (the last step, the widest seed) and, with --annotate, the colour bar, which spans the grid
  // or, where the grid is narrower, its ends and its centred name side by side a gap apart.
  void make_room_for_text() {
    bar_width = layout.grid_width();
    if (!text.usable()) return;
    std::int64_t widest_title = 0;
    const std::int64_t last_step = steps.empty() ? images : steps.back();
    for (std::int64_t s : seeds)
      widest_title = std::max(widest_title, text.render(title(last_step, s)).width);
    layout.width = std::max(layout.width, layout.left + widest_title + pad);
    if (annotate) {
      // The name is centred: the wider end on either side of it, a gap apart.
      const std::int64_t end = std::max(bar_low().width, bar_high().width);
      bar_width = std::max(bar_width, text.render(field).width + 2 * (end + pad));
      layout.width = std::max(layout.width, layout.left + bar_width + pad);
    }
    if (!classes.empty()) {
      legend = place_legend();
      legend_height = legend_section * (legend.back().line + 1);
    }
    layout.height += legend_height;
  }

  // The side of a class's mark in the tiles and the legend.
  std::int64_t class_mark() const { return std::clamp<std::int64_t>(layout.tile_rows / 5, 5, 12); }
  // Where each class's entry of the legend goes: its line and its left end, the entries in
  // lines as wide as the picture.
  struct LegendPlace {
    std::int64_t line, x;
  };
  std::vector<LegendPlace> place_legend() const {
    std::vector<LegendPlace> places;
    std::int64_t line = 0, x = layout.left;
    for (const std::string_view name : analysis::pattern_class_names) {
      const std::int64_t width = class_mark() + pad / 2 + text.render(std::string(name)).width;
      if (x > layout.left && x + width > layout.width - pad) ++line, x = layout.left;
      places.push_back({line, x});
      x += width + pad * 2;
    }
    return places;
  }
  // Set by make_room_for_text, once the picture's width is known.
  std::int64_t bar_width = 0;       // the colour bar's
  std::vector<LegendPlace> legend;  // each class's entry, where the sweep has classes
  std::int64_t legend_height = 0;   // the legend's, below the colour bar

  static constexpr std::int64_t legend_section = label_px * 3 / 2 + pad;
  // Below the axes with --annotate: the bar, its end values and the field's name beneath.
  static constexpr std::int64_t bar_height = 12;
  static constexpr std::int64_t colorbar_section = pad + bar_height + pad + label_px * 3 / 2 + pad;
};

AtlasPainter::AtlasPainter(const fs::path& file, const RenderOptions& options)
    : s_(std::make_unique<State>(file, options)) {}
AtlasPainter::~AtlasPainter() = default;

std::int64_t AtlasPainter::images() const {
  return *std::max_element(s_->written.begin(), s_->written.end());
}
AtlasPainter::SeedImages AtlasPainter::images_of_seed(std::int64_t seed) const {
  SeedImages held{std::numeric_limits<std::int64_t>::max(), 0};
  for (std::size_t m = 0; m < s_->written.size(); ++m) {
    if (s_->seed[m] != seed) continue;
    held.every = std::min(held.every, s_->written[m]);
    held.some = std::max(held.some, s_->written[m]);
  }
  if (held.some == 0) held.every = 0;  // no member of that seed (or none that wrote)
  return held;
}
const std::vector<std::int64_t>& AtlasPainter::seeds() const { return s_->seeds; }
const AtlasLayout& AtlasPainter::layout() const { return s_->layout; }
const AtlasTicks& AtlasPainter::ticks() const { return s_->ticks; }

Rgb8Image AtlasPainter::paint(std::int64_t image, std::int64_t seed_value) const {
  const State& st = *s_;
  const AtlasLayout& layout = st.layout;
  const std::int64_t step = image < static_cast<std::int64_t>(st.steps.size())
                                ? st.steps[static_cast<std::size_t>(image)]
                                : image;
  Rgb8Image atlas{layout.width, layout.height,
                  std::vector<std::uint8_t>(
                      static_cast<std::size_t>(3 * layout.width * layout.height), background)};
  for (std::int64_t m = 0; m < st.members; ++m) {
    if (st.seed[static_cast<std::size_t>(m)] != seed_value) continue;
    // A member that had not written this image when the sweep stopped: its tile left blank.
    if (image >= st.written[static_cast<std::size_t>(m)]) continue;
    const auto values = st.view ? volume_picture_values(st.reader, st.field, image, m, *st.view)
                                : st.reader.read_image(st.field, image, m);
    const Rgb8Image tile = colorize(values, st.rows, st.cols, st.lo, st.hi, st.colormap);
    const std::int64_t x0 = layout.tile_x(st.kill_index.at(st.kill[static_cast<std::size_t>(m)]));
    const std::int64_t y0 = layout.tile_y(st.feed_index.at(st.feed[static_cast<std::size_t>(m)]));
    for (std::int64_t r = 0; r < layout.tile_rows; ++r) {
      for (std::int64_t c = 0; c < layout.tile_cols; ++c) {
        const std::int64_t from = 3 * (r / layout.enlarge * layout.subsample * st.cols +
                                       c / layout.enlarge * layout.subsample);
        const std::int64_t to = 3 * ((y0 + r) * layout.width + x0 + c);
        std::copy_n(tile.pixels.begin() + from, 3, atlas.pixels.begin() + to);
      }
    }
  }
  // Tick marks left of the grid and below it, at the ticks' places.
  const std::int64_t grid_bottom = layout.grid_bottom();
  const auto ink = [&](std::int64_t x, std::int64_t y) {
    std::fill_n(atlas.pixels.begin() + 3 * (y * layout.width + x), 3, std::uint8_t{0});
  };
  for (const AxisTick& tick : st.ticks.feed) {
    for (std::int64_t x = layout.left - 1 - layout.tick_length; x < layout.left - 1; ++x)
      ink(x, tick_pixel(tick.position));
  }
  for (const AxisTick& tick : st.ticks.kill) {
    for (std::int64_t y = grid_bottom + 1; y < grid_bottom + 1 + layout.tick_length; ++y)
      ink(tick_pixel(tick.position), y);
  }
  const TextRenderer& text = st.text;
  if (text.usable()) {
    // Feed labels left of their tick marks and kill labels (reading upwards) below theirs, their
    // digits centred on the tick, kept inside the picture (the ticks' spacing keeps them apart).
    const std::int64_t label_right = layout.left - 1 - layout.tick_length - label_gap;
    for (const AxisTick& tick : st.ticks.feed) {
      const TextMask mask = text.render(tick.text);
      const std::int64_t y = std::lround(tick.position - ink_middle(mask, true));
      draw(atlas, mask, label_right - mask.width,
           std::clamp<std::int64_t>(y, 0, layout.height - mask.height));
    }
    for (const AxisTick& tick : st.ticks.kill) {
      const TextMask mask = rotated(text.render(tick.text));
      const std::int64_t x = std::lround(tick.position - ink_middle(mask, false));
      draw(atlas, mask, std::clamp<std::int64_t>(x, 0, layout.width - mask.width),
           grid_bottom + 1 + layout.tick_length + label_gap);
    }
    const TextMask feed_title = rotated(text.render("feed F"));
    draw(atlas, feed_title, pad, layout.top + (layout.grid_height() - feed_title.height) / 2);
    const TextMask kill_title = text.render("kill k");
    const std::int64_t grid_width = layout.grid_width();
    const std::int64_t axes_bottom = layout.height -
                                     (st.annotate ? State::colorbar_section : std::int64_t{0}) -
                                     st.legend_height;
    draw(atlas, kill_title, layout.left + (grid_width - kill_title.width) / 2,
         axes_bottom - pad - kill_title.height);
    draw(atlas, text.render(st.title(step, seed_value)), layout.left, pad);
  }
  if (st.annotate) {
    // The colours' meaning: a bar from LO to HI under the grid, its ends and the field named.
    const std::int64_t bar_width = st.bar_width;
    const std::int64_t legend = st.legend_height;
    const std::int64_t bar_top = layout.height - legend - State::colorbar_section + pad;
    const ColormapTable& colours = colormap_table(st.colormap);
    for (std::int64_t x = 0; x < bar_width; ++x) {
      const auto level =
          static_cast<std::size_t>(255 * x / std::max<std::int64_t>(bar_width - 1, 1));
      for (std::int64_t y = bar_top; y < bar_top + State::bar_height; ++y) {
        std::copy_n(colours[level].begin(), 3,
                    atlas.pixels.begin() + 3 * (y * layout.width + layout.left + x));
      }
    }
    if (text.usable()) {
      const std::int64_t below = bar_top + State::bar_height + pad / 2;
      const TextMask low = st.bar_low(), high = st.bar_high();
      const TextMask name = text.render(st.field);
      draw(atlas, low, layout.left, below);
      draw(atlas, high, layout.left + bar_width - high.width, below);
      draw(atlas, name, layout.left + (bar_width - name.width) / 2, below);
    }
  }
  if (!st.classes.empty()) {
    // A square of the class's colour in each tile's top-left corner, outlined in black so that
    // it shows on any colour of the map; the legend names the colours.
    const std::int64_t mark = st.class_mark();
    const auto square = [&](std::int64_t x0, std::int64_t y0, int pattern) {
      const auto& colour = class_colours[static_cast<std::size_t>(pattern)];
      for (std::int64_t y = 0; y < mark; ++y) {
        for (std::int64_t x = 0; x < mark; ++x) {
          const bool edge = x == 0 || y == 0 || x == mark - 1 || y == mark - 1;
          const std::size_t at = static_cast<std::size_t>(3 * ((y0 + y) * layout.width + x0 + x));
          for (int c = 0; c < 3; ++c) atlas.pixels[at + c] = edge ? 0 : colour[c];
        }
      }
    };
    for (std::int64_t m = 0; m < st.members; ++m) {
      if (st.seed[static_cast<std::size_t>(m)] != seed_value) continue;
      const std::int64_t pattern = st.classes[static_cast<std::size_t>(m * st.images + image)];
      if (pattern < 0 || pattern >= static_cast<std::int64_t>(class_colours.size())) continue;
      square(layout.tile_x(st.kill_index.at(st.kill[static_cast<std::size_t>(m)])) + 1,
             layout.tile_y(st.feed_index.at(st.feed[static_cast<std::size_t>(m)])) + 1,
             static_cast<int>(pattern));
    }
    if (text.usable()) {
      const std::int64_t top = layout.height - st.legend_height;
      const std::vector<State::LegendPlace>& places = st.legend;
      for (std::size_t pattern = 0; pattern < places.size(); ++pattern) {
        const std::int64_t y = top + places[pattern].line * State::legend_section;
        square(places[pattern].x, y + (label_px - mark) / 2 + 2, static_cast<int>(pattern));
        const TextMask name = text.render(std::string(analysis::pattern_class_names[pattern]));
        draw(atlas, name, places[pattern].x + mark + pad / 2, y);
      }
    }
  }
  return atlas;
}

std::vector<fs::path> render_atlas(const fs::path& file, const RenderOptions& options) {
  const AtlasPainter painter(file, options);
  // By default, each seed's atlas at the last image every member of that seed holds (of a sweep
  // stopped early, the last one some member of it holds where one holds none).
  const auto image_of = [&](std::int64_t seed) {
    if (options.image) return resolve_image(*options.image, painter.images());
    const auto [every, some] = painter.images_of_seed(seed);
    return every > 0 ? every - 1 : std::max<std::int64_t>(some - 1, 0);
  };
  const auto atlas_path = [&](std::int64_t s) {
    return options.out_dir / (painter.seeds().size() == 1
                                  ? std::string("atlas.png")
                                  : "atlas_seed" + std::to_string(s) + ".png");
  };
  // Every image checked (an --image out of range refused) before the folder is made.
  std::vector<fs::path> pictures;
  std::vector<std::int64_t> images;
  for (std::int64_t s : painter.seeds()) {
    pictures.push_back(atlas_path(s));
    images.push_back(image_of(s));
  }
  check_pictures_absent(pictures, options.overwrite);
  make_picture_folder(options.out_dir);
  remove_abandoned_partials(pictures);  // those of a rendering killed by SIGKILL
  std::vector<fs::path> written;
  for (std::size_t k = 0; k < pictures.size(); ++k) {
    const fs::path& path = pictures[k];
    write_png(path, painter.paint(images[k], painter.seeds()[k]));
    written.push_back(path);
    if (options.on_frame) {
      options.on_frame(static_cast<std::int64_t>(written.size()),
                       static_cast<std::int64_t>(painter.seeds().size()));
    }
    if (options.stop_requested && options.stop_requested()) break;
  }
  return written;
}

}  // namespace grayscott::io
