// Claiming an output name safely: checked before any computing, the new file made under a
// temporary name beside it and moved into place only once it is whole, never replacing what is
// not a regular file. Run files, sweep files and videos are all made so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace grayscott::io {

// "1.5 GiB": sizes in the free-space messages.
std::string format_bytes(std::uint64_t bytes);

// Checks, before any computing, that `path` may be written: a file name that is not an XDMF
// companion's, no file there (nor at its companion NAME.xmf) unless `overwrite`, its folder exists
// and is writable, and the disk has room for `bytes`. Throws InvalidInput with a one-line reason.
void check_output_path(const std::filesystem::path& path, bool overwrite, std::uint64_t bytes);

// Why this process cannot create files in `folder` ("Read-only file system", "Permission
// denied"); empty where it can.
std::string why_not_writable(const std::filesystem::path& folder);

// Refuses, with or without --force, an output name where something other than a regular file (or
// a symbolic link, which is replaced, never followed) stands: a device node, a FIFO, a socket or a
// directory is never replaced by a file. `what` names the output in the message ("output").
// Throws InvalidInput.
void check_replaceable(const std::filesystem::path& path, const std::string& what);

// The extension of a file's name, in lower case (".H5": ".h5"), and of a name that is nothing but
// one (".h5", which std::filesystem takes for a hidden file's name without extension) too.
std::string lowercase_extension(const std::filesystem::path& path);
// Whether the name is nothing but an extension: ".h5", ".mp4".
bool only_an_extension(const std::filesystem::path& path);
// Whether the name is an XDMF file's (.xmf or .xdmf, in any case): a run's companion.
bool names_an_xdmf_file(const std::filesystem::path& path);

// What stands at a path, for a message: "a file", "a directory", "a FIFO", "a character device",
// "a block device", "a socket".
const char* special_file_kind(std::filesystem::file_type type);
// Whether the file at `path` is immutable or append-only (chattr +i, +a): a rename over it fails
// (EPERM), even by root, as opening it for writing does, which is how it is asked.
bool refuses_replacement(const std::filesystem::path& path);

// Before a file is opened to be read (rendered, continued, repaired, described): throws
// PathNotFound, PathIsDirectory, or InvalidInput where something other than a regular file
// stands there (a FIFO, whose opening would wait for a writer for ever, a device, a socket).
void check_readable_file(const std::filesystem::path& path);

// The folder that holds `path` ("." for a bare name).
std::filesystem::path folder_of(const std::filesystem::path& path);

// An exclusive lock (flock) on the folder that holds `path_in_it`, while it lives: the claims of
// a name in that folder (take_output_name, a continued file's opening) take turns. None where the
// file system offers none (the claim is then as safe as the checks made within it).
class FolderLock {
 public:
  explicit FolderLock(const std::filesystem::path& path_in_it);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

// Creates an output file safely: `create(name)` makes it under a temporary name beside `path`
// (`partial`), and only then is it moved into place, replacing what is there only when
// `overwrite` (a symbolic link there is replaced, never followed). A file that another process
// holds open at `path` keeps its contents until the new one exists. Throws std::runtime_error.
void move_into_place(const std::filesystem::path& partial, const std::filesystem::path& path,
                     bool overwrite);
// A new run or sweep file takes its name: with `overwrite`, the replaced file's companion removed
// first (remove_companion_of_replaced), then move_into_place. This holds a lock on the folder
// (flock), and with `overwrite` checks once more that no live process writes the file it
// replaces: of two processes given one name with --force at once, the later finds the earlier's
// file being written and is refused, instead of both going on and one writing into a file that
// is gone. Where the file system has no such locks (some NFS and Lustre mounts), only that check,
// made again just before the file is replaced, stands between two such claims.
void take_output_name(const std::filesystem::path& partial, const std::filesystem::path& path,
                      bool overwrite);
// The temporary name move_into_place expects: "NAME.partial-TAG" beside `path`.
std::filesystem::path partial_name(const std::filesystem::path& path, const std::string& tag);
// The temporary files of earlier writers of `path` (NAME.partial-PID, `ours` aside) killed before
// their file took its name: removed once plainly abandoned, their process gone from this machine
// and the file unchanged for a minute. (Over MPI ranks the number is rank 0's, which may be
// another machine's: a claim in progress there changes its file within seconds.) A run's or a
// sweep's claim (take_output_name) and a video call it before writing their own.
void remove_abandoned_partials(const std::filesystem::path& path,
                               const std::filesystem::path& ours);
// The same for each of `paths`, all in one folder, in one pass over it: a rendering's pictures,
// before the first is written (one pass per picture would cost a rendering of thousands of small
// pictures three times its time).
void remove_abandoned_partials(const std::vector<std::filesystem::path>& paths);

}  // namespace grayscott::io
