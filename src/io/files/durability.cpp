#include "io/files/durability.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace grayscott::io {

void sync_to_disk(hid_t file) {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
    ::fsync(*static_cast<int*>(handle));
  }
}

void start_writeback(hid_t file) {
#ifdef SYNC_FILE_RANGE_WRITE
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
    ::sync_file_range(*static_cast<int*>(handle), 0, 0, SYNC_FILE_RANGE_WRITE);
  }
#else
  (void)file;
#endif
}

bool out_of_space(const std::exception& e) {
  const std::string what = e.what();
  return what.find("No space left on device") != std::string::npos ||
         what.find("Disk quota exceeded") != std::string::npos;
}

}  // namespace grayscott::io
