#include "io/files/durability.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/statistics.hpp"
#include "io/files/hdf5.hpp"
#include "io/files/output_path.hpp"

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

void rethrow_naming_a_full_disk(const std::filesystem::path& file) {
  const std::exception_ptr failure = std::current_exception();
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.find("MPI_ERR_IO") != std::string::npos && !out_of_space(e)) {
      struct statvfs disk {};
      const std::filesystem::path folder = folder_of(file);
      // Less room than an image's write may need: why the write failed, as far as one can tell.
      constexpr std::uint64_t little_room = 64 << 20;
      if (::statvfs(folder.c_str(), &disk) == 0) {
        const std::uint64_t room = std::uint64_t{disk.f_bavail} * disk.f_frsize;
        if (room < little_room) {
          throw std::runtime_error(what + " (No space left on device: " + format_bytes(room) +
                                   " free)");
        }
      }
    }
  } catch (...) {
  }
  std::rethrow_exception(failure);
}

std::optional<ByteRange> chunk_room(hid_t dataset) {
  h5::Id space(H5Dget_space(dataset), H5Sclose, "get a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> origin(static_cast<std::size_t>(rank), 0);
  unsigned filters = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t bytes = 0;
  if (H5Dget_chunk_info_by_coord(dataset, origin.data(), &filters, &address, &bytes) < 0 ||
      address == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  std::vector<hsize_t> dims(origin.size()), max_dims(dims.size()), chunk(dims.size());
  H5Sget_simple_extent_dims(space, dims.data(), max_dims.data());
  h5::Id props(H5Dget_create_plist(dataset), H5Pclose, "read dataset properties");
  if (H5Pget_chunk(props, rank, chunk.data()) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  std::uint64_t chunks = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const hsize_t extent = max_dims[k] == H5S_UNLIMITED ? dims[k] : max_dims[k];
    chunks *= (extent + chunk[k] - 1) / chunk[k];
  }
  return ByteRange{address, address + chunks * bytes};
}

void reserve_metadata_blocks(hid_t file, std::vector<ByteRange> rooms,
                             const std::optional<std::filesystem::path>& shared_path) {
  int fd = -1;
  std::uint64_t end = 0;
  struct Descriptor {
    int fd = -1;
    ~Descriptor() {
      if (fd >= 0) ::close(fd);
    }
  } own;
  if (!shared_path) {
    void* handle = nullptr;
    haddr_t eoa = 0;
    if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || handle == nullptr ||
        H5Fget_eoa(file, &eoa) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return;
    }
    fd = *static_cast<int*>(handle);
    end = eoa;
  } else {
    own.fd = fd = ::open(shared_path->c_str(), O_WRONLY | O_CLOEXEC);
    struct stat status {};
    if (fd < 0 || ::fstat(fd, &status) != 0) return;
    end = static_cast<std::uint64_t>(status.st_size);
  }
  std::sort(rooms.begin(), rooms.end());
  std::uint64_t from = 0;
  const auto allocate = [&](std::uint64_t begin, std::uint64_t finish) {
    if (finish > begin) {
      ::posix_fallocate(fd, static_cast<off_t>(begin), static_cast<off_t>(finish - begin));
    }
  };
  for (const auto& [begin, finish] : rooms) {
    allocate(from, std::min<std::uint64_t>(begin, end));
    from = std::max(from, finish);
  }
  allocate(from, end);
#ifdef FALLOC_FL_KEEP_SIZE
  // And blocks past the end for what HDF5 may add there (a new heap for a longer status), beyond
  // the file's size, which stays as it is.
  ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(end), metadata_room_past_end);
#endif
}

double bytes_of_an_image(double bytes) {
  return bytes >= h5::aligned_from ? bytes + static_cast<double>(h5::alignment) : bytes;
}

double images_in_whole_chunks(double images) {
  return images <= 1024 ? images : std::ceil(images / 1024) * 1024;  // one chunk of them all
}

double bytes_beside_an_image(const AnalysisAttributes& analysis) {
  double bytes = 2 * 8 + 2 * 700;  // its step and time; its XDMF entry, twice
  if (analysis.statistics) {
    bytes += 8.0 * static_cast<double>(std::size(analysis::statistics_names) +
                                       static_cast<std::size_t>(analysis.statistics->bins));
    if (analysis.classify) bytes += 8.0 * (std::size(analysis::classification_names) + 1);
  }
  return bytes;
}

}  // namespace grayscott::io
