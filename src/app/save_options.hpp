// --checkpoint-every: how often a run saves the state it can be continued from.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "pipeline/image_loop.hpp"

namespace grayscott::app {

using pipeline::parse_checkpoint_every;

// Adds --checkpoint-every to `app`, storing its text in `value`.
void add_checkpoint_option(CLI::App& app, std::string& value);

}  // namespace grayscott::app
