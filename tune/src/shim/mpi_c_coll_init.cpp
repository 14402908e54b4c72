// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the persistent collectives, which Open MPI 4.1 has as the MPIX_*_init of its pcollreq
// extension (MPI-4's MPI_*_init): the init call is counted without bytes; every MPI_Start or
// MPI_Startall of the request is a collective posted there, a call of the init's function with the
// bytes the init described (hooks.hpp, hook_start; the same convention as the nonblocking twin), and
// its waiting shows at the completion call.
#include <mpi.h>
// after mpi.h, which defines what it needs (OMPI_DECLSPEC)
#include <mpi-ext.h>

#include "coll_bytes.hpp"
#include "hooks.hpp"

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT int MPIX_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_barrier_init, [&] { return PMPIX_Barrier_init(comm, info, req); }, 0, comm, req);
}

TORU_EXPORT int MPIX_Bcast_init(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Info info,
                                MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_bcast_init, [&] { return PMPIX_Bcast_init(buf, count, type, root, comm, info, req); },
      type_bytes(type, count), comm, req);
}

TORU_EXPORT int MPIX_Reduce_init(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_reduce_init, [&] { return PMPIX_Reduce_init(in, out, count, type, op, root, comm, info, req); },
      type_bytes(type, count), comm, req);
}

TORU_EXPORT int MPIX_Allreduce_init(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_allreduce_init, [&] { return PMPIX_Allreduce_init(in, out, count, type, op, comm, info, req); },
      type_bytes(type, count), comm, req);
}

TORU_EXPORT int MPIX_Alltoall_init(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                   MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_alltoall_init,
      [&] { return PMPIX_Alltoall_init(in, scount, stype, out, rcount, rtype, comm, info, req); },
      alltoall_bytes(in == MPI_IN_PLACE, scount, stype, rcount, rtype, comm), comm, req);
}

TORU_EXPORT int MPIX_Alltoallv_init(const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype,
                                    void* out, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_alltoallv_init,
      [&] { return PMPIX_Alltoallv_init(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm, info, req); },
      alltoallv_bytes(in == MPI_IN_PLACE, scounts, stype, rcounts, rtype, comm), comm, req);
}

TORU_EXPORT int MPIX_Alltoallw_init(const void* in, const int scounts[], const int sdispls[],
                                    const MPI_Datatype stypes[], void* out, const int rcounts[], const int rdispls[],
                                    const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_alltoallw_init,
      [&] {
        return PMPIX_Alltoallw_init(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm, info, req);
      },
      alltoallw_bytes(in == MPI_IN_PLACE, scounts, stypes, rcounts, rtypes, comm), comm, req);
}

TORU_EXPORT int MPIX_Allgather_init(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                    MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_allgather_init,
      [&] { return PMPIX_Allgather_init(in, scount, stype, out, rcount, rtype, comm, info, req); },
      in == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount), comm, req);
}

TORU_EXPORT int MPIX_Allgatherv_init(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                                     const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_allgatherv_init,
      [&] { return PMPIX_Allgatherv_init(in, scount, stype, out, rcounts, displs, rtype, comm, info, req); },
      allgatherv_bytes(in == MPI_IN_PLACE, scount, stype, rcounts, rtype, comm), comm, req);
}

TORU_EXPORT int MPIX_Gather_init(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_gather_init,
      [&] { return PMPIX_Gather_init(in, scount, stype, out, rcount, rtype, root, comm, info, req); },
      in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount), comm, req);
}

TORU_EXPORT int MPIX_Gatherv_init(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                                  const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_gatherv_init,
      [&] { return PMPIX_Gatherv_init(in, scount, stype, out, rcounts, displs, rtype, root, comm, info, req); },
      in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount), comm, req);
}

TORU_EXPORT int MPIX_Scatter_init(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_scatter_init,
      [&] { return PMPIX_Scatter_init(in, scount, stype, out, rcount, rtype, root, comm, info, req); },
      out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount), comm, req);
}

TORU_EXPORT int MPIX_Scatterv_init(const void* in, const int scounts[], const int displs[], MPI_Datatype stype,
                                   void* out, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_scatterv_init,
      [&] { return PMPIX_Scatterv_init(in, scounts, displs, stype, out, rcount, rtype, root, comm, info, req); },
      out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount), comm, req);
}

TORU_EXPORT int MPIX_Reduce_scatter_init(const void* in, void* out, const int rcounts[], MPI_Datatype type, MPI_Op op,
                                         MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_reduce_scatter_init,
      [&] { return PMPIX_Reduce_scatter_init(in, out, rcounts, type, op, comm, info, req); },
      counts_bytes(rcounts, comm_size(comm), type), comm, req);
}

TORU_EXPORT int MPIX_Reduce_scatter_block_init(const void* in, void* out, int rcount, MPI_Datatype type, MPI_Op op,
                                               MPI_Comm comm, MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_reduce_scatter_block_init,
      [&] { return PMPIX_Reduce_scatter_block_init(in, out, rcount, type, op, comm, info, req); },
      type_bytes(type, static_cast<long long>(rcount) * comm_size(comm)), comm, req);
}

TORU_EXPORT int MPIX_Scan_init(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                               MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_scan_init, [&] { return PMPIX_Scan_init(in, out, count, type, op, comm, info, req); },
      type_bytes(type, count), comm, req);
}

TORU_EXPORT int MPIX_Exscan_init(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* req) {
  return hook_coll_init(
      TORU_RA, f_exscan_init, [&] { return PMPIX_Exscan_init(in, out, count, type, op, comm, info, req); },
      type_bytes(type, count), comm, req);
}

#endif
