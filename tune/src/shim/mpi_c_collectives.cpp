// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the collectives beyond mpi_c.cpp's first set: the remaining blocking ones and every
// nonblocking one (toru's FFT calls MPI_Alltoallw, its trainer MPI_Ialltoallv and MPI_Iallreduce).
// Bytes are what this rank contributes (its send side; the receive side under MPI_IN_PLACE), the
// same convention as the blocking wrappers, so a nonblocking call and its blocking twin compare.
#include <mpi.h>

#include "coll_bytes.hpp"
#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

// --- blocking ---------------------------------------------------------------------------------

TORU_EXPORT int MPI_Alltoallw(const void* in, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                              void* out, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                              MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_alltoallw,
      [&] { return PMPI_Alltoallw(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm); },
      alltoallw_bytes(in == MPI_IN_PLACE, scounts, stypes, rcounts, rtypes, comm), comm);
}

TORU_EXPORT int MPI_Gatherv(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                            const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_gatherv, [&] { return PMPI_Gatherv(in, scount, stype, out, rcounts, displs, rtype, root, comm); },
      in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount), comm);
}

TORU_EXPORT int MPI_Scatterv(const void* in, const int scounts[], const int displs[], MPI_Datatype stype, void* out,
                             int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_scatterv, [&] { return PMPI_Scatterv(in, scounts, displs, stype, out, rcount, rtype, root, comm); },
      out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount), comm);
}

TORU_EXPORT int MPI_Reduce_scatter(const void* in, void* out, const int rcounts[], MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_reduce_scatter, [&] { return PMPI_Reduce_scatter(in, out, rcounts, type, op, comm); },
      counts_bytes(rcounts, comm_size(comm), type), comm);
}

TORU_EXPORT int MPI_Reduce_scatter_block(const void* in, void* out, int rcount, MPI_Datatype type, MPI_Op op,
                                         MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_reduce_scatter_block, [&] { return PMPI_Reduce_scatter_block(in, out, rcount, type, op, comm); },
      type_bytes(type, static_cast<long long>(rcount) * comm_size(comm)), comm);
}

TORU_EXPORT int MPI_Scan(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_scan, [&] { return PMPI_Scan(in, out, count, type, op, comm); }, type_bytes(type, count), comm);
}

TORU_EXPORT int MPI_Exscan(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_exscan, [&] { return PMPI_Exscan(in, out, count, type, op, comm); }, type_bytes(type, count), comm);
}

// --- nonblocking ------------------------------------------------------------------------------

TORU_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ibarrier, [&] { return PMPI_Ibarrier(comm, req); }, 0, comm, true);
}

TORU_EXPORT int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ibcast, [&] { return PMPI_Ibcast(buf, count, type, root, comm, req); }, type_bytes(type, count), comm,
      true);
}

TORU_EXPORT int MPI_Ireduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                            MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ireduce, [&] { return PMPI_Ireduce(in, out, count, type, op, root, comm, req); },
      type_bytes(type, count), comm, true);
}

TORU_EXPORT int MPI_Iallreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                               MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iallreduce, [&] { return PMPI_Iallreduce(in, out, count, type, op, comm, req); },
      type_bytes(type, count), comm, true);
}

TORU_EXPORT int MPI_Ialltoall(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                              MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ialltoall, [&] { return PMPI_Ialltoall(in, scount, stype, out, rcount, rtype, comm, req); },
      alltoall_bytes(in == MPI_IN_PLACE, scount, stype, rcount, rtype, comm), comm, true);
}

TORU_EXPORT int MPI_Ialltoallv(const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype, void* out,
                               const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                               MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ialltoallv,
      [&] { return PMPI_Ialltoallv(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm, req); },
      alltoallv_bytes(in == MPI_IN_PLACE, scounts, stype, rcounts, rtype, comm), comm, true);
}

TORU_EXPORT int MPI_Ialltoallw(const void* in, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                               void* out, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                               MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ialltoallw,
      [&] { return PMPI_Ialltoallw(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm, req); },
      alltoallw_bytes(in == MPI_IN_PLACE, scounts, stypes, rcounts, rtypes, comm), comm, true);
}

TORU_EXPORT int MPI_Iallgather(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                               MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iallgather, [&] { return PMPI_Iallgather(in, scount, stype, out, rcount, rtype, comm, req); },
      in == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount), comm, true);
}

TORU_EXPORT int MPI_Iallgatherv(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                                const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iallgatherv,
      [&] { return PMPI_Iallgatherv(in, scount, stype, out, rcounts, displs, rtype, comm, req); },
      allgatherv_bytes(in == MPI_IN_PLACE, scount, stype, rcounts, rtype, comm), comm, true);
}

TORU_EXPORT int MPI_Igather(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                            int root, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_igather, [&] { return PMPI_Igather(in, scount, stype, out, rcount, rtype, root, comm, req); },
      in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount), comm, true);
}

TORU_EXPORT int MPI_Igatherv(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                             const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_igatherv,
      [&] { return PMPI_Igatherv(in, scount, stype, out, rcounts, displs, rtype, root, comm, req); },
      in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount), comm, true);
}

TORU_EXPORT int MPI_Iscatter(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                             int root, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iscatter, [&] { return PMPI_Iscatter(in, scount, stype, out, rcount, rtype, root, comm, req); },
      out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount), comm, true);
}

TORU_EXPORT int MPI_Iscatterv(const void* in, const int scounts[], const int displs[], MPI_Datatype stype, void* out,
                              int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iscatterv,
      [&] { return PMPI_Iscatterv(in, scounts, displs, stype, out, rcount, rtype, root, comm, req); },
      out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount), comm, true);
}

TORU_EXPORT int MPI_Ireduce_scatter(const void* in, void* out, const int rcounts[], MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ireduce_scatter, [&] { return PMPI_Ireduce_scatter(in, out, rcounts, type, op, comm, req); },
      counts_bytes(rcounts, comm_size(comm), type), comm, true);
}

TORU_EXPORT int MPI_Ireduce_scatter_block(const void* in, void* out, int rcount, MPI_Datatype type, MPI_Op op,
                                          MPI_Comm comm, MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_ireduce_scatter_block,
      [&] { return PMPI_Ireduce_scatter_block(in, out, rcount, type, op, comm, req); },
      type_bytes(type, static_cast<long long>(rcount) * comm_size(comm)), comm, true);
}

TORU_EXPORT int MPI_Iscan(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iscan, [&] { return PMPI_Iscan(in, out, count, type, op, comm, req); }, type_bytes(type, count), comm,
      true);
}

TORU_EXPORT int MPI_Iexscan(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                            MPI_Request* req) {
  return hook_coll(
      TORU_RA, f_iexscan, [&] { return PMPI_Iexscan(in, out, count, type, op, comm, req); }, type_bytes(type, count),
      comm, true);
}
