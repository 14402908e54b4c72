// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the point-to-point calls beyond mpi_c.cpp's first set: the other send modes,
// Sendrecv_replace, Probe/Iprobe, persistent requests (Send_init/Recv_init/Start/Startall), the
// remaining completion calls (Waitany, Waitsome, Testany, Testall, Testsome) and Request_free.
// Open MPI 4.1 has no MPI-4 persistent collectives (MPI_Allreduce_init, ...): none wrapped.
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return hook_send(
      TORU_RA, f_bsend, [&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

TORU_EXPORT int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return hook_send(
      TORU_RA, f_rsend, [&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); }, count, type, dest, tag, comm);
}

TORU_EXPORT int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                           MPI_Request* req) {
  return hook_send(
      TORU_RA, f_ibsend, [&] { return PMPI_Ibsend(buf, count, type, dest, tag, comm, req); }, count, type, dest, tag,
      comm);
}

TORU_EXPORT int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                           MPI_Request* req) {
  return hook_send(
      TORU_RA, f_issend, [&] { return PMPI_Issend(buf, count, type, dest, tag, comm, req); }, count, type, dest, tag,
      comm);
}

TORU_EXPORT int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                           MPI_Request* req) {
  return hook_send(
      TORU_RA, f_irsend, [&] { return PMPI_Irsend(buf, count, type, dest, tag, comm, req); }, count, type, dest, tag,
      comm);
}

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

TORU_EXPORT int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                              MPI_Request* req) {
  return hook_p2p_init(
      TORU_RA, f_send_init, [&] { return PMPI_Send_init(buf, count, type, dest, tag, comm, req); }, count, type, dest,
      tag, comm, req);
}

TORU_EXPORT int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                               MPI_Request* req) {
  return hook_p2p_init(
      TORU_RA, f_send_init, [&] { return PMPI_Ssend_init(buf, count, type, dest, tag, comm, req); }, count, type, dest,
      tag, comm, req);
}

TORU_EXPORT int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                               MPI_Request* req) {
  return hook_p2p_init(
      TORU_RA, f_send_init, [&] { return PMPI_Bsend_init(buf, count, type, dest, tag, comm, req); }, count, type, dest,
      tag, comm, req);
}

TORU_EXPORT int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                               MPI_Request* req) {
  return hook_p2p_init(
      TORU_RA, f_send_init, [&] { return PMPI_Rsend_init(buf, count, type, dest, tag, comm, req); }, count, type, dest,
      tag, comm, req);
}

TORU_EXPORT int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                              MPI_Request* req) {
  return hook_p2p_init(
      TORU_RA, f_recv_init, [&] { return PMPI_Recv_init(buf, count, type, source, tag, comm, req); }, count, type,
      source, tag, comm, req);
}

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
