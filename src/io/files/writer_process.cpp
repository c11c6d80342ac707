#include "io/files/writer_process.hpp"

#include <unistd.h>

#include <cstdint>
#include <string>

#include "io/files/hdf5.hpp"

namespace grayscott::io {

void record_writer(hid_t root) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
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
    h5::write_attribute(root, "writer_host", std::string(host));
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
