#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/classify.hpp"
#include "app/commands.hpp"
#include "app/version.hpp"
#include "engine/registry.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/reader.hpp"
#include "io/files/repair.hpp"
#include "io/pictures/png.hpp"
#include "io/pictures/video.hpp"
#include "pipeline/run.hpp"
#if GRAYSCOTT_WITH_MPI
#include "mpi/session.hpp"
#endif

namespace grayscott::app {

namespace {

// What a run or sweep file holds and what it needs, for `grayscott info FILE`.

// The name of pattern class `c` as /stats/class numbers them; "not classified" for -1.
std::string class_name(std::int64_t c) {
  const bool named = c >= 0 && c < static_cast<std::int64_t>(analysis::pattern_class_names.size());
  return named ? std::string(analysis::pattern_class_names[static_cast<std::size_t>(c)])
               : "not classified";
}

// What a file measures (a run's or a sweep's /stats): its --until-steady criterion (and
// `settled`, a sweep's members settled) and its histogram, of `which` images. False where it
// measures nothing.
bool describe_measures(const io::RunFileReader& file, const char* which,
                       const std::string& settled = {}) {
  if (file.has_attribute("until_steady")) {
    std::printf("until steady: change of v per step below %.10g for %lld images%s\n",
                file.attribute_double("until_steady"),
                static_cast<long long>(file.attribute_int64("steady_images")), settled.c_str());
  }
  if (!file.has_attribute("stats_histogram_bins")) return false;
  const std::vector<double> range = file.attribute_doubles("stats_histogram_range");
  std::printf("statistics: %s (/stats), histogram of v in %lld bins over [%.10g, %.10g]\n", which,
              static_cast<long long>(file.attribute_int64("stats_histogram_bins")), range.at(0),
              range.at(1));
  return true;
}

// What a run file's /stats say (grayscott run --stats): the settings, and the last image's.
void describe_statistics(const std::string& path, std::int64_t images) {
  const io::RunFileReader file(path);
  if (!describe_measures(file, "every image") || images <= 0) return;
  const auto last = [&](const char* name) {
    const std::vector<double> values = file.read_doubles(std::string("stats/") + name);
    return values.size() >= static_cast<std::size_t>(images)
               ? values[static_cast<std::size_t>(images - 1)]
               : NAN;
  };
  std::printf(
      "last image: v in [%.6g, %.6g], mean %.6g, std %.6g; u in [%.6g, %.6g], mean %.6g; "
      "change of v per step %.3g (largest %.3g)\n",
      last("v_min"), last("v_max"), last("v_mean"), last("v_std"), last("u_min"), last("u_max"),
      last("u_mean"), last("change_rms_per_step"), last("change_max"));
  if (file.has_field("stats/class")) {
    const std::vector<std::int64_t> classes = file.read_int64("stats/class");
    if (classes.size() >= static_cast<std::size_t>(images)) {
      std::printf("pattern of the last image: %s (/stats/class)\n",
                  class_name(classes[static_cast<std::size_t>(images - 1)]).c_str());
    }
  }
}

// A sweep's members whose values became non-finite (the sweep warned of them as it ran): how many,
// and the first of them, where /nonfinite_image says.
void describe_nonfinite_members(const std::string& path) {
  const io::RunFileReader file(path);
  if (!file.has_field("nonfinite_image")) return;
  const std::vector<std::int64_t> at = file.read_int64("nonfinite_image");
  const auto first = std::find_if(at.begin(), at.end(), [](std::int64_t i) { return i >= 0; });
  if (first == at.end()) return;
  const auto count = std::count_if(first, at.end(), [](std::int64_t i) { return i >= 0; });
  const auto member = static_cast<std::size_t>(first - at.begin());
  const std::vector<double> feed = file.read_doubles("feed"), kill = file.read_doubles("kill");
  std::string which = "member " + std::to_string(member);
  if (member < feed.size() && member < kill.size())
    which +=
        " (feed " + shortest_text(feed[member]) + ", kill " + shortest_text(kill[member]) + ")";
  std::printf("non-finite: %lld of %zu members, the first %s at image %lld (/nonfinite_image)\n",
              static_cast<long long>(count), at.size(), which.c_str(),
              static_cast<long long>(*first));
}

// What a sweep file's /stats say: the settings, how many members settled, and the classes of
// the members' last images.
void describe_sweep_statistics(const std::string& path, const io::FileReport& r) {
  const io::RunFileReader file(path);
  const auto members = static_cast<std::size_t>(r.members);
  std::string settled;
  if (file.has_attribute("until_steady") && file.has_field("stats/settled_image")) {
    const std::vector<std::int64_t> at = file.read_int64("stats/settled_image");
    const auto count = std::count_if(at.begin(), at.end(), [](std::int64_t i) { return i >= 0; });
    settled = "; " + std::to_string(count) + " of " + std::to_string(at.size()) +
              " members settled (/stats/settled_image)";
  }
  if (!describe_measures(file, "every image of every member", settled)) return;
  if (!file.has_field("stats/class") || r.images_written.size() != members) return;
  // [members, images], row-major: each member's last image written.
  const std::vector<std::int64_t> classes = file.read_int64("stats/class");
  const auto images = static_cast<std::size_t>(r.images_requested);
  std::vector<std::int64_t> counts(analysis::pattern_class_names.size() + 1, 0);  // last: none
  for (std::size_t m = 0; m < members; ++m) {
    const std::int64_t written = r.images_written[m];
    const std::size_t at =
        m * images + static_cast<std::size_t>(std::max<std::int64_t>(written, 1) - 1);
    const std::int64_t c = written > 0 && at < classes.size() ? classes[at] : -1;
    const bool named = c >= 0 && c < static_cast<std::int64_t>(counts.size()) - 1;
    ++counts[named ? static_cast<std::size_t>(c) : counts.size() - 1];
  }
  std::string tally;
  for (std::size_t c = 0; c < counts.size(); ++c) {
    if (counts[c] == 0) continue;
    if (!tally.empty()) tally += ", ";
    const bool none = c + 1 == counts.size();
    tally += class_name(none ? -1 : static_cast<std::int64_t>(c)) + " " + std::to_string(counts[c]);
  }
  std::printf("patterns of the members' last images: %s (/stats/class)\n", tally.c_str());
}

// Where a run file's run started: a generated state (its kind, a noise's seed) or the custom one
// it stores.
void describe_start(const std::string& path) {
  const io::RunFileReader file(path);
  if (!file.has_attribute("init")) return;
  const std::string init = file.attribute_string("init");
  // The values inside the start's shape (the course's programs differ in them).
  std::string inside;
  if (file.has_attribute("init_values")) {
    const std::vector<double> values = file.attribute_doubles("init_values");
    char text[96];
    if (values.size() == 2) {
      std::snprintf(text, sizeof text, ", u %.10g and v %.10g inside", values[0], values[1]);
      inside = text;
    }
  }
  if (init == "custom") {
    std::printf("initial state: custom, as the run was given it (/initial_state)\n");
  } else if (init == "noise" && file.has_attribute("seed")) {
    std::printf("initial state: noise, seed %lld\n",
                static_cast<long long>(file.attribute_int64("seed")));
  } else {
    std::printf("initial state: %s%s\n", init.c_str(), inside.c_str());
  }
}

void describe_file(const std::string& path) {
  const io::FileReport r = io::inspect_file(path);
  const Problem& p = r.problem;
  std::printf("file: %s (a grayscott %s file%s%s)\n", path.c_str(), r.sweep ? "sweep" : "run",
              r.version.empty() ? "" : ", written by grayscott ", r.version.c_str());
  // rows x cols, or a volume's depth x rows x cols (the arrays' order).
  // A fixed boundary's values beyond the grid tell the course's programs apart (1,0 or 0,0).
  const std::string outside =
      p.boundary == Boundary::Fixed ? " (outside u,v = " + to_string(p.outside) + ")" : "";
  std::printf("grid: %s, %s precision, stencil %s, boundary %s%s\n", p.grid.text().c_str(),
              std::string(to_string(p.precision)).c_str(), p.stencil.name().c_str(),
              std::string(to_string(p.boundary)).c_str(), outside.c_str());
  if (r.sweep) {
    std::printf("members: %lld\n", static_cast<long long>(r.members));
    std::printf("rates: du %.10g, dv %.10g, dt %.10g (feed and kill per member)\n", p.params.du,
                p.params.dv, p.params.dt);
  } else {
    std::printf("rates: feed %.10g, kill %.10g, du %.10g, dv %.10g, dt %.10g\n", p.params.feed,
                p.params.kill, p.params.du, p.params.dv, p.params.dt);
  }
  if (r.sweep) {
    // Each member counts its own images.
    const auto members_complete =
        std::count(r.images_written.begin(), r.images_written.end(), r.images_requested);
    std::printf("images: %lld per member, %lld steps each; fields %s\n",
                static_cast<long long>(r.images_requested),
                static_cast<long long>(r.steps_per_image), r.fields.c_str());
    std::printf("complete: %lld of %lld images; %lld of %lld members complete\n",
                static_cast<long long>(r.complete_images()),
                static_cast<long long>(r.members * r.images_requested),
                static_cast<long long>(members_complete), static_cast<long long>(r.members));
  } else {
    std::printf("images: %lld of %lld, %lld steps each; fields %s\n",
                static_cast<long long>(r.images), static_cast<long long>(r.images_requested),
                static_cast<long long>(r.steps_per_image), r.fields.c_str());
  }
  if (!r.sweep) describe_start(path);
  std::printf("status: %s\n", r.status.c_str());
  if (!r.sweep) describe_statistics(path, r.images);
  if (r.sweep) describe_nonfinite_members(path);
  if (r.sweep) describe_sweep_statistics(path, r);
  const bool members_differ = r.sweep && r.least_checkpoint_images != r.checkpoint_images;
  std::printf("checkpoint: %s\n",
              members_differ ? ("after images " + std::to_string(r.least_checkpoint_images) +
                                " to " + std::to_string(r.checkpoint_images) + " (per member)")
                                   .c_str()
              : r.checkpoint_images > 0
                  ? ("after image " + std::to_string(r.checkpoint_images)).c_str()
                  : "none (continues from the initial state)");
  std::string state;
  if (r.live_writer != 0) {
    // Parallel HDF5 has no SWMR (and marks no file): a run over MPI ranks is read once it ends.
    state = "being written by process " + std::to_string(r.live_writer) +
            (r.marked_open ? " (h5py reads it with swmr=True)" : " (read it once it has ended)");
  } else if (r.needs_repair()) {
    // HDF5's mark of a file open for writing is what readers refuse: a file written over MPI
    // ranks has none (parallel HDF5 sets no such mark), only its status says it never ended.
    state = r.marked_open           ? "needs repair: its writer was killed (h5py refuses it "
                                      "without swmr=True)"
            : r.status == "running" ? "needs repair: its writer was killed (its status still "
                                      "says running)"
                                    : "needs repair: /v holds more images than /step counts "
                                      "(xarray refuses it)";
    state += "; run grayscott repair " + path;
  } else if (r.status == "complete") {
    state = "complete";
  } else if (pipeline::run_diverged(r.status)) {
    state = "diverged: its parameters make it non-finite (a new run with a smaller dt)";
  } else if (pipeline::run_is_finished(r.status)) {
    state = "settled: ended as asked";
  } else {
    state = "readable";
  }
  const bool resumable = r.live_writer == 0 && !pipeline::run_is_finished(r.status);
  if (resumable) {
    state += std::string(state.empty() ? "" : "; ") + "continue it with grayscott " +
             (r.sweep ? "sweep" : "run") + " --resume " + path;
  }
  std::printf("state: %s\n", state.c_str());
}

}  // namespace

void add_info_command(CLI::App& root) {
  CLI::App* info = root.add_subcommand(
      "info", "Show the backends, devices and libraries this build can use, or what FILE holds");
  auto file = std::make_shared<std::string>();
  CLI::Option* file_option =
      info->add_option("file", *file, "a run or sweep file: its parameters, images, status, state");
  info->callback([file, file_option] {
    // `info ""` (a script's empty variable) asks about a file, not about the build.
    if (file->empty() && file_option->count() > 0)
      throw InvalidInput("info: the file name is empty");
    if (!file->empty()) {
      // Under mpirun or srun the ranks would each print it: rank 0 speaks for them. (What the
      // build can use is each node's own: every rank says it.)
      if (!secondary_mpi_process()) describe_file(*file);
      return;
    }
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
