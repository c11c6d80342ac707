#include "io/files/writer_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "io/files/hdf5.hpp"
#include "io/files/reader.hpp"
#include "model/model.hpp"  // InvalidInput

namespace grayscott::io {

namespace {

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Whether process `pid` has ended but its parent has not yet reaped it (state Z in
// /proc/PID/stat, after the parenthesised name): a killed writer that holds nothing open.
bool zombie(std::int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t name_end = text.rfind(')');
  return name_end != std::string::npos && name_end + 2 < text.size() && text[name_end + 2] == 'Z';
}

}  // namespace

std::int64_t live_writer(const RunFileReader& file) {
  if (!file.has_attribute("writer_pid") || !file.has_attribute("writer_host")) return 0;
  const std::int64_t pid = file.attribute_int64("writer_pid");
  if (pid <= 0 || file.attribute_string("writer_host") != this_host()) return 0;  // 0: closed
  if (pid == ::getpid()) return 0;  // this very process repairs or inspects its own file
  const bool exists = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  return exists && !zombie(pid) ? pid : 0;
}

void refuse_if_being_written(const std::filesystem::path& path, std::int64_t pid,
                             std::string_view action) {
  if (pid == 0) return;
  throw InvalidInput(path.string() + " is being written by process " + std::to_string(pid) +
                     " on this machine: " + std::string(action) +
                     " it once that process has ended");
}

void record_writer(hid_t root) {
  const std::string host = this_host();
  const std::int64_t pid = ::getpid();
  if (H5Aexists(root, "writer_pid") > 0) {
    h5::Id attr(H5Aopen(root, "writer_pid", H5P_DEFAULT), H5Aclose, "open attribute writer_pid");
    h5::check(H5Awrite(attr, H5T_NATIVE_INT64, &pid), "write attribute writer_pid");
  } else {
    h5::write_attribute(root, "writer_pid", pid);
  }
  if (H5Aexists(root, "writer_host") > 0) {
    h5::rewrite_string_attribute(root, "writer_host", host);
  } else {
    h5::write_attribute(root, "writer_host", host);
  }
}

void record_shared_writers(hid_t root) {
  h5::write_attribute(root, "writer_pid", std::int64_t{0});
  h5::write_attribute(root, "writer_host", std::string());
}

void record_no_writer(hid_t root) {
  if (H5Aexists(root, "writer_pid") <= 0) return;
  const std::int64_t none = 0;
  h5::Id attr(H5Aopen(root, "writer_pid", H5P_DEFAULT), H5Aclose, "open attribute writer_pid");
  h5::check(H5Awrite(attr, H5T_NATIVE_INT64, &none), "write attribute writer_pid");
  if (H5Aexists(root, "writer_host") > 0) h5::rewrite_string_attribute(root, "writer_host", "");
}

}  // namespace grayscott::io
