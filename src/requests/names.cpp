#include "requests/names.hpp"

#include <algorithm>

namespace grayscott::requests {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::size_t slips_allowed(std::string_view name) {
  return name.size() <= 2 ? 1 : std::max<std::size_t>(2, name.size() / 3);
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = slips_allowed(name) + 1;
  for (const std::string& candidate : known) {
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) best_distance = distance, best = candidate;
  }
  return best;
}

}  // namespace grayscott::requests
