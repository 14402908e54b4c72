// SPDX-License-Identifier: BSD-3-Clause
// C MPI wrappers (the PMPI profiling interface): each forwards to PMPI_* and records the call at
// its caller's return address.
#include <mpi.h>

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
