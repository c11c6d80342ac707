#include "io/files/writer_process.hpp"

#include <signal.h>
#include <unistd.h>
#ifdef GRAYSCOTT_WITH_MPI
#include <mpi.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

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

// Process `pid` beyond its number, which another process takes once it has ended (after a
// reboot, or in another container's PID namespace): this boot of the machine and the moment the
// process started in it (/proc/PID/stat's starttime, clock ticks since boot). "" where /proc does
// not tell.
std::string process_identity(std::int64_t pid) {
  std::ifstream boot_file("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(boot_file, boot);
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t name_end = text.rfind(')');
  if (boot.empty() || name_end == std::string::npos) return {};
  // The fields after the parenthesised name start at the third, the state: starttime is the 22nd.
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  for (int k = 3; k <= 22 && fields >> field; ++k) {
    if (k == 22) return boot + "/" + field;
  }
  return {};
}

// The files this process writes now (WritingHere), by identity: the name a file is written under
// changes when it takes its output name.
std::mutex writing_here_mutex;
std::multiset<std::pair<std::uint64_t, std::uint64_t>> writing_here_files;

std::pair<std::uint64_t, std::uint64_t> key(const FileIdentity& identity) {
  return {identity.device, identity.inode};
}

bool writing_here(const FileIdentity& identity) {
  const std::lock_guard lock(writing_here_mutex);
  return identity != FileIdentity{} && writing_here_files.count(key(identity)) > 0;
}

struct Writer {
  std::int64_t pid = 0;
  std::string host, identity;
};

void record(hid_t root, const Writer& writer) {
  if (H5Aexists(root, "writer_pid") > 0) {
    h5::Id attr(H5Aopen(root, "writer_pid", H5P_DEFAULT), H5Aclose, "open attribute writer_pid");
    h5::check(H5Awrite(attr, H5T_NATIVE_INT64, &writer.pid), "write attribute writer_pid");
  } else {
    h5::write_attribute(root, "writer_pid", writer.pid);
  }
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string&>{"writer_host", writer.host},
        {"writer_process", writer.identity}}) {
    if (H5Aexists(root, name) > 0) {
      h5::rewrite_string_attribute(root, name, value);
    } else {
      h5::write_attribute(root, name, value);
    }
  }
}

}  // namespace

std::int64_t live_writer(const RunFileReader& file) {
  if (!file.has_attribute("writer_pid") || !file.has_attribute("writer_host")) return 0;
  const std::int64_t pid = file.attribute_int64("writer_pid");
  if (pid <= 0 || file.attribute_string("writer_host") != this_host()) return 0;  // 0: closed
  if (pid == ::getpid()) return writing_here(file.identity()) ? pid : 0;
  const bool exists = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  if (!exists || zombie(pid)) return 0;
  // Another process with the writer's number (a file of an earlier grayscott records none).
  if (file.has_attribute("writer_process")) {
    const std::string recorded = file.attribute_string("writer_process");
    const std::string now = process_identity(pid);
    if (!recorded.empty() && !now.empty() && recorded != now) return 0;
  }
  return pid;
}

WritingHere::WritingHere(hid_t file) {
  const ssize_t length = H5Fget_name(file, nullptr, 0);
  if (length <= 0) return;
  std::string name(static_cast<std::size_t>(length), '\0');
  H5Fget_name(file, name.data(), name.size() + 1);
  identity_ = identity_of(name);
  if (identity_ == FileIdentity{}) return;
  const std::lock_guard lock(writing_here_mutex);
  writing_here_files.insert(key(identity_));
}

WritingHere::WritingHere(WritingHere&& other) noexcept
    : identity_(std::exchange(other.identity_, FileIdentity{})) {}

WritingHere& WritingHere::operator=(WritingHere&& other) noexcept {
  if (this != &other) {
    WritingHere gone(std::move(*this));
    identity_ = std::exchange(other.identity_, FileIdentity{});
  }
  return *this;
}

WritingHere::~WritingHere() {
  if (identity_ == FileIdentity{}) return;
  const std::lock_guard lock(writing_here_mutex);
  if (const auto mark = writing_here_files.find(key(identity_)); mark != writing_here_files.end())
    writing_here_files.erase(mark);
}

namespace {
// Why `path` cannot be acted on while process `pid` (live_writer's answer) writes it; "" for 0.
std::string why_being_written(const std::filesystem::path& path, std::int64_t pid,
                              std::string_view action) {
  if (pid == 0) return {};
  if (pid == ::getpid()) {
    return path.string() + " is being written by this process, by a run or sweep still under way " +
           "in it (one whose on_image callback this is, or another thread's): " +
           std::string(action) + " it once that one has ended";
  }
  return path.string() + " is being written by process " + std::to_string(pid) +
         " on this machine: " + std::string(action) + " it once that process has ended";
}
}  // namespace

