#include "requests/names.hpp"

#include <algorithm>
#include <optional>

namespace grayscott::requests {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: edits from a's first i letters to b's first j, two neighbours swapped counting one
  // (the commonest slip: "feild" is one from "field", and as far from "file" as it was before).
  const std::size_t width = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * width);
  const auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * width + j]; };
  for (std::size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      at(i, j) = std::min(
          {at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] != b[j - 1] ? 1 : 0)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
    }
  }
  return at(a.size(), b.size());
}

std::size_t slips_allowed(std::string_view name) {
  return name.size() <= 2 ? 1 : std::max<std::size_t>(2, name.size() / 3);
}

std::optional<std::size_t> nearest_index(std::string_view name,
                                         const std::vector<std::string>& known) {
  // In this order: a known name that the one typed begins (--out for --output, --steps for
  // --steps-per-image: of several, the one strictly nearest in length, else none), a slip of the
  // keyboard (--imags), a known name that begins the one typed (render's --out for --output). Three
  // letters at least for either beginning: "o" begins too many.
  const auto gap = [&](std::string_view other) {
    return other.size() > name.size() ? other.size() - name.size() : name.size() - other.size();
  };
  std::optional<std::size_t> abbreviated, slip, extended;
  bool abbreviation_tied = false;
  std::size_t best_distance = slips_allowed(name) + 1;
  for (std::size_t k = 0; k < known.size(); ++k) {
    const std::string_view candidate = known[k];
    if (candidate == name) return k;  // an alias of an option, named by its first name
    if (name.size() >= 3 && candidate.starts_with(name)) {
      if (!abbreviated || gap(candidate) < gap(known[*abbreviated])) {
        abbreviated = k;
        abbreviation_tied = false;
      } else if (gap(candidate) == gap(known[*abbreviated])) {
        abbreviation_tied = true;
      }
    }
    if (candidate.size() >= 3 && name.starts_with(candidate) &&
        (!extended || gap(candidate) < gap(known[*extended])))
      extended = k;
    if (const std::size_t distance = edit_distance(name, candidate); distance < best_distance)
      best_distance = distance, slip = k;
  }
  if (abbreviated && !abbreviation_tied) return abbreviated;
  return slip ? slip : extended;
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& known) {
  const std::optional<std::size_t> nearest = nearest_index(name, known);
  return nearest ? known[*nearest] : std::string();
}

}  // namespace grayscott::requests
