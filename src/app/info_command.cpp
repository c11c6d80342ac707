#include <omp.h>

#include <cstdio>

#include "app/commands.hpp"
#include "app/version.hpp"
#include "engine/cuda/cuda_backend.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/session.hpp"
#endif

namespace grayscott::app {

void add_info_command(CLI::App& root) {
  CLI::App* info = root.add_subcommand("info", "Show the backends and devices this build can use");
  info->callback([] {
    std::printf("grayscott %s\n", version);
    std::printf("cpu: %d OpenMP threads\n", omp_get_max_threads());
#if GRAYSCOTT_WITH_MPI
    std::printf("mpi: %s\n", mpi::library_description().c_str());
#else
    std::printf("mpi: not in this build (configure with -DGRAYSCOTT_MPI=ON)\n");
#endif
    std::string why;
    if (!cuda::available(&why)) {
      std::printf("cuda: unavailable: %s\n", why.c_str());
      return;
    }
    for (const auto& d : cuda::devices()) {
      std::printf("cuda: device %d: %s, %.1f GiB, compute capability %d.%d\n", d.ordinal,
                  d.name.c_str(), static_cast<double>(d.memory_bytes) / (1u << 30), d.major,
                  d.minor);
    }
  });
}

}  // namespace grayscott::app
