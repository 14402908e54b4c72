// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the persistent neighbourhood collectives, which Open MPI 4.1 has as the
// MPIX_Neighbor_*_init of its pcollreq extension (MPI-4's MPI_Neighbor_*_init): the init call is
// counted without bytes; every MPI_Start or MPI_Startall of the request is a call of the init's
// function there (hooks.hpp, hook_start), credited with what the blocking twin (mpi_c_neighbor.cpp)
// credits, each destination of the communicator's topology a partner with the bytes sent to it
// (`bytes` is a function of the destination's index).
#include <mpi.h>
// after mpi.h, which defines what it needs (OMPI_DECLSPEC)
#include <mpi-ext.h>

#include "hooks.hpp"

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT int MPIX_Neighbor_allgather_init(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                             MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_neighbor_init(
      TORU_RA, f_neighbor_allgather_init,
      [&] { return PMPIX_Neighbor_allgather_init(in, scount, stype, out, rcount, rtype, comm, info, req); },
      [&](int) { return type_bytes(stype, scount); }, comm, req);
}

TORU_EXPORT int MPIX_Neighbor_allgatherv_init(const void* in, int scount, MPI_Datatype stype, void* out,
                                              const int rcounts[], const int displs[], MPI_Datatype rtype,
                                              MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_neighbor_init(
      TORU_RA, f_neighbor_allgatherv_init,
      [&] { return PMPIX_Neighbor_allgatherv_init(in, scount, stype, out, rcounts, displs, rtype, comm, info, req); },
      [&](int) { return type_bytes(stype, scount); }, comm, req);
}

TORU_EXPORT int MPIX_Neighbor_alltoall_init(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                            MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_neighbor_init(
      TORU_RA, f_neighbor_alltoall_init,
      [&] { return PMPIX_Neighbor_alltoall_init(in, scount, stype, out, rcount, rtype, comm, info, req); },
      [&](int) { return type_bytes(stype, scount); }, comm, req);
}

TORU_EXPORT int MPIX_Neighbor_alltoallv_init(const void* in, const int scounts[], const int sdispls[],
                                             MPI_Datatype stype, void* out, const int rcounts[], const int rdispls[],
                                             MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_neighbor_init(
      TORU_RA, f_neighbor_alltoallv_init,
      [&] {
        return PMPIX_Neighbor_alltoallv_init(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm, info,
                                             req);
      },
      [&](int i) { return type_bytes(stype, scounts[i]); }, comm, req);
}

TORU_EXPORT int MPIX_Neighbor_alltoallw_init(const void* in, const int scounts[], const MPI_Aint sdispls[],
                                             const MPI_Datatype stypes[], void* out, const int rcounts[],
                                             const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                                             MPI_Info info, MPI_Request* req) {
  return hook_neighbor_init(
      TORU_RA, f_neighbor_alltoallw_init,
      [&] {
        return PMPIX_Neighbor_alltoallw_init(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm, info,
                                             req);
      },
      [&](int i) { return type_bytes(stypes[i], scounts[i]); }, comm, req);
}

#endif
