#include "requests/value_sets.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>
#include <string>

#include "model/model.hpp"

namespace grayscott::requests {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(trim(text.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// A range's value as the user would write it where rounding alone tells them apart: 0.04 + 2 x
// 0.01 is 0.060000000000000005 in binary, and a file's reader selects 0.06 (xarray's .sel,
// an atlas's ticks). Values with more digits (0.02666...) are left as computed.
double as_written(double value) {
  // 13 digits: a value with more (0.026666666666666665) does not round-trip within the tolerance.
  char text[32];
  std::snprintf(text, sizeof text, "%.13g", value);
  const double short_form = std::strtod(text, nullptr);
  const double tolerance = 8 * std::numeric_limits<double>::epsilon() * std::fabs(value);
  return std::fabs(short_form - value) <= tolerance ? short_form : value;
}

std::string in_quotes(std::string_view text) {
  // A list of a thousand values (a script's) is shown by its ends: a message stays a line.
  constexpr std::size_t longest = 80;
  std::string quoted(1, '\'');
  if (text.size() <= longest) {
    quoted.append(text);
  } else {
    // Cut between characters, not inside one's UTF-8 bytes (a Python message must decode).
    const auto continuation = [&](std::size_t at) { return (text[at] & 0xC0) == 0x80; };
    std::size_t head = 40, tail = text.size() - 30;
    while (head > 0 && continuation(head)) --head;
    while (tail < text.size() && continuation(tail)) ++tail;
    quoted.append(text.substr(0, head)).append("...").append(text.substr(tail));
  }
  quoted.push_back('\'');
  return quoted;
}

double parse_number(std::string_view item, std::string_view what, std::string_view whole) {
  double value = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
  if (!item.empty() && ec == std::errc::result_out_of_range && end == item.data() + item.size()) {
    throw InvalidInput(std::string(what) + ": " + in_quotes(item) +
                       " is out of range for a float64");
  }
  if (item.empty() || ec != std::errc{} || end != item.data() + item.size()) {
    throw InvalidInput(std::string(what) + ": " + in_quotes(item) + " in " + in_quotes(whole) +
                       " is not a number");
  }
  if (!std::isfinite(value)) {
    throw InvalidInput(std::string(what) + ": " + in_quotes(item) + " is not a finite number");
  }
  return value;
}

// The most values one option may produce: beyond this the request is surely a typo.
constexpr std::int64_t max_values = 1'000'000;

}  // namespace

std::vector<double> parse_value_set(std::string_view text, std::string_view what) {
  const std::string whole(text);
  text = trim(text);
  if (text.empty()) throw InvalidInput(std::string(what) + ": no value given");
  const std::string form =
      " (expected START:STOP:COUNT or a comma-separated list, got " + in_quotes(whole) + ")";
  if (text.find(':') != std::string_view::npos) {
    const auto parts = split(text, ':');
    if (parts.size() != 3 || text.find(',') != std::string_view::npos) {
      throw InvalidInput(std::string(what) + ": a range has three parts" + form);
    }
    const double start = parse_number(parts[0], what, whole);
    const double stop = parse_number(parts[1], what, whole);
    std::int64_t count = 0;
    const auto [end, ec] =
        std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), count);
    if (parts[2].empty() || ec != std::errc{} || end != parts[2].data() + parts[2].size()) {
      throw InvalidInput(std::string(what) + ": the count " + in_quotes(parts[2]) + " in " +
                         in_quotes(whole) + " is not a whole number in decimal digits");
    }
    if (count < 1) {
      throw InvalidInput(std::string(what) + ": the count must be at least 1, got " +
                         std::to_string(count) + " in " + in_quotes(whole));
    }
    if (count > max_values) {
      throw InvalidInput(std::string(what) + ": the count " + std::to_string(count) + " exceeds " +
                         std::to_string(max_values));
    }
    if (stop < start) {
      throw InvalidInput(std::string(what) + ": the range " + in_quotes(whole) +
                         " is reversed (STOP is below START)");
    }
    if (count == 1 && stop != start) {
      throw InvalidInput(std::string(what) + ": a range of one value needs START = STOP, got " +
                         in_quotes(whole));
    }
    if (count > 1 && stop == start) {
      throw InvalidInput(std::string(what) + ": START = STOP repeats one value " +
                         std::to_string(count) + " times in " + in_quotes(whole) +
                         " (use a count of 1)");
    }
    std::vector<double> values(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      values[static_cast<std::size_t>(i)] =
          i == count - 1 ? stop
                         : as_written(start + (stop - start) * (static_cast<double>(i) /
                                                                static_cast<double>(count - 1)));
    }
    return values;
  }
  std::vector<double> values;
  std::set<double> seen;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) {
      throw InvalidInput(std::string(what) + ": an empty item in " + in_quotes(whole) + form);
    }
    const double value = parse_number(item, what, whole);
    if (!seen.insert(value).second) {
      throw InvalidInput(std::string(what) + ": " + shortest_text(value) + " appears twice in " +
                         in_quotes(whole));
    }
    values.push_back(value);
  }
  return values;
}

std::vector<std::uint64_t> parse_seed_list(std::string_view text) {
  if (trim(text).empty()) throw InvalidInput("seeds: no value given");
  std::vector<std::uint64_t> seeds;
  std::set<std::uint64_t> seen;
  for (std::string_view item : split(text, ',')) {
    const std::uint64_t seed = parse_seed(item, "seeds");
    if (!seen.insert(seed).second) {
      throw InvalidInput("seeds: " + std::to_string(seed) + " appears twice in " + in_quotes(text));
    }
    seeds.push_back(seed);
  }
  return seeds;
}

std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
  const std::string whole(text);
  text = trim(text);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
  double scale = 1;
  if (!unit.empty()) {
    const char letter = static_cast<char>(unit.front() & ~0x20);  // upper case
    const std::string_view rest = unit.substr(1);
    const bool known_suffix = rest.empty() || rest == "B" || rest == "iB" || rest == "b";
    scale = letter == 'K'                   ? 0x1p10
            : letter == 'M'                 ? 0x1p20
            : letter == 'G'                 ? 0x1p30
            : letter == 'T'                 ? 0x1p40
            : letter == 'B' && rest.empty() ? 1
                                            : 0;
    if (!known_suffix) scale = 0;
  }
  const double bytes = number * scale;
  if (text.empty() || ec != std::errc{} || scale == 0 || !(bytes >= 1) || bytes > 0x1p62) {
    throw InvalidInput(std::string(what) + ": expected a size such as 512M, 4G or 1.5GiB, got " +
                       in_quotes(whole));
  }
  return static_cast<std::uint64_t>(bytes);
}

std::uint64_t parse_seed(std::string_view text, std::string_view what) {
  const std::string whole(text);
  text = trim(text);
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() ||
      seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw InvalidInput(std::string(what) + ": expected a whole number from 0 to 2^63-1, got " +
                       in_quotes(whole));
  }
  return seed;
}

FieldSet parse_fields(std::string_view text) {
  FieldSet f{false, false};
  const std::string whole(text);
  std::stringstream in(whole);
  std::string item;
  while (std::getline(in, item, ',')) {
    bool* named = item == "u" ? &f.u : item == "v" ? &f.v : nullptr;
    // A field named twice (u,v,u) is a slip, not a third field.
    if (named == nullptr || *named)
      throw InvalidInput("fields: expected v, u or u,v, got " + in_quotes(whole));
    *named = true;
  }
  if (!f.u && !f.v) throw InvalidInput("fields: expected v, u or u,v, got " + in_quotes(whole));
  return f;
}

}  // namespace grayscott::requests
