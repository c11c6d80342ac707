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
  // A name that begins another, or that another begins (--out for --output, --steps for
  // --steps-per-image, --output for render's --out), is taken for it before any slip: of several,
  // the nearest in length. Three letters at least: "o" begins too many.
  const auto gap = [&](std::string_view other) {
    return other.size() > name.size() ? other.size() - name.size() : name.size() - other.size();
  };
  std::optional<std::size_t> begun, slip;
  std::size_t best_distance = slips_allowed(name) + 1;
  for (std::size_t k = 0; k < known.size(); ++k) {
    const std::string_view candidate = known[k];
    const std::string_view shorter = candidate.size() < name.size() ? candidate : name;
    const std::string_view longer = candidate.size() < name.size() ? name : candidate;
    if (shorter.size() >= 3 && longer.starts_with(shorter) &&
        (!begun || gap(candidate) < gap(known[*begun])))
      begun = k;
    if (const std::size_t distance = edit_distance(name, candidate); distance < best_distance)
      best_distance = distance, slip = k;
  }
  return begun ? begun : slip;
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& known) {
  const std::optional<std::size_t> nearest = nearest_index(name, known);
  return nearest ? known[*nearest] : std::string();
}

}  // namespace grayscott::requests
