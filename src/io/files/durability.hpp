// What a file written by one process asks of the disk beyond HDF5's flushes: its bytes out of the
// operating system's cache, written back early, and a full disk told apart from other failures.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "io/files/problem_attributes.hpp"

namespace grayscott::io {

// Writes the raw bytes out of the operating system's cache (a node that loses power keeps the
// checkpoint). Only for a file this process writes alone through the POSIX driver.
void sync_to_disk(hid_t file);

// Asks the operating system to start writing the file's new pages to the disk now, without
// waiting for it: the disk works while the next images are computed, and the checkpoint's fsync
// (at the end of every run) then has little left to wait for (it took 0.17 s of the quick
// workload's 1.2 s when the whole file was left to it). Linux only; elsewhere the fsync does it
// all.
void start_writeback(hid_t file);

// Whether a write failed for want of room (a full disk or an exceeded quota): HDF5 and the direct
// writes say so only in their messages.
bool out_of_space(const std::exception& e);

// Called where a write to `file` failed (inside the catch block): rethrows the failure, its message
// saying "No space left on device" and the room left where the write went through MPI-IO, whose
// error is only "MPI_ERR_IO: input/output error", and the disk holding `file` has (almost) no
// room left. A full disk is then named as it is without MPI.
[[noreturn]] void rethrow_naming_a_full_disk(const std::filesystem::path& file);

// [first byte, end) of a part of the file.
using ByteRange = std::pair<std::uint64_t, std::uint64_t>;

// The room of every chunk of a chunked dataset up to its largest extent, placed in one block
// (early allocation), found from its first chunk; none where that chunk has no place yet.
std::optional<ByteRange> chunk_room(hid_t dataset);

// Gives every byte of an open file but `rooms` (the datasets' reserved room for images, left a
// hole until written) its blocks on the disk, and some past its end for what HDF5 may add there,
// so that rewriting metadata in place (a status, a dataset's size) never needs room a full disk
// does not have. A file this process writes alone is reached through HDF5's own descriptor;
// `shared_path`, when given, is a file processes write together through MPI-IO (whose driver
// tells no descriptor): it is opened once more, and its size is the end a flush gave it.
void reserve_metadata_blocks(hid_t file, std::vector<ByteRange> rooms,
                             const std::optional<std::filesystem::path>& shared_path = {});
// The blocks reserve_metadata_blocks gives past a file's end.
inline constexpr std::uint64_t metadata_room_past_end = 256 << 10;
// A file's own metadata (its attributes, the datasets' headers and indexes), at most.
inline constexpr std::uint64_t metadata_bytes = 64 << 10;
// The room an image of `bytes` may take in a file, with the gap before it where it starts on an
// aligned boundary (see h5::writer_access).
double bytes_of_an_image(double bytes);
// What a file holds beside each of its images (a sweep's: each member's): its step and time,
// the statistics `analysis` asks for, and its entry in the XDMF companion (about 700 bytes),
// twice, since the companion is written beside the last one and then renamed over it.
double bytes_beside_an_image(const AnalysisAttributes& analysis);
// Those values lie in chunks of 1024 images (one chunk of them all, fewer), each given its room
// whole: the images they take room for.
double images_in_whole_chunks(double images);

}  // namespace grayscott::io
