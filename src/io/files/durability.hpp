// What a file written by one process asks of the disk beyond HDF5's flushes: its bytes out of the
// operating system's cache, written back early, and a full disk told apart from other failures.
#pragma once

#include <hdf5.h>

#include <exception>

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

}  // namespace grayscott::io
