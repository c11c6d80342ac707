// Sets of values for a sweep (the command line's and Python's): ranges and lists of rates and
// seeds, byte counts, seeds and the fields an image carries.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/model.hpp"

namespace grayscott::requests {

// "START:STOP:COUNT" (COUNT values evenly spaced, both ends included) or a comma-separated list
// of distinct values ("0.014,0.022"). `what` names the option in errors. Throws InvalidInput.
std::vector<double> parse_value_set(std::string_view text, std::string_view what);
// A comma-separated list of distinct seeds.
std::vector<std::uint64_t> parse_seed_list(std::string_view text);
// A noise seed: a whole number from 0 to 2^63-1 (files store it as int64). Throws InvalidInput.
std::uint64_t parse_seed(std::string_view text, std::string_view what = "seed");
// "v", "u" or "u,v": which fields to write.
FieldSet parse_fields(std::string_view text);
// A byte count: "4G", "512M", "64K", "1.5GiB", "1000000" (K, M, G, T are powers of 1024).
std::uint64_t parse_bytes(std::string_view text, std::string_view what);

}  // namespace grayscott::requests
