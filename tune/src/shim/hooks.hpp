// SPDX-License-Identifier: BSD-3-Clause
// The bodies shared by the C (MPI_*) and Fortran (mpi_*_) wrappers: time the call, attribute it to
// the caller's return address, record the event the wait-state analysis matches at finalize.
#pragma once

#include <mpi.h>

#include <vector>

#include "recorder.hpp"

namespace toru::tune::shim {

inline std::uint64_t type_bytes(MPI_Datatype type, long long count) {
  if (type == MPI_DATATYPE_NULL || count <= 0) return 0;
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::uint64_t>(size) * static_cast<std::uint64_t>(count);
}

inline bool tracing_off() { return !recorder::get().active() || busy_guard::busy(); }

template <class Call>
int timed(Call&& call, double& t0, double& t1) {
  recorder& r = recorder::get();
  t0 = r.now();
  int rc;
  {
    busy_guard g;
    rc = call();
  }
  t1 = r.now();
  return rc;
}

/// Blocking or nonblocking send (func tells which).
template <class Call>
int hook_send(void* ra, fn func, Call&& call, long long count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  const std::uint64_t bytes = type_bytes(type, count);
  std::lock_guard lock(r.mu);
  const int wdest = dest >= 0 ? r.world_rank_of(comm, dest) : -1;
  const int s = r.mpi_call(ra, func, t0, t1, bytes, wdest);
  r.p2p_time += t1 - t0;
  if (dest < 0) return rc;  // MPI_PROC_NULL
  ++r.p2p_msgs;
  r.p2p_bytes += bytes;
  const std::uint64_t key = r.comm_key(comm);
  r.push(event{.t0 = t0,
               .t1 = t1,
               .tpost = t0,
               .bytes = bytes,
               .key = key,
               .site = s,
               .peer = wdest,
               .tag = tag,
               .seq = r.next_send_seq(wdest, tag, key),
               .type = ev_type::send,
               .func = func});
  return rc;
}

/// Records the completion of a receive (blocking, or a nonblocking one completed by a wait).
inline void record_recv(recorder& r, int site, MPI_Comm comm, std::uint64_t key, const MPI_Status& st,
                        MPI_Datatype type, double t0, double t1, double tpost, std::uint16_t func,
                        std::uint32_t group) {
  if (st.MPI_SOURCE < 0) return;  // MPI_PROC_NULL
  int count = 0;
  if (type != MPI_DATATYPE_NULL) PMPI_Get_count(&st, type, &count);
  const std::uint64_t bytes = type == MPI_DATATYPE_NULL ? 0 : type_bytes(type, count < 0 ? 0 : count);
  const int wsrc = r.world_rank_of(comm, st.MPI_SOURCE);
  ++r.p2p_msgs;
  r.p2p_bytes += bytes;
  r.push(event{.t0 = t0,
               .t1 = t1,
               .tpost = tpost,
               .bytes = bytes,
               .key = key,
               .site = site,
               .peer = wsrc,
               .tag = st.MPI_TAG,
               .seq = r.next_recv_seq(wsrc, st.MPI_TAG, key),
               .group = group,
               .type = ev_type::recv,
               .func = func});
}

template <class Call>
int hook_recv(void* ra, Call&& call, MPI_Datatype type, MPI_Comm comm, MPI_Status* status) {
  if (tracing_off()) return call(status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int src = st->MPI_SOURCE >= 0 ? r.world_rank_of(comm, st->MPI_SOURCE) : -1;
  int count = 0;
  PMPI_Get_count(st, type, &count);
  const int s = r.mpi_call(ra, f_recv, t0, t1, type_bytes(type, count), src);
  r.p2p_time += t1 - t0;
  record_recv(r, s, comm, r.comm_key(comm), *st, type, t0, t1, t0, f_recv, 0);
  return rc;
}

/// Irecv: remembers the request so its completion becomes a receive event.
template <class Call>
int hook_irecv(void* ra, Call&& call, long long count, MPI_Datatype type, int source, MPI_Comm comm, MPI_Request* req) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int s =
      r.mpi_call(ra, f_irecv, t0, t1, type_bytes(type, count), source >= 0 ? r.world_rank_of(comm, source) : -1);
  r.p2p_time += t1 - t0;
  if (rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL)
    r.pending[*req] = pending_recv{t0, r.comm_key(comm), s, comm, type};
  return rc;
}

/// Wait, Waitall, Test: `reqs` are the handles before the call (the call may null them).
/// Receives completed here become events timed by this call (late-sender time is charged to it).
template <class Call>
int hook_wait(void* ra, fn func, Call&& call, const MPI_Request* reqs, int n, MPI_Status* statuses, int* flag) {
  if (tracing_off()) return call(statuses);
  std::vector<MPI_Request> before(reqs, reqs + n);
  std::vector<MPI_Status> own;
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE || statuses == MPI_STATUS_IGNORE) {
    own.resize(static_cast<std::size_t>(n));
    st = own.data();
  }
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int s = r.mpi_call(ra, func, t0, t1, 0, -1);
  r.p2p_time += t1 - t0;
  if (flag && !*flag) return rc;
  const std::uint32_t group = n > 1 ? r.next_group++ : 0;
  for (int i = 0; i < n; ++i) {
    auto it = r.pending.find(before[static_cast<std::size_t>(i)]);
    if (it == r.pending.end()) continue;
    const pending_recv p = it->second;
    r.pending.erase(it);
    record_recv(r, s, p.comm, p.key, st[i], p.type, t0, t1, p.posted, func, group);
  }
  return rc;
}

template <class Call>
int hook_coll(void* ra, fn func, Call&& call, std::uint64_t bytes, MPI_Comm comm) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int s = r.mpi_call(ra, func, t0, t1, bytes, -1);
  r.coll_time += t1 - t0;
  ++r.coll_calls;
  int size = 0;
  PMPI_Comm_size(comm, &size);
  const std::uint64_t key = r.comm_key(comm);
  r.push(event{.t0 = t0,
               .t1 = t1,
               .tpost = t0,
               .bytes = bytes,
               .key = key,
               .site = s,
               .peer = size,
               .seq = r.next_coll_seq(key),
               .type = ev_type::coll,
               .func = func});
  return rc;
}

}  // namespace toru::tune::shim
