// `grayscott repair FILE`: a file left by kill -9, a crash or a full disk made readable by every
// reader (see io/files/repair.hpp and docs/file-format.md).
#include <cstdio>
#include <string>

#include "app/commands.hpp"
#include "io/files/repair.hpp"

namespace grayscott::app {

void add_repair_command(CLI::App& root) {
  CLI::App* repair = root.add_subcommand(
      "repair", "Make a run or sweep file whose writer was killed (or ran out of disk) readable");
  auto file = std::make_shared<std::string>();
  repair->add_option("file", *file, "the HDF5 file")->required();
  repair->callback([file] {
    // Under mpirun or srun the ranks would mend the file at once: rank 0 alone does.
    if (secondary_mpi_process()) return;
    // `repair ""` (a script's empty variable): said as such, not as a file named "" not found.
    if (file->empty()) throw InvalidInput("repair: the file name is empty");
    const io::RepairOutcome outcome = io::repair_file(*file);
    // A sweep's images are counted over its members.
    const io::FileReport& before = outcome.before;
    const std::string images = before.sweep
                                   ? std::to_string(outcome.images) + " of " +
                                         std::to_string(before.members * before.images) +
                                         " images (" + std::to_string(before.members) + " members)"
                                   : std::to_string(outcome.images) + " images";
    if (!outcome.changed) {
      std::printf("%s: nothing to repair (%s, status: %s); its .xmf %s\n", file->c_str(),
                  images.c_str(), outcome.status.c_str(),
                  outcome.companion_written ? "rewritten" : "is current");
      return;
    }
    std::printf("%s: repaired: %s, status: %s; every reader opens it now\n", file->c_str(),
                images.c_str(), outcome.status.c_str());
  });
}

}  // namespace grayscott::app
