// What a run or a sweep measures of its images, checked before anything runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/classify.hpp"
#include "model/model.hpp"
#include "pipeline/image_loop.hpp"

namespace grayscott::pipeline {

void AnalysisRequest::validate(const Problem& problem, std::int64_t steps_per_image) const {
  const Precision precision = problem.precision;
  if (statistics) statistics->validate();
  if (classify) {
    if (!statistics) throw InvalidInput("classify needs the statistics of every image");
    if (problem.grid.volume()) {
      throw InvalidInput(
          "classify: the pattern classes are a plane's (spots, stripes, holes); a "
          "volume of depth " +
          std::to_string(problem.grid.depth) +
          " is not classified (its statistics are measured: --stats)");
    }
    const std::int64_t side = analysis::min_classified_side;
    if (problem.grid.rows < side || problem.grid.cols < side) {
      throw InvalidInput("classify: a grid of " + std::to_string(problem.grid.rows) + "x" +
                         std::to_string(problem.grid.cols) +
                         " is too small to tell spots from stripes (at least " +
                         std::to_string(side) + "x" + std::to_string(side) + ")");
    }
  }
  if (!std::isfinite(steady.tolerance) || steady.tolerance < 0) {
    throw InvalidInput(
        "until-steady: the tolerance must be a finite positive number (0: never), got " +
        shortest_text(steady.tolerance));
  }
  if (!steady.enabled()) return;
  if (!statistics) throw InvalidInput("until-steady needs the statistics of every image");
  // v's change per step is resolved to about one unit in the last place of v (at most 1) over
  // the steps between two images: a tolerance below that cannot tell a settled state from noise.
  const double resolution = (precision == Precision::Single ? 1.1920929e-07 : 2.220446e-16) /
                            static_cast<double>(std::max<std::int64_t>(steps_per_image, 1));
  if (steady.tolerance < resolution) {
    char about[32];
    std::snprintf(about, sizeof about, "%.2g", resolution);
    throw InvalidInput("until-steady: the tolerance " + shortest_text(steady.tolerance) +
                       " is below what " + std::string(to_string(precision)) +
                       " precision resolves of v's change per step over " +
                       std::to_string(steps_per_image) + " steps per image (about " + about + ")");
  }
  steady.check_images();
}

void SteadyCriterion::check_images() const {
  if (images < 1 || images > 1'000'000) {
    throw InvalidInput("steady-images must be a whole number from 1 to 1000000, got " +
                       std::to_string(images));
  }
}

}  // namespace grayscott::pipeline
