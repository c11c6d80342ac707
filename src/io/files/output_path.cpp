#include "io/files/output_path.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <set>
#include <system_error>

#include "io/files/writer_process.hpp"
#include "io/files/xdmf.hpp"  // xdmf_path_for: the companion is claimed with its file
#include "model/model.hpp"

namespace grayscott::io {

namespace fs = std::filesystem;

namespace {

void refuse_to_replace_a_live_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return;
  std::int64_t writer = 0;
  try {
    writer = live_writer_of(path);
  } catch (const InvalidInput&) {
    // Not a grayscott file (nor HDF5): nobody of ours writes it.
  } catch (const std::exception& e) {
    if (lock_refused(e)) throw InvalidInput("output " + why_open_elsewhere(path, "replace"));
    // Unreadable however often read (cut short, damaged): replaced, as asked.
  }
  refuse_if_being_written(path, writer, "replace");
}

}  // namespace

std::string lowercase_extension(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::size_t dot = name.rfind('.');
  std::string extension = dot == std::string::npos ? std::string() : name.substr(dot);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

bool only_an_extension(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.size() > 1 && name.rfind('.') == 0;
}

bool names_an_xdmf_file(const fs::path& path) {
  const std::string extension = lowercase_extension(path);
  return extension == ".xmf" || extension == ".xdmf";
}

std::string format_bytes(std::uint64_t bytes) {
  // Sizes are saturated there by whoever computes them: the true figure is larger still.
  if (bytes == UINT64_MAX) return "over 16 EiB";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) value /= 1024.0, ++unit;
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%d B", static_cast<int>(bytes));  // "512 B", not "512.0 B"
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

const char* special_file_kind(fs::file_type type) {
  switch (type) {
    case fs::file_type::regular:
      return "a file";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

bool refuses_replacement(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return false;
  }
  return errno == EPERM;
}

void check_replaceable(const fs::path& path, const std::string& what) {
  std::error_code ec;
  // symlink_status: a link is judged as a link (the rename that puts the new file in place
  // replaces the link itself), except that a link to a directory names a directory.
  const fs::file_status status = fs::symlink_status(path, ec);
  const char* kind = nullptr;
  switch (status.type()) {
    case fs::file_type::not_found:
    case fs::file_type::regular:
      return;
    case fs::file_type::symlink:
      if (fs::is_directory(path, ec)) kind = "a directory";
      if (!kind) return;
      break;
    default:
      if (ec) return;  // cannot be looked at: the creation reports why
      kind = special_file_kind(status.type());
  }
  throw InvalidInput(what + " " + path.string() + " is " + kind +
                     ", not a regular file: never replaced, even with --force");
}

void check_readable_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // a link: what it points to
  if (status.type() == fs::file_type::not_found)
    throw PathNotFound(path.string() + ": no such file");
  if (status.type() == fs::file_type::regular || ec) return;  // a failed look: the open says why
  if (status.type() == fs::file_type::directory)
    throw PathIsDirectory(path.string() + " is a directory, not a file");
  // Opening a FIFO waits for a writer, for ever; a device's bytes are no HDF5 file.
  throw InvalidInput(path.string() + " is " + special_file_kind(status.type()) +
                     ", not a regular file: a run or sweep file is one");
}

void check_output_path(const fs::path& path, bool overwrite, std::uint64_t bytes) {
  // What is wrong with the name itself comes first: --force cannot make a folder a file, nor a
  // device node, a FIFO or a socket.
  if (path.empty()) throw InvalidInput("output: the file name is empty");
  if (const std::string extension = lowercase_extension(path);
      only_an_extension(path) && (extension == ".h5" || extension == ".hdf5")) {
    throw InvalidInput("output " + path.string() +
                       ": the name is all extension (name the file, e.g. -o run.h5)");
  }
  if (path == "-") {
    throw InvalidInput(
        "output: '-' would be a file named '-': an HDF5 file is written to a "
        "named file, not to standard output (name it, e.g. -o run.h5)");
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw PathIsDirectory("output " + path.string() + " is a directory, not a file");
  }
  check_replaceable(path, "output");
  if (names_an_xdmf_file(path)) {
    throw InvalidInput("output " + path.string() +
                       " names an XDMF file: name the HDF5 file (e.g. run.h5); its .xmf "
                       "companion is written beside it");
  }
  // symlink_status: a link there (even a dangling one) is somebody's file too.
  if (fs::exists(fs::symlink_status(path, ec)) && !overwrite) {
    throw PathExists("output " + path.string() + " already exists (use --force to overwrite)");
  }
  // --force replaces a file, not a run in progress: its writer would go on into a file that is
  // gone.
  if (overwrite) refuse_to_replace_a_live_file(path);
  const fs::path xmf = xdmf_path_for(path);
  if (!fs::is_directory(xmf, ec)) check_replaceable(xmf, "output companion");
  // NAME.h5 and NAME.hdf5 have one companion name: replacing it would take another file's.
  if (fs::exists(fs::symlink_status(xmf, ec))) {
    for (const char* extension : {".h5", ".hdf5"}) {
      fs::path sibling = path;
      sibling.replace_extension(extension);
      if (sibling != path && fs::exists(sibling, ec)) {
        throw InvalidInput("output companion " + xmf.string() + " may be " + sibling.string() +
                           "'s (a file of the same name beside it): name the output otherwise, " +
                           "or remove " + xmf.string() + " if it is not");
      }
    }
  }
  if (fs::exists(fs::symlink_status(xmf, ec)) && !overwrite) {
    throw PathExists("output companion " + xmf.string() +
                     " already exists (use --force to overwrite it with the run's)");
  }
  if (fs::is_directory(xmf, ec)) {
    throw PathIsDirectory("output companion " + xmf.string() + " is a directory");
  }
  const fs::path folder = folder_of(path);
  if (!fs::is_directory(folder, ec)) {
    throw PathNotFound("output folder " + folder.string() + " does not exist");
  }
  if (const std::string why = why_not_writable(folder); !why.empty()) {
    throw PathDenied("output folder " + folder.string() + " is not writable (" + why + ")");
  }
  // A name the folder's file system cannot hold (HDF5 would say only that it cannot create it).
  const long longest = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  for (const fs::path& name : {path, xmf}) {
    if (longest > 0 && name.filename().native().size() > static_cast<std::size_t>(longest)) {
      throw InvalidInput("output " + name.string() + ": " + std::strerror(ENAMETOOLONG) +
                         " (at most " + std::to_string(longest) + " bytes a name here)");
    }
  }
  const fs::space_info space = fs::space(folder, ec);
  // The kernel's own file systems (/proc, /sys) hold no files, whatever the space they report
  // (none: "0 B free"). A file system of no set size (ramfs, tmpfs size=0) reports none too, and
  // holds files: the type, not the size, tells them apart.
  if (struct statfs kind{}; ::statfs(folder.c_str(), &kind) == 0) {
    constexpr long proc_magic = 0x9fa0, sysfs_magic = 0x62656572;
    if (kind.f_type == proc_magic || kind.f_type == sysfs_magic) {
      throw InvalidInput("output folder " + folder.string() +
                         " is on a file system that holds no files (such as /proc or /sys)");
    }
  }
  // The new file is created beside the old one before it replaces it: nothing is reclaimed. (A
  // file system of no set size, capacity 0, says nothing of its room.)
  if (!ec && space.capacity > 0 &&
      static_cast<double>(space.available) < 1.01 * static_cast<double>(bytes)) {
    throw InvalidInput("output needs " + format_bytes(bytes) + " but " + folder.string() +
                       " has only " + format_bytes(space.available) + " free");
  }
}

std::string why_not_writable(const fs::path& folder) {
  if (::access(folder.c_str(), W_OK | X_OK) == 0) return {};
  return std::strerror(errno);
}

fs::path folder_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

FolderLock::FolderLock(const fs::path& path_in_it)
    : fd_(::open(folder_of(path_in_it).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (fd_ < 0) return;
  // A claim holds it for milliseconds, a resume while it opens its file for seconds at most (a
  // busy parallel file system). Held for half a minute, it is not one of theirs: `flock DIR
  // command` holds it for the command's whole life, this program's included. The claim then goes
  // on without it, as where the file system offers none.
  for (int attempt = 0;; ++attempt) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK || attempt == 3000) break;
    ::usleep(10'000);
  }
  ::close(fd_);
  fd_ = -1;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

fs::path partial_name(const fs::path& path, const std::string& tag) {
  const std::string suffix = ".partial-" + tag;
  // A name near the file system's limit (255 bytes on most) has room for no suffix: its
  // beginning is used.
  const long limit = ::pathconf(folder_of(path).c_str(), _PC_NAME_MAX);
  const std::size_t longest = limit > 0 ? static_cast<std::size_t>(limit) : 255;
  std::string name = path.filename().string();
  if (name.size() + suffix.size() > longest) name.resize(longest - suffix.size());
  return path.parent_path() / (name + suffix);
}

namespace {

// The entries NAME.partial-PID of `folder` whose NAME `is_target` accepts, `ours` aside, removed
// where remove_abandoned_partials() says.
template <class IsTarget>
void remove_abandoned_in(const fs::path& folder, const IsTarget& is_target, const fs::path& ours) {
  static const std::string marker = ".partial-";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t at = name.rfind(marker);
    if (at == std::string::npos || at == 0 || !is_target(name.substr(0, at))) continue;
    const std::string tag = name.substr(at + marker.size());
    if (tag.empty() || tag.find_first_not_of("0123456789") != std::string::npos || tag.size() > 9)
      continue;
    if (!ours.empty() && it->path().filename() == ours.filename()) continue;
    const auto pid = static_cast<pid_t>(std::stol(tag));
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno == EPERM) continue;  // a process has the number
    std::error_code age_unknown;
    const auto changed = fs::last_write_time(it->path(), age_unknown);
    if (age_unknown || fs::file_time_type::clock::now() - changed < std::chrono::minutes(1))
      continue;
    std::error_code ignored;
    if (it->is_regular_file(ignored)) fs::remove(it->path(), ignored);
  }
}

// Whether partial_name() keeps the whole of `path`'s name (a name near the limit is cut to fit,
// and its temporary files are not told apart from another's).
bool partial_keeps_name(const fs::path& path) {
  return partial_name(path, "").filename().string() == path.filename().string() + ".partial-";
}

}  // namespace

