#include "mpi/parallel_output.hpp"

namespace grayscott::mpi {

io::h5::Id collective_file_access(MPI_Comm comm) {
  namespace h5 = io::h5;
  h5::Id file_access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  h5::check(H5Pset_fapl_mpio(file_access, comm, MPI_INFO_NULL), "use MPI-IO for the file");
  // The format of a single process's file (datasets of fixed largest size then index their chunks
  // implicitly: growing one changes only its header; see io/files/run_writer.cpp).
  h5::check(H5Pset_libver_bounds(file_access, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
            "choose the file format");
  h5::check(H5Pset_all_coll_metadata_ops(file_access, true), "set collective metadata reads");
  // Metadata reaches the file through rank 0 alone, each piece in a write of its own: a rank
  // killed at any moment leaves every piece either whole or as it was. Spread over the ranks (the
  // default, or one collective write), a killed rank's share of a flush went missing, and the file
  // named chunks, or held index nodes, that were never written.
  H5AC_cache_config_t cache{};
  cache.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  h5::check(H5Pget_mdc_config(file_access, &cache), "read the metadata cache's settings");
  cache.metadata_write_strategy = H5AC_METADATA_WRITE_STRATEGY__PROCESS_0_ONLY;
  h5::check(H5Pset_mdc_config(file_access, &cache), "write metadata from rank 0");
  h5::check(H5Pset_coll_metadata_write(file_access, false), "write metadata independently");
  return file_access;
}

ParallelOutput::ParallelOutput(const Decomposition& decomposition) {
  namespace h5 = io::h5;
  file_access_ = collective_file_access(decomposition.comm());
  transfer_ = h5::Id(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "create transfer properties");
  h5::check(H5Pset_dxpl_mpio(transfer_, H5FD_MPIO_COLLECTIVE), "set collective transfers");

  access_.file_access = file_access_;
  access_.transfer = transfer_;
  access_.row_begin = decomposition.rows().begin;
  access_.rows = decomposition.rows().size;
  access_.col_begin = decomposition.cols().begin;
  access_.cols = decomposition.cols().size;
  if (decomposition.grid().volume()) {
    access_.plane_begin = decomposition.planes().begin;
    access_.planes = decomposition.planes().size;
  }
  access_.writes_companions = decomposition.rank() == 0;
}

}  // namespace grayscott::mpi
