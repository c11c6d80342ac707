// A fresh folder for one test's files, under the system's temporary folder.
//
// Named after the process and the test (a parameterised test's "/" made "_", so the folder is one
// level deep and removing it leaves nothing behind), removed when the test passes and kept, with
// its name printed, when it fails, so a failure can be looked at and a passing run leaves no trace.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

namespace grayscott::testing {

class ScratchDir {
 public:
  // `what` starts the folder's name, so a kept folder says which tests made it.
  explicit ScratchDir(const std::string& what) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "grayscott_" + what + "_" + std::to_string(::getpid());
    if (test != nullptr) name += std::string("_") + test->test_suite_name() + "_" + test->name();
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    if (::testing::Test::HasFailure()) {
      std::cerr << "the failed test's files are kept in " << path_.string() << "\n";
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  operator const std::filesystem::path&() const { return path_; }  // NOLINT: reads as a path
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace grayscott::testing
