#include "app/save_options.hpp"

namespace grayscott::app {

void add_checkpoint_option(CLI::App& app, std::string& value) {
  app.add_option("--checkpoint-every", value,
                 "Save the state to continue from (--resume): every N images, or every 90s, 10m, "
                 "1h of wall time (default 5m; also at every stop signal)")
      ->type_name("N|TIME");
}

}  // namespace grayscott::app
