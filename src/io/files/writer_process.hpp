// Which process writes a run or sweep file: the root attributes writer_pid and writer_host, so
// that `grayscott repair` and `info` tell a file being written from one whose writer was killed.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include "io/files/reader.hpp"  // FileIdentity

namespace grayscott::io {

// This process's mark on a file it writes, from just after record_writer (or
// record_shared_writers) until the mark is destroyed or cleared (the file closed, or its writer
// given up): live_writer() then answers this process's own pid for that file, so that a run
// started while it is written (from a Python on_image callback, or another thread) is refused it
// as it would be in another process.
class WritingHere {
 public:
  WritingHere() = default;
  explicit WritingHere(hid_t file);
  WritingHere(WritingHere&& other) noexcept;
  WritingHere& operator=(WritingHere&& other) noexcept;
  ~WritingHere();

 private:
  FileIdentity identity_;
};

// This process, as the file's one writer: writer_pid, writer_host, and writer_process (this boot
// of the machine and the moment the process started, so that another process given the same pid
// later is not taken for it). Before SWMR writing starts (the attributes are created then); a
// continued file's are written over. The writer keeps the mark returned while it writes.
[[nodiscard]] WritingHere record_writer(hid_t root);

// Over MPI ranks (`file_access` the file's MPI-IO access properties): rank 0, which ends with
// the others (mpiexec ends every rank when one is killed), recorded by every rank alike (writing
// attributes is collective).
[[nodiscard]] WritingHere record_shared_writers(hid_t root, hid_t file_access);

// No process writes the file any more (a clean close, a repair): pid 0, no host, so that two
// finished files hold the same attributes. Nothing where none was recorded (an earlier version's
// file).
void record_no_writer(hid_t root);

// The pid recorded by the process writing the file (an MPI run's rank 0), when that very process
// is alive on this machine and, where it is this process, still writes the file (WritingHere);
// 0 otherwise (closed, another machine's, this process's own file read or repaired after its
// writer ended, a process that took the writer's pid after it ended, or a file of an earlier
// version).
std::int64_t live_writer(const RunFileReader& file);

// live_writer() of the run or sweep file at `path`. A process that writes the file may be
// rewriting the attributes read here (HDF5 then reads a length beyond the file's end), so a read
// that fails is made again a little later, five times in all, before its error is taken for the
// file's own (a damaged file). Throws at once where nothing transient is in the way: InvalidInput
// where `path` is not a run or sweep file, and HDF5's refusal of its lock (lock_refused: a writer
// that does not share the file holds it open).
std::int64_t live_writer_of(const std::filesystem::path& path);

// Whether `e` is HDF5's refusal of a file's lock: another open of it, in another program or
// through another HDF5 library in this one.
bool lock_refused(const std::exception& e);

// Why `path` cannot be acted on (`action`: "replace", "continue") while HDF5's lock on it is
// refused: "... is open for writing elsewhere (...): replace it once that has ended".
std::string why_open_elsewhere(const std::filesystem::path& path, std::string_view action);

// Throws InvalidInput ("... is being written by process N on this machine: <action> it once that
// process has ended") when `pid` (live_writer's answer) is not 0: two writers would corrupt it.
void refuse_if_being_written(const std::filesystem::path& path, std::int64_t pid,
                             std::string_view action);

// Before a file whose state was read (from the file `read` names) is continued: "" where `path`
// still names that file and no live process writes it, else why it cannot be continued (a run
// given its name with --force replaced it, another --resume of it writes it). Made under the
// folder's lock (FolderLock) that the continuing process holds until it has recorded itself as
// the writer, so that two such checks, or one and a claim of the name, do not overlap.
std::string why_not_continued(const std::filesystem::path& path, const FileIdentity& read);
// Throws InvalidInput where `path` no longer names the file `read` (see why_not_continued): before
// a continued file's checkpoint is read by its name.
void refuse_if_replaced(const std::filesystem::path& path, const FileIdentity& read);
// Before a continued file is opened for writing, under the folder's lock: refuses (InvalidInput)
// as why_not_continued says, asked by the process that `checks` (over MPI ranks, `file_access`
// their MPI-IO access: rank 0, the others agreeing, so that every rank refuses before any opens
// the file).
void refuse_to_continue_unless_agreed(const std::filesystem::path& path, const FileIdentity& read,
                                      bool checks, hid_t file_access);

}  // namespace grayscott::io
