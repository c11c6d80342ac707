// Which process writes a run or sweep file: the root attributes writer_pid and writer_host, so
// that `grayscott repair` and `info` tell a file being written from one whose writer was killed.
#pragma once

#include <hdf5.h>

namespace grayscott::io {

// This process, as the file's one writer. Before SWMR writing starts (the attributes are created
// then); a continued file's are written over.
void record_writer(hid_t root);

// Over MPI ranks the writers are many: none is recorded (every rank creates the same
// attributes, as a closed file holds them).
void record_shared_writers(hid_t root);

// No process writes the file any more (a clean close, a repair): pid 0, no host, so that two
// finished files hold the same attributes. Nothing where none was recorded (an earlier version's
// file).
void record_no_writer(hid_t root);

}  // namespace grayscott::io
