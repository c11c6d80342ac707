#include <charconv>
#include <cmath>
#include <string>

#include "model/model.hpp"
#include "pipeline/image_loop.hpp"

namespace grayscott::pipeline {

void parse_checkpoint_every(std::string_view text, SavePolicy& policy) {
  const std::string whole(text);
  const auto bad = [&] {
    return InvalidInput(
        "checkpoint-every: expected a whole number of images from 1 (e.g. 50) or a time (90s, "
        "10m, 1h), got '" +
        whole + "'");
  };
  if (text.empty()) throw bad();
  double scale = 0;  // seconds per unit; 0: a count of images
  switch (text.back()) {
    case 's':
      scale = 1;
      break;
    case 'm':
      scale = 60;
      break;
    case 'h':
      scale = 3600;
      break;
    default:
      break;
  }
  if (scale > 0) text.remove_suffix(1);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() ||
      !std::isfinite(number) || number <= 0) {
    throw bad();
  }
  if (scale > 0) {
    policy.checkpoint_every_images = 0;
    policy.checkpoint_every_seconds = number * scale;
    return;
  }
  // A count in digits, as every whole number is read ("1e3" is refused as --images 1e3 is).
  const bool digits = text.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits || number != std::floor(number) || number > 9e18) throw bad();
  policy.checkpoint_every_images = static_cast<std::int64_t>(number);
}

}  // namespace grayscott::pipeline
