// --checkpoint-every: how often a run saves the state it can be continued from.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "pipeline/image_loop.hpp"

namespace grayscott::app {

// "25" (images), "90s", "10m", "1h" (wall time) into `policy`. Throws InvalidInput.
void parse_checkpoint_every(std::string_view text, pipeline::SavePolicy& policy);

// Adds --checkpoint-every to `app`, storing its text in `value`.
void add_checkpoint_option(CLI::App& app, std::string& value);

}  // namespace grayscott::app
