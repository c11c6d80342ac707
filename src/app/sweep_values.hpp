// The command line's sets of values for `grayscott sweep`: ranges and lists of rates and seeds,
// and byte counts.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace grayscott::app {

// "START:STOP:COUNT" (COUNT values evenly spaced, both ends included) or a comma-separated list
// of distinct values ("0.014,0.022"). `what` names the option in errors. Throws InvalidInput.
std::vector<double> parse_value_set(std::string_view text, std::string_view what);
// A comma-separated list of distinct seeds.
std::vector<std::uint64_t> parse_seed_list(std::string_view text);
// A byte count: "4G", "512M", "64K", "1.5GiB", "1000000" (K, M, G, T are powers of 1024).
std::uint64_t parse_bytes(std::string_view text, std::string_view what);

}  // namespace grayscott::app