void remove_abandoned_partials(const fs::path& path, const fs::path& ours) {
  if (!partial_keeps_name(path)) return;
  const std::string name = path.filename().string();
  remove_abandoned_in(
      folder_of(path), [&](const std::string& base) { return base == name; }, ours);
}

void remove_abandoned_partials(const std::vector<fs::path>& paths) {
  if (paths.empty()) return;
  std::set<std::string> names;
  for (const fs::path& path : paths) {
    if (partial_keeps_name(path)) names.insert(path.filename().string());
  }
  remove_abandoned_in(folder_of(paths.front()),
                      [&](const std::string& base) { return names.contains(base); }, {});
}

void take_output_name(const fs::path& partial, const fs::path& path, bool overwrite) {
  // Taken without --force too: a claim with --force checks and replaces within the lock, so a
  // file linked into place without it cannot appear between the two.
  const FolderLock lock(path);
  remove_abandoned_partials(path, partial);
  if (!overwrite) {
    move_into_place(partial, path, false);  // a hard link: never replaces what appeared meanwhile
    return;
  }
  refuse_to_replace_a_live_file(path);
  // Before its companion goes: an old file that cannot be replaced keeps it.
  if (refuses_replacement(path)) {
    throw InvalidInput("output " + path.string() + " cannot be replaced (" + std::strerror(EPERM) +
                       "): it and its companion are left as they were");
  }
  remove_companion_of_replaced(path);
  move_into_place(partial, path, true);
}

void move_into_place(const fs::path& partial, const fs::path& path, bool overwrite) {
  if (overwrite) {
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("cannot move " + partial.string() + " to " + path.string() + ": " +
                               std::strerror(errno));
    }
    return;
  }
  // A hard link fails if anything appeared at `path` since the check: never replaced unasked.
  if (::link(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    if (error == EEXIST) {
      // The refusal of an existing output, as check_output_path's (exit 2; FileExistsError).
      throw PathExists("output " + path.string() +
                       " appeared while the run was starting (use --force to overwrite)");
    }
    throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(error));
  }
  ::unlink(partial.c_str());
}

}  // namespace grayscott::io
