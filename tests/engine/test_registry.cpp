// The backend registry: what it lists, how `auto` chooses, and the limits it knows of a backend
// that cannot run here (CUDA's launch limits are plain host code).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/registry.hpp"

using namespace grayscott;

namespace {

// A backend that answers as told, so that the choice can be tested without a device.
class FakeBackend final : public Backend {
 public:
  FakeBackend(std::string name, int preference, bool available, std::size_t max_members)
      : name_(std::move(name)),
        preference_(preference),
        available_(available),
        max_members_(max_members) {}
  std::string_view name() const override { return name_; }
  int preference() const override { return preference_; }
  bool on_device() const override { return preference_ > 0; }
  int device_count() const override { return available_ ? 1 : 0; }
  bool available(int, std::string* why) const override {
    if (!available_ && why) *why = name_ + " is not here";
    return available_;
  }
  std::vector<std::string> describe() const override { return {}; }
  std::uint64_t free_memory(int) const override { return 0; }
  std::string refuses(const Problem&, std::size_t members) const override {
    return members > max_members_
               ? name_ + " takes at most " + std::to_string(max_members_) + " members"
               : std::string();
  }
  std::string refuses_blocks(const Problem&) const override { return {}; }
  std::size_t members_per_engine(const Problem&) const override { return max_members_; }
  int default_fuse_steps(const Grid&, Precision, int, std::size_t) const override { return 0; }
  int default_halo_depth(const Grid&, Precision, int) const override { return 1; }
  CopyBandwidth copy_bandwidth(const EngineOptions&) const override { return {}; }
  ArithmeticPeak arithmetic_peak(const EngineOptions&, Precision) const override { return {}; }
  std::string_view mpi_device_memory() const override { return {}; }
  std::unique_ptr<Engine<float>> make_engine(std::type_identity<float>, const Problem&,
                                             std::span<const Parameters>,
                                             const EngineOptions&) const override {
    return nullptr;
  }
  std::unique_ptr<Engine<double>> make_engine(std::type_identity<double>, const Problem&,
                                              std::span<const Parameters>,
                                              const EngineOptions&) const override {
    return nullptr;
  }
  std::unique_ptr<SubdomainStepper<float>> make_subdomain(std::type_identity<float>, const Problem&,
                                                          const LocalLayout&, GlobalEdges,
                                                          const SubdomainOptions&) const override {
    return nullptr;
  }
  std::unique_ptr<SubdomainStepper<double>> make_subdomain(std::type_identity<double>,
                                                           const Problem&, const LocalLayout&,
                                                           GlobalEdges,
                                                           const SubdomainOptions&) const override {
    return nullptr;
  }

 private:
  std::string name_;
  int preference_;
  bool available_;
  std::size_t max_members_;
};

Problem small_problem() {
  Problem problem;
  problem.grid = {16, 16};
  return problem;
}

EngineOptions asking_for(const std::string& backend) {
  EngineOptions options;
  options.backend = backend;
  return options;
}

}  // namespace

TEST(Registry, ListsEachBackendOnceInRegistrationOrder) {
  std::vector<std::string> names;
  for (const Backend* b : registered_backends()) names.emplace_back(b->name());
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(backend_choices(), "auto, cpu or cuda");
  // auto tries the device first, the CPU last.
  EXPECT_EQ(preferred_backends().front()->name(), "cuda");
  EXPECT_EQ(preferred_backends().back()->name(), "cpu");
}

// Blocks of a grid split over MPI ranks: both backends make a plane's and a volume's; CUDA
// refuses only what its int indices cannot reach, answered without a device.
TEST(Registry, BothBackendsSplitPlanesAndVolumesOverRanks) {
  Problem plane;
  plane.grid = Grid{16, 24};
  Problem volume;
  volume.grid = Grid{16, 24, 8};
  volume.stencil = Stencil::seven_point();
  for (const char* name : {"cpu", "cuda"}) {
    EXPECT_EQ(find_backend(name).refuses_blocks(plane), "") << name;
    EXPECT_EQ(find_backend(name).refuses_blocks(volume), "") << name;
  }
  Problem too_deep = volume;
  too_deep.grid.depth = std::int64_t{1} << 31;
  const std::string refusal = find_backend("cuda").refuses_blocks(too_deep);
  EXPECT_NE(refusal.find("the CUDA backend takes at most"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("planes"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find('\n'), std::string::npos);
  EXPECT_EQ(find_backend("cpu").refuses_blocks(too_deep), "");
}

TEST(Registry, AnUnknownNameIsRefusedWithTheChoices) {
  try {
    find_backend("hip");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()), "backend: expected auto, cpu or cuda, got 'hip'");
  }
  EXPECT_NO_THROW(check_backend_name("auto"));
  EXPECT_NO_THROW(check_backend_name("cpu"));
  EXPECT_THROW(check_backend_name("CPU"), InvalidInput);
  EXPECT_THROW(make_engine<float>(small_problem(), std::vector<Parameters>(1), asking_for("gpu")),
               InvalidInput);
}