void refuse_if_being_written(const std::filesystem::path& path, std::int64_t pid,
                             std::string_view action) {
  if (std::string why = why_being_written(path, pid, action); !why.empty()) throw InvalidInput(why);
}

namespace {
std::string why_replaced(const std::filesystem::path& path, const FileIdentity& read) {
  if (read == FileIdentity{} || identity_of(path) == read) return {};
  return path.string() + " was replaced since it was read (a run given its name with --force " +
         "took it): nothing of it to continue";
}
}  // namespace

void refuse_if_replaced(const std::filesystem::path& path, const FileIdentity& read) {
  if (std::string why = why_replaced(path, read); !why.empty()) throw InvalidInput(why);
}

std::int64_t live_writer_of(const std::filesystem::path& path) {
  for (int attempt = 1;; ++attempt) {
    try {
      return live_writer(RunFileReader(path));
    } catch (const InvalidInput&) {
      throw;  // not a run file: nothing transient about it
    } catch (const std::exception& e) {
      if (attempt == 5 || lock_refused(e)) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
    }
  }
}

bool lock_refused(const std::exception& e) {
  return std::string_view(e.what()).find(std::strerror(EWOULDBLOCK)) != std::string_view::npos;
}

std::string why_open_elsewhere(const std::filesystem::path& path, std::string_view action) {
  return path.string() +
         " is open for writing elsewhere (another grayscott starting on it, or another "
         "program): " +
         std::string(action) + " it once that has ended";
}

std::string why_not_continued(const std::filesystem::path& path, const FileIdentity& read) {
  if (std::string why = why_replaced(path, read); !why.empty()) return why;
  try {
    return why_being_written(path, live_writer_of(path), "continue");
  } catch (const InvalidInput&) {
    throw;
  } catch (const std::exception& e) {
    if (lock_refused(e)) return why_open_elsewhere(path, "continue");
    throw;
  }
}

void refuse_to_continue_unless_agreed(const std::filesystem::path& path, const FileIdentity& read,
                                      bool checks, hid_t file_access) {
  const bool shared = file_access != H5P_DEFAULT;
  std::string refusal;
  if (checks) {
    if (!shared) {
      refusal = why_not_continued(path, read);
    } else {
      try {  // a throw on one rank alone would leave the others waiting for it
        refusal = why_not_continued(path, read);
      } catch (const std::exception& e) {
        refusal = e.what();
      }
    }
  }
  const bool refused =
      shared ? h5::WriteAgreement(file_access).any(!refusal.empty()) : !refusal.empty();
  if (refused) {
    throw InvalidInput(refusal.empty() ? path.string() + " cannot be continued (see rank 0)"
                                       : refusal);
  }
}

WritingHere record_writer(hid_t root) {
  const std::int64_t pid = ::getpid();
  record(root, {pid, this_host(), process_identity(pid)});
  return WritingHere(root);
}

WritingHere record_shared_writers(hid_t root, [[maybe_unused]] hid_t file_access) {
  Writer writer;
#ifdef GRAYSCOTT_WITH_MPI
  // Rank 0's, the same on every rank (writing attributes is collective).
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  h5::check(H5Pget_fapl_mpio(file_access, &comm, &info), "read the file's MPI communicator");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) writer = {::getpid(), this_host(), process_identity(::getpid())};
  std::int64_t pid = writer.pid;
  MPI_Bcast(&pid, 1, MPI_INT64_T, 0, comm);
  writer.pid = pid;
  for (std::string* text : {&writer.host, &writer.identity}) {
    int size = static_cast<int>(text->size());
    MPI_Bcast(&size, 1, MPI_INT, 0, comm);
    text->resize(static_cast<std::size_t>(size));
    MPI_Bcast(text->data(), size, MPI_CHAR, 0, comm);
  }
  MPI_Comm_free(&comm);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
#endif
  record(root, writer);
  return WritingHere(root);
}

void record_no_writer(hid_t root) {
  if (H5Aexists(root, "writer_pid") <= 0) return;
  const std::int64_t none = 0;
  h5::Id attr(H5Aopen(root, "writer_pid", H5P_DEFAULT), H5Aclose, "open attribute writer_pid");
  h5::check(H5Awrite(attr, H5T_NATIVE_INT64, &none), "write attribute writer_pid");
  if (H5Aexists(root, "writer_host") > 0) h5::rewrite_string_attribute(root, "writer_host", "");
  if (H5Aexists(root, "writer_process") > 0)
    h5::rewrite_string_attribute(root, "writer_process", "");
}

}  // namespace grayscott::io
