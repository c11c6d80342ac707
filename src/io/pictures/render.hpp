// `grayscott render`: PNG pictures of a run file's images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/files/memory.hpp"
#include "io/files/reader.hpp"
#include "io/pictures/png.hpp"

namespace grayscott::io {

class RunFileReader;

// What a picture of a volume shows: one plane through it (a slice across z, y or x at an index)
// or its maximum-intensity projection along z. A plane's pictures ignore it.
struct VolumeView {
  enum class Kind { Slice, MaxProjection };
  Kind kind = Kind::Slice;
  int axis = 0;                       // a slice's: 0 z (rows x cols), 1 y (depth x cols), 2 x
  std::optional<std::int64_t> index;  // a slice's plane; default: the middle one
};
// Parses --slice "z=N", "y=N" or "x=N" (N from 0, or "mid"); throws InvalidInput.
VolumeView parse_slice(const std::string& text);
// Parses --projection "max" (the largest value along z through each cell of a plane); throws
// InvalidInput.
VolumeView parse_projection(const std::string& text);
// The view of a volume asked for by a slice or a projection (nullopt: not given), none when
// neither is (the default slice); throws InvalidInput when both are, or one does not parse (an
// empty text included).
std::optional<VolumeView> parse_view(const std::optional<std::string>& slice,
                                     const std::optional<std::string>& projection);

// A volume's pictures, settled against its extent (a run's, or each member's of a sweep): the
// view (a slice's index resolved, the middle by default), the picture's rows x cols, the words
// its title adds (", z = 8") and the bytes read beyond the picture's values (a projection reads
// the whole volume). Throws InvalidInput for a slice outside the grid.
struct VolumePicture {
  VolumeView view;
  std::int64_t depth = 0, rows = 0, cols = 0;  // the volume's
  std::int64_t picture_rows = 0, picture_cols = 0;
  std::string title;
  std::uint64_t read_bytes = 0;
};
VolumePicture plan_volume_picture(const std::optional<VolumeView>& view, std::int64_t depth,
                                  std::int64_t rows, std::int64_t cols);
// The picture's values of image `image` (of member `member` of a sweep) of `field`.
std::vector<double> volume_picture_values(const RunFileReader& reader, const std::string& field,
                                          std::int64_t image, std::int64_t member,
                                          const VolumePicture& picture);

struct RenderOptions {
  std::filesystem::path out_dir = "images";
  std::string field = "v";
  double lo = 0.0, hi = 0.5;          // the colour range
  std::optional<std::int64_t> image;  // one image only; negative counts from the end (-1: last)
  bool overwrite = false;             // replace pictures that exist already (--force)
  Colormap colormap = Colormap::Inferno;
  std::int64_t scale = 1;  // pixels per cell along each axis (a run's pictures and videos);
                           // 0: auto_scale of the grid
  bool annotate = false;   // a run's pictures: a title (field, step, time) and a colorbar
  // Videos (render_video): the file (.mp4, .webm, .gif or .avi), one frame per `every` images at
  // `fps` frames a second, and of a sweep the atlas of members with seed `seed` (default: the
  // first).
  std::filesystem::path video;
  std::int64_t every = 1;
  double fps = 10;
  std::optional<std::int64_t> seed;
  // A volume's pictures and videos: a slice or a projection (default: the slice across z through
  // the middle plane). Given for a plane's file, refused.
  std::optional<VolumeView> volume;
  // Called after each picture or frame with those done and the total (a progress bar).
  std::function<void(std::int64_t done, std::int64_t total)> on_frame;
  // Asked after each picture or frame: true stops (a stop signal). render_run returns the
  // pictures written so far; render_video throws RenderStopped, its unfinished file removed.
  std::function<bool()> stop_requested;
};

// A video whose rendering was asked to stop: what.() says after how many frames.
struct RenderStopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws InvalidInput, before anything is written, when one of `pictures` exists (a file or a
// link) and `overwrite` is off: pictures, like run files, are replaced only when asked.
void check_pictures_absent(const std::vector<std::filesystem::path>& pictures, bool overwrite);

// The pictures of images [first, last) of `field` from a file of `images` images:
// DIR/v_0000.png, ... (at least four digits, as many as the last image needs).
std::vector<std::filesystem::path> picture_paths(const std::filesystem::path& dir,
                                                 const std::string& field, std::int64_t first,
                                                 std::int64_t last, std::int64_t images);

// The field pictures of `file` show: `asked` where given, else v, or u where the file holds u alone
// (as run --render draws a run that writes u alone). A file that cannot be read gives v: its
// rendering then says why.
std::string drawn_field(const std::filesystem::path& file, const std::string& asked);

// "1 picture", "3 pictures".
std::string count_pictures(std::size_t n);

// After `written`, the pictures of a run's images of `field` in `dir`: a note when `dir` holds
// other pictures of that field ("DIR also holds 90 pictures of v that this rendering did not write
// (v_0010.png to v_0099.png), left as they were"), from a longer run rendered there before, that
// would be taken for this run's (a video made of v_*.png); empty when there are none, or when
// `written` are an atlas's.
std::string earlier_pictures_note(const std::filesystem::path& dir, const std::string& field,
                                  const std::vector<std::filesystem::path>& written);

// What an unfinished file holds, for a note after rendering it: "FILE holds 3 of 10 images
// (status: interrupted by SIGINT after image 3)", a sweep's per member, a file still being
// written said to be; empty for a complete file, or one written by another program (no status).
std::string unfinished_note(const std::filesystem::path& file, const std::string& field);

// What a file holds when it holds no image to render: "FILE holds no image (status: ...)".
std::string no_image_message(const RunFileReader& reader, const std::filesystem::path& file);

// Image `image` of a file holding `images`: counted from 0, or from the end when negative
// (Python's convention: -1 is the last). Throws InvalidInput when there is no such image.
std::int64_t resolve_image(std::int64_t image, std::int64_t images);

// Memory that rendering one rows x cols image takes: the values as float64, HDF5's read of them
// in the stored type (float64 at most) and the RGB picture.
std::uint64_t render_bytes(std::int64_t rows, std::int64_t cols);
// Throws InvalidInput, before anything is read, when rendering needs more than `available` bytes.
void check_render_memory(std::uint64_t bytes, const std::string& what,
                         std::uint64_t available = available_memory());

// Parses "LO:HI" (or "LO,HI", as a histogram's range is written); throws InvalidInput.
std::pair<double, double> parse_range(const std::string& text);
// Parses a picture's scale: "auto" (0: auto_scale of the grid) or a whole number of pixels per
// cell from 1 to max_scale; throws InvalidInput.
std::int64_t parse_scale(const std::string& text);
// Throws InvalidInput unless options.scale is a whole number of pixels from 1 to max_scale (the
// automatic 0 settled before).
void check_scale(const RenderOptions& options);

// The dimensions of `field` in the file `reader` reads (named `file` in errors). Throws
// InvalidInput when the field is neither u nor v, or when the file lacks it (`writer`, "run" or
// "sweep", names the command whose --fields u,v writes u).
std::vector<std::int64_t> field_shape(const RunFileReader& reader,
                                      const std::filesystem::path& file, const std::string& field,
                                      const std::string& writer);

// Checks, before anything is computed, that pictures can be written into `dir`: it is a writable
// folder, or it does not exist and its nearest existing ancestor is a writable folder (it is
// created when the first picture is written), and not the name of `output` (the file a run
// writes, or its .xmf; empty: none). Creates nothing. Throws InvalidInput, e.g. when `dir` is a
// regular file.
void check_render_folder(const std::filesystem::path& dir,
                         const std::filesystem::path& output = {});
// Before a run of `images` images into `output` whose pictures of `field` are rendered into
// `dir` once it ends (run --render): throws InvalidInput when check_render_folder refuses the
// folder or, unless `overwrite`, one of the pictures exists (they are refused as the output file
// is; a continued run's --force replaces only its pictures).
void check_pictures_after_run(const std::filesystem::path& dir, const std::filesystem::path& output,
                              const std::string& field, std::int64_t images, bool overwrite);
// Creates the folder pictures go into (and the ones above it); throws InvalidInput when it cannot.
void make_picture_folder(const std::filesystem::path& dir);

// Writes options.video: one frame per options.every images of a run file (its pictures), or of a
// sweep file (its atlas), from the first image to the last (or the one --image names); returns
// the frames written. Checks everything it can (the name, ffmpeg, an existing file, the memory a
// GIF needs) before the first frame. Throws InvalidInput, or std::runtime_error with ffmpeg's
// last words.
std::int64_t render_video(const std::filesystem::path& file, const RenderOptions& options);

// The largest --scale: a picture's cell as 64x64 pixels.
inline constexpr std::int64_t max_scale = 64;
// The --scale a grid gets by default: the largest whole factor that keeps its longer side at
// most 512 pixels (1 for grids that are already that large), so that a 64x64 run is readable;
// at most max_scale (a grid under 8 cells a side).
std::int64_t auto_scale(std::int64_t rows, std::int64_t cols);

// A model time or a value in plain notation (10000, 0.5, 1234.56; never 1e+04): at most six
// significant digits after the point, trailing zeros dropped.
std::string plain_number(double value);

// "v at step 320, t = 160": what an annotated picture says about its image (a run's pictures add
// its rates, ", F = 0.014, k = 0.054").
std::string picture_title(const std::string& field, std::int64_t step, double dt);

// A run's picture of one image: colorized, enlarged options.scale times, and with
// options.annotate `title` above and a colorbar (LO to HI) below. Pictures of one series share a
// size when their titles are no wider than `widest_title`.
Rgb8Image make_picture(std::span<const double> values, std::int64_t rows, std::int64_t cols,
                       const RenderOptions& options, const std::string& title,
                       const std::string& widest_title);

// Writes DIR/<field>_<image>.png for each image (or the one asked); returns the paths written.
std::vector<std::filesystem::path> render_run(const std::filesystem::path& file,
                                              const RenderOptions& options);

}  // namespace grayscott::io
