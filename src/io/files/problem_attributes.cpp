#include "io/files/problem_attributes.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "io/files/hdf5.hpp"
#include "io/files/reader.hpp"

namespace grayscott::io {

namespace {

// A volume's stencil as its 3x3x3 weights, plane after plane, each row-major (the centre 0, as a
// plane's table has it): seven-point's faces 1/6; nineteen-point's faces 1/18 and edges 1/36.
std::array<double, 27> volume_weights(const Stencil& stencil) {
  std::array<double, 27> weights{};
  const bool nineteen = stencil.kind == StencilKind::NineteenPoint;
  for (int z = 0; z < 3; ++z) {
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 3; ++x) {
        const int away = (z != 1) + (y != 1) + (x != 1);  // 1: a face, 2: an edge, 3: a corner
        double w = 0;
        if (away == 1) w = nineteen ? 1.0 / 18 : 1.0 / 6;
        if (away == 2 && nineteen) w = 1.0 / 36;
        weights[static_cast<std::size_t>((z * 3 + y) * 3 + x)] = w;
      }
    }
  }
  return weights;
}

}  // namespace

void refuse_changed_file(const RunFileReader& file, const std::string& what) {
  throw InvalidInput(file.path().string() + ": " + what +
                     " (the file was changed by another program): nothing done with it");
}

namespace {
// Refuses (InvalidInput) a file whose images are not of the grid its attributes give: edited by
// hand or by another program, it would be read, continued or described by the attributes, past
// its datasets' ends or over their images.
void check_images_are_of(const RunFileReader& file, const Grid& grid) {
  std::vector<std::int64_t> image = {grid.rows, grid.cols};
  if (grid.volume()) image.insert(image.begin(), grid.depth);
  for (const char* name : {"v", "u", "checkpoint/u", "checkpoint/v", "initial_state"}) {
    if (!file.has_field(name)) continue;
    const std::vector<std::int64_t> shape = file.shape(name);
    if (shape.size() >= image.size() && std::equal(image.rbegin(), image.rend(), shape.rbegin()))
      continue;
    std::string dims;
    for (std::size_t k = shape.size() > image.size() ? shape.size() - image.size() : 0;
         k < shape.size(); ++k) {
      if (!dims.empty()) dims += 'x';
      dims += std::to_string(shape[k]);
    }
    refuse_changed_file(file, "its attributes give a grid of " + grid.text() + " but /" + name +
                                  " holds images of " + dims);
  }
}
}  // namespace

Problem read_problem_attributes(const RunFileReader& file) {
  Problem p;
  // A plane's file has no depth (files of every version alike).
  p.grid = {file.attribute_int64("rows"), file.attribute_int64("cols"),
            file.has_attribute("depth") ? file.attribute_int64("depth") : 1};
  check_images_are_of(file, p.grid);
  p.params.du = file.attribute_double("du");
  p.params.dv = file.attribute_double("dv");
  p.params.dt = file.attribute_double("dt");
  const std::string stencil_name = file.attribute_string("stencil_name");
  if (stencil_name == "custom") {
    const auto w = file.attribute_doubles("stencil");
    if (w.size() != 9) throw InvalidInput("the file's stencil does not have 9 weights");
    std::array<double, 9> weights{};
    std::copy(w.begin(), w.end(), weights.begin());
    p.stencil = Stencil::custom(weights);
  } else {
    p.stencil = Stencil::parse(stencil_name);
  }
  p.boundary = parse_boundary(file.attribute_string("boundary"));
  p.precision = parse_precision(file.attribute_string("precision"));
  // Files written before the outside values could be chosen held u = 1, v = 0 there.
  if (file.has_attribute("outside")) {
    const auto outside = file.attribute_doubles("outside");
    if (outside.size() != 2) throw InvalidInput("the file's outside values are not 2 numbers");
    p.outside = {outside[0], outside[1]};
  }
  return p;
}

void write_initial_attributes(hid_t root, const InitialState& initial) {
  h5::write_attribute(root, "init", std::string(to_string(initial.kind)));
  if (initial.kind == InitialKind::Custom) return;  // its values are in /initial_state
  const ShapeValues values = shape_values(initial);
  const double pair[2] = {values.u, values.v};
  h5::write_attribute(root, "init_values", std::span<const double>(pair));
}

