#include "mpi/session.hpp"

#include <stdlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "model/model.hpp"

#if defined(OPEN_MPI) && OPEN_MPI && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

namespace grayscott::mpi {

std::string library_description() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(std::max(length, 0)));
  version = version.substr(0, version.find_first_of("\n,"));
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return version + "; built with CUDA support (asked again when a run starts)";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return version + "; built without CUDA support (halos travel through pinned host memory)";
#else
  return version + "; CUDA support asked when a run starts";
#endif
}

bool library_reads_device_memory(std::string_view kind) {
  if (kind != "cuda") return false;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  // Built with CUDA support; the runtime check says whether it is usable in this job.
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
  int supported = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported;
#else
  return false;
#endif
}

bool launched_by_mpi_launcher() {
  // Open MPI's mpirun, PMIx (Open MPI 5, srun --mpi=pmix), PMI-1/2 (MPICH, Intel MPI,
  // srun --mpi=pmi2), MVAPICH.
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

Session::Session() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    // Open MPI 4.1's own MPI-IO layer (OMPIO) was seen to lose or garble parts of collectively
    // written images of a chunked HDF5 dataset (1 run in 2 on a 2x2 decomposition); its ROMIO
    // layer writes them correctly. Unless the user chose an MPI-IO component, use ROMIO. Other
    // MPI libraries ignore this variable.
    ::setenv("OMPI_MCA_io", "^ompio", 0);
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      throw std::runtime_error("MPI: cannot initialise");
    }
    owns_mpi_ = true;
  }
  MPI_Query_thread(&thread_level_);
  // Errors come back as codes (and become exceptions or an abort here), never a silent exit.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) ==
      MPI_SUCCESS) {
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
  }
}

Session::~Session() {
  if (owns_mpi_) MPI_Finalize();
}

bool any_rank(MPI_Comm comm, bool local) {
  int mine = local ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

void agree_on_errors(MPI_Comm comm, std::exception_ptr local_error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local_error ? rank : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return;

  // The first failing rank tells everyone what happened: its kind and its message. The kinds of
  // refusal front ends tell apart (Python's FileExistsError, MemoryError, ...) are kept.
  enum Kind : int {
    Error,
    Invalid,
    NotFound,
    Exists,
    Denied,
    Directory,
    Memory,
    Locked,
    Forbidden
  };
  int kind = Error;
  std::string message;
  if (rank == first) {
    try {
      std::rethrow_exception(local_error);
    } catch (const PathNotFound& e) {
      kind = NotFound, message = e.what();
    } catch (const PathExists& e) {
      kind = Exists, message = e.what();
    } catch (const PathDenied& e) {
      kind = Denied, message = e.what();
    } catch (const PathIsDirectory& e) {
      kind = Directory, message = e.what();
    } catch (const OutOfMemory& e) {
      kind = Memory, message = e.what();
    } catch (const InvalidInput& e) {
      kind = Invalid, message = e.what();
    } catch (const FileLocked& e) {
      kind = Locked, message = e.what();
    } catch (const FileDenied& e) {
      kind = Forbidden, message = e.what();
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown error";
    }
  }
  int header[2] = {kind, static_cast<int>(message.size())};
  MPI_Bcast(header, 2, MPI_INT, first, comm);
  message.resize(static_cast<std::size_t>(header[1]));
  MPI_Bcast(message.data(), header[1], MPI_CHAR, first, comm);
  // Validation errors are the same on every rank: no need to say which one saw it first.
  switch (header[0]) {
    case NotFound:
      throw PathNotFound(message);
    case Exists:
      throw PathExists(message);
    case Denied:
      throw PathDenied(message);
    case Directory:
      throw PathIsDirectory(message);
    case Memory:
      throw OutOfMemory(message);
    case Invalid:
      throw InvalidInput(message);
    default:
      break;
  }
  if (size > 1) message = "rank " + std::to_string(first) + ": " + message;
  // A file the system would not open as asked keeps its kind, with the rank that met it.
  if (header[0] == Locked) throw FileLocked(message);
  if (header[0] == Forbidden) throw FileDenied(message);
  throw std::runtime_error(message);
}

void abort_all(MPI_Comm comm, const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::fprintf(stderr, "grayscott: error: rank %d: %s (aborting every rank)\n", rank,
               message.c_str());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace grayscott::mpi
