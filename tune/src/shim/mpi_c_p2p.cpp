// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of point-to-point calls beyond mpi_c.cpp's Recv, Irecv, Sendrecv, Wait, Waitall and
// Test: the send modes (a table line each), Sendrecv_replace, Probe/Iprobe, Mprobe/Improbe/Mrecv/
// Imrecv, persistent requests (Send_init family, Recv_init, Start, Startall), the remaining
// completion calls (Waitany, Waitsome, Testany, Testall, Testsome) and Request_free.
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

// TORU_SEND(Name, name): a send mode, MPI_Name and its nonblocking MPI_Iname.
#define TORU_SEND(Name, name)                                                                                        \
  TORU_EXPORT int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {      \
    return hook_send(                                                                                                \
        TORU_RA, f_##name, [&] { return PMPI_##Name(buf, count, type, dest, tag, comm); }, count, type, dest, tag,   \
        comm);                                                                                                       \
  }                                                                                                                  \
  TORU_EXPORT int MPI_I##name(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,       \
                              MPI_Request* req) {                                                                    \
    return hook_send(                                                                                                \
        TORU_RA, f_i##name, [&] { return PMPI_I##name(buf, count, type, dest, tag, comm, req); }, count, type, dest, \
        tag, comm);                                                                                                  \
  }
TORU_SEND(Send, send)
TORU_SEND(Ssend, ssend)
TORU_SEND(Bsend, bsend)
TORU_SEND(Rsend, rsend)

TORU_EXPORT int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                                     MPI_Comm comm, MPI_Status* status) {
  return hook_sendrecv(
      TORU_RA, f_sendrecv_replace,
      [&](MPI_Status* st) { return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st); },
      count, type, dest, stag, type, comm, status);
}

TORU_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return hook_probe(
      TORU_RA, f_probe, [&](MPI_Status* st) { return PMPI_Probe(source, tag, comm, st); }, comm, nullptr, status);
}

TORU_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return hook_probe(
      TORU_RA, f_iprobe, [&](MPI_Status* st) { return PMPI_Iprobe(source, tag, comm, flag, st); }, comm, flag, status);
}

// TORU_INIT(Name, func, buffer): a persistent point-to-point request (the send modes all count as
// MPI_Send_init).
#define TORU_INIT(Name, func, buffer)                                                                                 \
  TORU_EXPORT int MPI_##Name##_init(buffer buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,       \
                                    MPI_Request* req) {                                                               \
    return hook_p2p_init(                                                                                             \
        TORU_RA, func, [&] { return PMPI_##Name##_init(buf, count, type, peer, tag, comm, req); }, count, type, peer, \
        tag, comm, req);                                                                                              \
  }
TORU_INIT(Send, f_send_init, const void*)
TORU_INIT(Ssend, f_send_init, const void*)
TORU_INIT(Bsend, f_send_init, const void*)
TORU_INIT(Rsend, f_send_init, const void*)
TORU_INIT(Recv, f_recv_init, void*)

TORU_EXPORT int MPI_Start(MPI_Request* req) {
  const MPI_Request before = *req;
  return hook_start(
      TORU_RA, f_start, [&] { return PMPI_Start(req); }, &before, 1);
}

TORU_EXPORT int MPI_Startall(int n, MPI_Request reqs[]) {
  return hook_start(
      TORU_RA, f_startall, [&] { return PMPI_Startall(n, reqs); }, reqs, n);
}

TORU_EXPORT int MPI_Request_free(MPI_Request* req) {
  forget_request(*req);
  return PMPI_Request_free(req);
}

TORU_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  return hook_wait(
      TORU_RA, f_waitany, [&](MPI_Status* st) { return PMPI_Waitany(n, reqs, index, st); }, reqs, n, status,
      completed{.which = completed::one, .index = index});
}

TORU_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  return hook_wait(
      TORU_RA, f_waitsome, [&](MPI_Status* st) { return PMPI_Waitsome(n, reqs, outcount, indices, st); }, reqs, n,
      statuses, completed{.which = completed::some, .outcount = outcount, .indices = indices});
}

TORU_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  return hook_wait(
      TORU_RA, f_testany, [&](MPI_Status* st) { return PMPI_Testany(n, reqs, index, flag, st); }, reqs, n, status,
      completed{.which = completed::one, .flag = flag, .index = index});
}

TORU_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  return hook_wait(
      TORU_RA, f_testall, [&](MPI_Status* st) { return PMPI_Testall(n, reqs, flag, st); }, reqs, n, statuses,
      completed{.flag = flag});
}

TORU_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  return hook_wait(
      TORU_RA, f_testsome, [&](MPI_Status* st) { return PMPI_Testsome(n, reqs, outcount, indices, st); }, reqs, n,
      statuses, completed{.which = completed::some, .outcount = outcount, .indices = indices});
}

TORU_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* msg, MPI_Status* status) {
  return hook_mprobe(
      TORU_RA, f_mprobe, [&](MPI_Status* st) { return PMPI_Mprobe(source, tag, comm, msg, st); }, comm, nullptr, msg,
      status);
}

TORU_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* msg, MPI_Status* status) {
  return hook_mprobe(
      TORU_RA, f_improbe, [&](MPI_Status* st) { return PMPI_Improbe(source, tag, comm, flag, msg, st); }, comm, flag,
      msg, status);
}

TORU_EXPORT int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* msg, MPI_Status* status) {
  const MPI_Message before = *msg;
  return hook_mrecv(
      TORU_RA, [&](MPI_Status* st) { return PMPI_Mrecv(buf, count, type, msg, st); }, type, before, status);
}

TORU_EXPORT int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* msg, MPI_Request* req) {
  const MPI_Message before = *msg;
  return hook_imrecv(
      TORU_RA, [&] { return PMPI_Imrecv(buf, count, type, msg, req); }, count, type, before, req);
}
