// SPDX-License-Identifier: BSD-3-Clause
// C MPI wrappers (the PMPI profiling interface): each forwards to PMPI_* and records the call at
// its caller's return address.
#include <mpi.h>

#include <numeric>

#include "coll_bytes.hpp"
#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) recorder::get().on_init();
  return rc;
}

TORU_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) recorder::get().on_init();
  return rc;
}

TORU_EXPORT int MPI_Finalize() {
  recorder::get().on_finalize();
  return PMPI_Finalize();
}

TORU_EXPORT int MPI_Comm_free(MPI_Comm* comm) {
  if (recorder::get().active()) {
    std::lock_guard lock(recorder::get().mu);
    recorder::get().forget_comm(*comm);
  }
  return PMPI_Comm_free(comm);
}

TORU_EXPORT int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return hook_send(
      TORU_RA, f_send, [&] { return PMPI_Send(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

TORU_EXPORT int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return hook_send(
      TORU_RA, f_ssend, [&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

TORU_EXPORT int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request* req) {
  return hook_send(
      TORU_RA, f_isend, [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, req); }, count, type, dest, tag,
      comm);
}

TORU_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Status* status) {
  return hook_recv(
      TORU_RA, f_recv, [&](MPI_Status* st) { return PMPI_Recv(buf, count, type, source, tag, comm, st); }, type, comm,
      status);
}

TORU_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                          MPI_Request* req) {
  return hook_irecv(
      TORU_RA, f_irecv, [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, req); }, count, type, source, comm,
      req);
}

TORU_EXPORT int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  return hook_wait(
      TORU_RA, f_wait, [&](MPI_Status* st) { return PMPI_Wait(req, st); }, req, 1, status, completed{});
}

TORU_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  return hook_wait(
      TORU_RA, f_waitall, [&](MPI_Status* st) { return PMPI_Waitall(n, reqs, st); }, reqs, n, statuses, completed{});
}

TORU_EXPORT int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  return hook_wait(
      TORU_RA, f_test, [&](MPI_Status* st) { return PMPI_Test(req, flag, st); }, req, 1, status,
      completed{.flag = flag});
}

TORU_EXPORT int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                             int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  return hook_sendrecv(
      TORU_RA, f_sendrecv,
      [&](MPI_Status* st) {
        return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st);
      },
      scount, stype, dest, stag, rtype, comm, status);
}

TORU_EXPORT int MPI_Barrier(MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_barrier, [&] { return PMPI_Barrier(comm); }, 0, comm);
}

TORU_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_bcast, [&] { return PMPI_Bcast(buf, count, type, root, comm); }, type_bytes(type, count), comm);
}

TORU_EXPORT int MPI_Reduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, int root,
                           MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_reduce, [&] { return PMPI_Reduce(in, out, count, type, op, root, comm); }, type_bytes(type, count),
      comm);
}

TORU_EXPORT int MPI_Allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_allreduce, [&] { return PMPI_Allreduce(in, out, count, type, op, comm); }, type_bytes(type, count),
      comm);
}

TORU_EXPORT int MPI_Alltoall(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                             MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  const bool in_place = in == MPI_IN_PLACE;
  return hook_coll(
      TORU_RA, f_alltoall, [&] { return PMPI_Alltoall(in, scount, stype, out, rcount, rtype, comm); },
      in_place ? type_bytes(rtype, static_cast<long long>(rcount) * size)
               : type_bytes(stype, static_cast<long long>(scount) * size),
      comm);
}

TORU_EXPORT int MPI_Alltoallv(const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype, void* out,
                              const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  const bool in_place = in == MPI_IN_PLACE;
  const int* c = in_place ? rcounts : scounts;
  const long long total = std::accumulate(c, c + size, 0LL);
  return hook_coll(
      TORU_RA, f_alltoallv,
      [&] { return PMPI_Alltoallv(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm); },
      type_bytes(in_place ? rtype : stype, total), comm);
}

TORU_EXPORT int MPI_Allgather(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                              MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_allgather, [&] { return PMPI_Allgather(in, scount, stype, out, rcount, rtype, comm); },
      in == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount), comm);
}

TORU_EXPORT int MPI_Allgatherv(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                               const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_allgatherv, [&] { return PMPI_Allgatherv(in, scount, stype, out, rcounts, displs, rtype, comm); },
      allgatherv_bytes(in == MPI_IN_PLACE, scount, stype, rcounts, rtype, comm), comm);
}

TORU_EXPORT int MPI_Gather(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                           int root, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_gather, [&] { return PMPI_Gather(in, scount, stype, out, rcount, rtype, root, comm); },
      in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount), comm);
}

TORU_EXPORT int MPI_Scatter(const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
                            int root, MPI_Comm comm) {
  return hook_coll(
      TORU_RA, f_scatter, [&] { return PMPI_Scatter(in, scount, stype, out, rcount, rtype, root, comm); },
      out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount), comm);
}