InitialState read_initial_attributes(const RunFileReader& file) {
  InitialState initial;
  initial.kind = parse_recorded_initial_kind(file.attribute_string("init"));
  if (file.has_attribute("init_values")) {
    const auto values = file.attribute_doubles("init_values");
    if (values.size() != 2) throw InvalidInput("the file's init_values are not 2 numbers");
    initial.values = ShapeValues{values[0], values[1]};
  }
  return initial;
}

void write_problem_attributes(hid_t root, const Problem& p, std::int64_t images,
                              std::int64_t steps_per_image) {
  h5::write_attribute(root, "rows", p.grid.rows);
  h5::write_attribute(root, "cols", p.grid.cols);
  // Only a volume's: a plane's file stays as it was before volumes.
  if (p.grid.volume()) h5::write_attribute(root, "depth", p.grid.depth);
  h5::write_attribute(root, "du", p.params.du);
  h5::write_attribute(root, "dv", p.params.dv);
  h5::write_attribute(root, "dt", p.params.dt);
  h5::write_attribute(root, "steps_per_image", steps_per_image);
  h5::write_attribute(root, "images", images);
  if (p.stencil.three_dimensional()) {
    const std::array<double, 27> weights = volume_weights(p.stencil);
    h5::write_attribute(root, "stencil", std::span<const double>(weights));
  } else {
    h5::write_attribute(root, "stencil", std::span<const double>(p.stencil.weights));
  }
  h5::write_attribute(root, "stencil_name", p.stencil.name());
  h5::write_attribute(root, "boundary", std::string(to_string(p.boundary)));
  h5::write_attribute(root, "precision", std::string(to_string(p.precision)));
  if (p.boundary == Boundary::Fixed) {
    const double outside[2] = {p.outside.u, p.outside.v};
    h5::write_attribute(root, "outside", std::span<const double>(outside));
  }
}

void write_analysis_attributes(hid_t root, const AnalysisAttributes& analysis) {
  if (analysis.statistics) {
    h5::write_attribute(root, "stats_histogram_bins",
                        static_cast<std::int64_t>(analysis.statistics->bins));
    const std::vector<double> range{analysis.statistics->low, analysis.statistics->high};
    h5::write_attribute(root, "stats_histogram_range", range);
  }
  if (analysis.classify) h5::write_attribute(root, "classify", std::int64_t{1});
  if (analysis.until_steady > 0) {
    h5::write_attribute(root, "until_steady", analysis.until_steady);
    h5::write_attribute(root, "steady_images", analysis.steady_images);
  }
}

AnalysisAttributes read_analysis_attributes(const RunFileReader& file) {
  AnalysisAttributes analysis;
  if (file.has_attribute("stats_histogram_bins")) {
    const std::vector<double> range = file.attribute_doubles("stats_histogram_range");
    analysis.statistics = analysis::HistogramSpec{
        static_cast<int>(file.attribute_int64("stats_histogram_bins")), range.at(0), range.at(1)};
  }
  analysis.classify = file.has_attribute("classify") && file.attribute_int64("classify") != 0;
  if (file.has_attribute("until_steady")) {
    analysis.until_steady = file.attribute_double("until_steady");
    analysis.steady_images = file.attribute_int64("steady_images");
  }
  return analysis;
}

SteadyHistory steady_history(const AnalysisAttributes& analysis, std::span<const double> changes,
                             std::int64_t checkpoint_images, std::int64_t settled_image) {
  SteadyHistory history;
  const auto end =
      std::min<std::int64_t>(checkpoint_images, static_cast<std::int64_t>(changes.size()));
  const std::int64_t begin = std::max<std::int64_t>(0, end - analysis.steady_images);
  history.recent_changes.assign(changes.begin() + begin, changes.begin() + end);
  if (settled_image >= 0 && settled_image < end) history.settled_image = settled_image;
  return history;
}

}  // namespace grayscott::io
