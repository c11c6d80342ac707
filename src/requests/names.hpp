// Names a user types (options, keys, presets, patterns, commands): how near one is to another, so
// that a slip of the keyboard is answered with the name meant ("did you mean spots?").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grayscott::requests {

// Edits (insertions, deletions, substitutions, two neighbours swapped) from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The edits that make a name a slip of the keyboard for another: a third of its letters, at least
// 2 (1 in a name of 1 or 2 letters: "o" is not "du").
std::size_t slips_allowed(std::string_view name);

// The one of `known` that `name` means: one it begins (the nearest in length), else one it is a
// slip of the keyboard for, else one that begins it; its index, none where none is.
std::optional<std::size_t> nearest_index(std::string_view name,
                                         const std::vector<std::string>& known);
// That one's name, or "".
std::string nearest_name(std::string_view name, const std::vector<std::string>& known);

}  // namespace grayscott::requests
