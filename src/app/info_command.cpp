#include <cstdio>

#include "app/commands.hpp"
#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/hdf5.hpp"
#include "io/png.hpp"
#include "io/video.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/session.hpp"
#endif

namespace grayscott::app {

void add_info_command(CLI::App& root) {
  CLI::App* info = root.add_subcommand(
      "info", "Show the backends, devices and libraries this build can use");
  info->callback([] {
    std::printf("grayscott %s\n", version);
    std::printf("hdf5: %s\n", io::h5::library_description().c_str());
    std::printf("png: %s\n", io::libpng_description().c_str());
    std::printf("ffmpeg: %s\n", io::ffmpeg_description().c_str());
    for (const Backend* backend : registered_backends()) {
      for (const std::string& line : backend->describe()) {
        std::printf("%.*s: %s\n", static_cast<int>(backend->name().size()), backend->name().data(),
                    line.c_str());
      }
    }
#if GRAYSCOTT_WITH_MPI
    std::printf("mpi: %s\n", mpi::library_description().c_str());
#else
    std::printf("mpi: not in this build (configure with -DGRAYSCOTT_MPI=ON)\n");
#endif
  });
}

}  // namespace grayscott::app