TEST(Registry, AutoTakesTheCpuWhenNoDeviceIsUsable) {
  std::string why;
  if (find_backend("cuda").available(0, &why)) GTEST_SKIP() << "a CUDA device is usable here";
  const BackendChoice choice = choose_backend(asking_for("auto"), small_problem(), 1);
  EXPECT_EQ(choice.backend->name(), "cpu");
  EXPECT_EQ(choice.notice, "");  // an unavailable backend is passed over silently
  auto engine = make_engine<float>(small_problem(), std::vector<Parameters>(1), asking_for("auto"));
  EXPECT_EQ(engine->backend(), "cpu");
}

TEST(Registry, AutoPassesOverABackendThatRefusesTheRequestAndSaysWhy) {
  const FakeBackend device("device", 100, true, 4), host("host", 0, true, SIZE_MAX);
  const Backend* candidates[] = {&device, &host};
  const BackendChoice fits = choose_backend(candidates, asking_for("auto"), small_problem(), 4);
  EXPECT_EQ(fits.backend, &device);
  EXPECT_EQ(fits.notice, "");
  const BackendChoice large = choose_backend(candidates, asking_for("auto"), small_problem(), 5);
  EXPECT_EQ(large.backend, &host);
  EXPECT_EQ(large.notice, "device takes at most 4 members; running on the host backend instead");
}

TEST(Registry, ANamedBackendMustBeAvailableAndTakeTheRequest) {
  const FakeBackend absent("device", 100, false, 4), host("host", 0, true, SIZE_MAX);
  const Backend* candidates[] = {&absent, &host};
  EXPECT_EQ(choose_backend(candidates, asking_for("auto"), small_problem(), 1).backend, &host);
  try {
    choose_backend(candidates, asking_for("device"), small_problem(), 1);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "--backend device: device is not here");
  }
  const FakeBackend small("device", 100, true, 4);
  const Backend* present[] = {&small, &host};
  EXPECT_THROW(choose_backend(present, asking_for("device"), small_problem(), 5), InvalidInput);
}

TEST(Registry, ADeviceTheMachineHasNotGotIsTheRequestsMistake) {
  // Found on an H200: `--device 4` on a one-GPU machine was a runtime error (exit 1, RuntimeError
  // in Python), not the input error that names the option.
  const FakeBackend one_gpu("accelerator", 100, true, 4), host("host", 0, true, SIZE_MAX);
  const Backend* candidates[] = {&one_gpu, &host};
  for (int device : {1, 4, -1}) {
    EngineOptions options = asking_for("accelerator");
    options.device = device;
    try {
      choose_backend(candidates, options, small_problem(), 1);
      FAIL() << "device " << device << " must be refused";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(std::string(e.what()),
                "--device " + std::to_string(device) +
                    ": no such accelerator device (1 found, numbered from 0)");
    }
  }
  EngineOptions first = asking_for("accelerator");
  first.device = 0;
  EXPECT_EQ(choose_backend(candidates, first, small_problem(), 1).backend, &one_gpu);
}

TEST(Registry, CudaLaunchLimitsAreKnownWithoutAGpu) {
  const Backend& cuda = find_backend("cuda");
  Problem problem = small_problem();
  EXPECT_EQ(cuda.refuses(problem, 65535), "");
  EXPECT_EQ(cuda.refuses(problem, 65536),
            "the CUDA backend runs at most 65535 members at once, not 65536");
  EXPECT_EQ(cuda.members_per_engine(problem), 65535u);
  problem.grid = {65535 * 8, 16};
  EXPECT_EQ(cuda.refuses(problem, 1), "");
  problem.grid = {65535 * 8 + 1, 16};
  EXPECT_EQ(cuda.refuses(problem, 1), "the CUDA backend takes at most 524280 rows");
  // More than 2^31 cells in a member: the offsets are 64-bit, only the memory limits it.
  problem.grid = {65536, 65536};
  EXPECT_EQ(cuda.refuses(problem, 1), "");
  // A column index near INT_MAX would overflow the kernels' int arithmetic: bounded.
  problem.grid = {8, cuda::max_cols};
  EXPECT_EQ(cuda.refuses(problem, 1), "");
  problem.grid = {8, cuda::max_cols + 1};
  EXPECT_EQ(cuda.refuses(problem, 1),
            "the CUDA backend takes at most " + std::to_string(cuda::max_cols) + " columns");
  // The CPU takes any shape.
  EXPECT_EQ(find_backend("cpu").refuses(problem, 1'000'000), "");
}

TEST(Registry, OnlyTheCudaBackendSteersHalosThroughDeviceMemory) {
  EXPECT_EQ(find_backend("cuda").mpi_device_memory(), "cuda");
  EXPECT_EQ(find_backend("cpu").mpi_device_memory(), "");
  EXPECT_FALSE(find_backend("cpu").on_device());
  EXPECT_TRUE(find_backend("cuda").on_device());
  EXPECT_EQ(find_backend("cpu").default_halo_depth({1, 1}, Precision::Single, 1), 1);
}
