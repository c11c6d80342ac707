#include "mpi/parallel_output.hpp"

namespace grayscott::mpi {

io::h5::Id collective_file_access(MPI_Comm comm) {
  namespace h5 = io::h5;
  h5::Id file_access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  h5::check(H5Pset_fapl_mpio(file_access, comm, MPI_INFO_NULL), "use MPI-IO for the file");
  h5::check(H5Pset_all_coll_metadata_ops(file_access, true), "set collective metadata reads");
  h5::check(H5Pset_coll_metadata_write(file_access, true), "set collective metadata writes");
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
  access_.writes_companions = decomposition.rank() == 0;
}

}  // namespace grayscott::mpi
