// Names a user types answered with the name meant (requests/names.hpp): the command line's
// unknown options and config keys, and Python's unknown keywords, all take this one answer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "requests/names.hpp"

namespace grayscott::requests {
namespace {

TEST(EditDistance, CountsTwoNeighboursSwappedAsOneSlip) {
  EXPECT_EQ(edit_distance("field", "field"), 0u);
  EXPECT_EQ(edit_distance("feild", "field"), 1u);
  EXPECT_EQ(edit_distance("imagse", "images"), 1u);
  EXPECT_EQ(edit_distance("feild", "file"), 2u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(NearestName, TakesANameThatBeginsAnotherBeforeASlip) {
  const std::vector<std::string> run = {
      "rows",  "cols", "du", "dv", "outside", "output", "stats", "seed", "steps-per-image",
      "images"};
  EXPECT_EQ(nearest_name("out", run), "output");  // not du (two edits), nor outside (longer)
  EXPECT_EQ(nearest_name("steps", run), "steps-per-image");  // not stats
  EXPECT_EQ(nearest_name("image", run), "images");
  EXPECT_EQ(nearest_name("rwos", run), "rows");  // a slip
  EXPECT_EQ(nearest_name("zzz", run), "");
  EXPECT_EQ(nearest_name("o", run), "");  // one letter begins too many names
  // A name longer than the one meant (render's --out given as --output).
  EXPECT_EQ(nearest_name("output", {"out", "field", "range"}), "out");
  EXPECT_EQ(nearest_name("feild", {"file", "field"}), "field");
  // A slip of a longer name before a shorter one that begins it.
  EXPECT_EQ(nearest_name("init-vals", {"init", "init-values"}), "init-values");
  // Names begun alike, nearest in length tied: none rather than one at random.
  EXPECT_EQ(nearest_name("course", {"course-jax", "course-cpp", "course-numpy"}), "");
}

}  // namespace
}  // namespace grayscott::requests
