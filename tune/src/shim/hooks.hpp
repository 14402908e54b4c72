// SPDX-License-Identifier: BSD-3-Clause
// The bodies shared by the C (MPI_*) and Fortran (mpi_*_) wrappers: time the call, attribute it to
// the caller's return address, record the event the wait-state analysis matches at finalize.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <utility>
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
  std::lock_guard lock(r.mu);
  // A failed call or one to MPI_PROC_NULL moves nothing: counted, without bytes or partner (the
  // communicator and rank of a failed call may not be valid to ask about).
  if (rc != MPI_SUCCESS || dest < 0) {
    r.mpi_call(ra, func, t0, t1, 0, -1);
    r.p2p_time += t1 - t0;
    return rc;
  }
  const std::uint64_t bytes = type_bytes(type, count);
  const int wdest = r.world_rank_of(comm, dest);
  const int s = r.mpi_call(ra, func, t0, t1, bytes, wdest);
  r.p2p_time += t1 - t0;
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

/// Blocking receive (Recv; Mrecv with the communicator its Mprobe found the message on).
template <class Call>
int hook_recv(void* ra, fn func, Call&& call, MPI_Datatype type, MPI_Comm comm, MPI_Status* status) {
  if (tracing_off()) return call(status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  if (rc != MPI_SUCCESS || st->MPI_SOURCE < 0) {  // failed (the status is undefined) or MPI_PROC_NULL
    r.mpi_call(ra, func, t0, t1, 0, -1);
    r.p2p_time += t1 - t0;
    return rc;
  }
  const int src = r.world_rank_of(comm, st->MPI_SOURCE);
  int count = 0;
  PMPI_Get_count(st, type, &count);
  const int s = r.mpi_call(ra, func, t0, t1, type_bytes(type, count < 0 ? 0 : count), src);
  r.p2p_time += t1 - t0;
  record_recv(r, s, comm, r.comm_key(comm), *st, type, t0, t1, t0, func, 0);
  return rc;
}

/// Irecv (and Imrecv, with the message's communicator and source): remembers the request so its
/// completion becomes a receive event. Bytes as posted (none from MPI_PROC_NULL or on failure).
template <class Call>
int hook_irecv(void* ra, fn func, Call&& call, long long count, MPI_Datatype type, int source, MPI_Comm comm,
               MPI_Request* req) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const bool moves = rc == MPI_SUCCESS && source != MPI_PROC_NULL;
  const int s = r.mpi_call(ra, func, t0, t1, moves ? type_bytes(type, count) : 0,
                           moves && source >= 0 ? r.world_rank_of(comm, source) : -1);
  r.p2p_time += t1 - t0;
  if (rc != MPI_SUCCESS) return rc;
  if (*req != MPI_REQUEST_NULL) r.pending[*req] = pending_recv{t0, r.comm_key(comm), s, comm, type};
  // The post is where a late receiver arrives: the root-cause analysis needs its compute stamp.
  r.push(event{.t0 = t0, .t1 = t1, .tpost = t0, .site = s, .peer = source, .type = ev_type::other_mpi, .func = func});
  return rc;
}

/// Which requests a completion call finished: all of them (Wait, Waitall; Test, Testall when *flag),
/// one (Waitany, Testany: *index, its status in statuses[0]) or some (Waitsome, Testsome:
/// indices[0..*outcount), their statuses in order).
struct completed {
  enum { all, one, some } which = all;
  const int* flag = nullptr;  // Test*: nothing completed when *flag == 0
  const int* index = nullptr;
  const int* outcount = nullptr;
  const int* indices = nullptr;
};

/// Any completion call: `reqs` are the handles before the call (it may null them). Receives
/// completed here become events timed by this call (late-sender time is charged to it), and their
/// bytes and source are credited to this call's site. Persistent requests stay known (Wait leaves
/// them allocated); a later MPI_Start posts them again.
template <class Call>
int hook_wait(void* ra, fn func, Call&& call, const MPI_Request* reqs, int n, MPI_Status* statuses, completed done) {
  if (tracing_off()) return call(statuses);
  // Most calls complete a handful of requests: no allocation on that path.
  constexpr int small = 16;
  MPI_Request before_small[small];
  MPI_Status own_small[small];
  std::vector<MPI_Request> before_big;
  std::vector<MPI_Status> own_big;
  const int n_st = done.which == completed::one ? 1 : n;
  MPI_Request* before = before_small;
  if (n > small) {
    before_big.assign(reqs, reqs + n);
    before = before_big.data();
  } else if (n > 0) {  // Waitall(0, NULL, ...) is legal: no copy from a null pointer
    std::copy(reqs, reqs + n, before_small);
  }
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE || statuses == MPI_STATUS_IGNORE) {
    st = own_small;
    if (n_st > small) {
      own_big.resize(static_cast<std::size_t>(n_st));
      st = own_big.data();
    }
  }
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int s = r.mpi_call(ra, func, t0, t1, 0, -1);
  r.p2p_time += t1 - t0;
  // MPI_ERR_IN_STATUS (the calls with an array of statuses): each status says whether its request
  // completed. Any other error: a single request completed with it (Wait, Test, and Waitany and
  // Testany when they name one), or nothing did; either way no bytes arrived.
  const bool in_status = rc == MPI_ERR_IN_STATUS && done.which != completed::one;
  if (rc != MPI_SUCCESS && !in_status) {
    int i = -1;
    if (n == 1 && done.which == completed::all) i = 0;
    if (done.which == completed::one && *done.index >= 0 && *done.index < n) i = *done.index;
    if (i >= 0) r.pending.erase(before[i]);
    return rc;
  }
  if (done.flag && !*done.flag) return rc;
  int count = n;
  if (done.which == completed::one) count = *done.index == MPI_UNDEFINED ? 0 : 1;
  if (done.which == completed::some) count = *done.outcount == MPI_UNDEFINED ? 0 : *done.outcount;
  const std::uint32_t group = count > 1 ? r.next_group++ : 0;
  for (int k = 0; k < count; ++k) {
    const int i = done.which == completed::all ? k : done.which == completed::one ? *done.index : done.indices[k];
    auto it = r.pending.find(before[i]);
    if (it == r.pending.end()) continue;
    const pending_recv p = it->second;
    const MPI_Status& sk = st[done.which == completed::all ? i : k];
    if (in_status && sk.MPI_ERROR == MPI_ERR_PENDING) continue;  // not completed
    r.pending.erase(it);
    if (in_status && sk.MPI_ERROR != MPI_SUCCESS) continue;  // completed with an error
    const std::uint64_t b0 = r.p2p_bytes;
    record_recv(r, s, p.comm, p.key, sk, p.type, t0, t1, p.posted, func, group);
    if (sk.MPI_SOURCE >= 0) r.credit(s, r.p2p_bytes - b0, r.world_rank_of(p.comm, sk.MPI_SOURCE));
  }
  return rc;
}

/// Blocking sendrecv (Sendrecv, Sendrecv_replace): one send and one receive event.
template <class Call>
int hook_sendrecv(void* ra, fn func, Call&& call, long long scount, MPI_Datatype stype, int dest, int stag,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Status* status) {
  if (tracing_off()) return call(status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  if (rc != MPI_SUCCESS) {
    r.mpi_call(ra, func, t0, t1, 0, -1);
    r.p2p_time += t1 - t0;
    return rc;
  }
  const int wdest = dest >= 0 ? r.world_rank_of(comm, dest) : -1;
  const std::uint64_t sbytes = wdest >= 0 ? type_bytes(stype, scount) : 0;  // none to MPI_PROC_NULL
  const int s = r.mpi_call(ra, func, t0, t1, sbytes, wdest);
  r.p2p_time += t1 - t0;
  const std::uint64_t key = r.comm_key(comm);
  if (wdest >= 0) {
    ++r.p2p_msgs;
    r.p2p_bytes += sbytes;
    r.push(event{.t0 = t0,
                 .t1 = t1,
                 .tpost = t0,
                 .bytes = sbytes,
                 .key = key,
                 .site = s,
                 .peer = wdest,
                 .tag = stag,
                 .seq = r.next_send_seq(wdest, stag, key),
                 .type = ev_type::send,
                 .func = func});
  }
  record_recv(r, s, comm, key, *st, rtype, t0, t1, t0, func, 0);
  return rc;
}

/// Probe, Iprobe: the time spent and the source found (no bytes move).
template <class Call>
int hook_probe(void* ra, fn func, Call&& call, MPI_Comm comm, const int* flag, MPI_Status* status) {
  if (tracing_off()) return call(status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const bool found = rc == MPI_SUCCESS && (!flag || *flag) && st->MPI_SOURCE >= 0;
  const int s = r.mpi_call(ra, func, t0, t1, 0, found ? r.world_rank_of(comm, st->MPI_SOURCE) : -1);
  r.p2p_time += t1 - t0;
  // Probing until a message is there, then receiving it, is waiting for it. Test loops are not
  // taken so: they are how programs overlap (HPCC's RandomAccess does its work between MPI_Testany).
  if (rc == MPI_SUCCESS && flag && !*flag) r.poll(s, func, t0, t1);
  return rc;
}

/// Mprobe, Improbe: as a probe; the matched message's communicator is kept for its Mrecv/Imrecv.
template <class Call>
int hook_mprobe(void* ra, fn func, Call&& call, MPI_Comm comm, const int* flag, MPI_Message* msg, MPI_Status* status) {
  if (tracing_off()) return call(status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const int rc = hook_probe(
      ra, func, [&](MPI_Status*) { return call(st); }, comm, flag, st);
  if (rc == MPI_SUCCESS && (!flag || *flag) && *msg != MPI_MESSAGE_NULL && *msg != MPI_MESSAGE_NO_PROC) {
    recorder& r = recorder::get();
    std::lock_guard lock(r.mu);
    r.messages[*msg] = comm;
  }
  return rc;
}

/// The communicator a matched message was probed on (taken: a message is received once), or
/// MPI_COMM_NULL for MPI_MESSAGE_NO_PROC and messages probed before tracing.
inline MPI_Comm take_message(MPI_Message msg) {
  if (!recorder::get().active()) return MPI_COMM_NULL;
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  auto it = r.messages.find(msg);
  if (it == r.messages.end()) return MPI_COMM_NULL;
  const MPI_Comm comm = it->second;
  r.messages.erase(it);
  return comm;
}

/// Mrecv: a receive on the message's communicator (nothing to attribute without one).
template <class Call>
int hook_mrecv(void* ra, Call&& call, MPI_Datatype type, MPI_Message msg, MPI_Status* status) {
  const MPI_Comm comm = take_message(msg);
  if (comm == MPI_COMM_NULL) {
    if (tracing_off()) return call(status);
    double t0, t1;
    MPI_Status own;
    const int rc = timed([&] { return call(status == MPI_STATUS_IGNORE ? &own : status); }, t0, t1);
    recorder& r = recorder::get();
    std::lock_guard lock(r.mu);
    r.mpi_call(ra, f_mrecv, t0, t1, 0, -1);
    r.p2p_time += t1 - t0;
    return rc;
  }
  return hook_recv(ra, f_mrecv, call, type, comm, status);
}

/// Imrecv: pending like an Irecv from the message's source (known at completion).
template <class Call>
int hook_imrecv(void* ra, Call&& call, long long count, MPI_Datatype type, MPI_Message msg, MPI_Request* req) {
  const MPI_Comm comm = take_message(msg);
  if (comm == MPI_COMM_NULL) return hook_irecv(ra, f_imrecv, call, 0, type, MPI_PROC_NULL, MPI_COMM_SELF, req);
  return hook_irecv(ra, f_imrecv, call, count, type, MPI_ANY_SOURCE, comm, req);
}

/// Send_init, Recv_init (and the Bsend/Ssend/Rsend variants): remembers what each Start moves.
template <class Call>
int hook_p2p_init(void* ra, fn func, Call&& call, long long count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                  MPI_Request* req) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  r.mpi_call(ra, func, t0, t1, 0, rc == MPI_SUCCESS && peer >= 0 ? r.world_rank_of(comm, peer) : -1);
  r.p2p_time += t1 - t0;
  if (rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL)
    r.persistent[*req] = persistent_req{count, type, peer, tag, comm, func == f_recv_init};
  return rc;
}

/// The init of a persistent collective: counted without bytes, as collective time; on success
/// describe(r) is the request's persistent_req, whose starts are calls of func (hook_start).
template <class Call, class Describe>
int hook_persistent_coll(void* ra, fn func, Call&& call, MPI_Request* req, Describe&& describe) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  r.mpi_call(ra, func, t0, t1, 0, -1);
  r.coll_time += t1 - t0;
  if (rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL) {
    persistent_req p = describe(r);
    p.init = func;
    r.persistent[*req] = std::move(p);
  }
  return rc;
}

/// Persistent collectives (MPIX_*_init): the init is counted without bytes; each start of the
/// request is a call of func at the Start/Startall's address, with `bytes`.
template <class Call>
int hook_coll_init(void* ra, fn func, Call&& call, std::uint64_t bytes, MPI_Comm comm, MPI_Request* req) {
  return hook_persistent_coll(ra, func, call, req, [&](recorder&) {
    return persistent_req{0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, comm, false, true, bytes};
  });
}

/// The persistent request req as its init described it, or nullptr (made before MPI_Init's hook).
inline const persistent_req* persistent_of(const recorder& r, MPI_Request req) {
  const auto it = r.persistent.find(req);
  return it == r.persistent.end() ? nullptr : &it->second;
}

/// The one place that decides what a start of p counts as: a persistent collective's start is a call
/// of its init's function (MPIX_Allreduce_init: collective communication, as the metrics read the
/// name); any other start, of a persistent send or receive, is a call of the start function itself
/// (MPI_Start, MPI_Startall: point-to-point).
inline fn started_as(const persistent_req* p, fn start) { return p && p->coll ? static_cast<fn>(p->init) : start; }

/// One persistent request p (req) started at site s: a collective credits the site with its bytes, a
/// send becomes a send event credited to the site, a receive becomes pending until its completion.
inline void start_one(recorder& r, int s, fn func, MPI_Request req, const persistent_req& p, double t0, double t1) {
  if (p.coll) {  // a collective posted here, as its nonblocking twin would be
    if (p.coll_partners.empty()) r.credit(s, p.coll_bytes, -1);
    for (const auto& [partner, bytes] : p.coll_partners) r.credit(s, bytes, partner);
    ++r.coll_calls;
    return;
  }
  const std::uint64_t key = r.comm_key(p.comm);
  if (p.recv) {
    r.pending[req] = pending_recv{t0, key, s, p.comm, p.type};
    return;
  }
  if (p.peer < 0) return;  // MPI_PROC_NULL
  const std::uint64_t bytes = type_bytes(p.type, p.count);
  const int wdest = r.world_rank_of(p.comm, p.peer);
  r.credit(s, bytes, wdest);
  ++r.p2p_msgs;
  r.p2p_bytes += bytes;
  r.push(event{.t0 = t0,
               .t1 = t1,
               .tpost = t0,
               .bytes = bytes,
               .key = key,
               .site = s,
               .peer = wdest,
               .tag = p.tag,
               .seq = r.next_send_seq(wdest, p.tag, key),
               .type = ev_type::send,
               .func = func});
}

/// Start, Startall: `reqs` as before the call. The call is one call of each function its requests
/// are started as (started_as) at this address: the persistent collectives' starts are collective
/// communication, the sends' and receives' point-to-point. Its time is shared among those functions
/// by their number of requests, in consecutive slices of [t0, t1], so the compute before the call
/// and the rank's MPI time are one call's.
template <class Call>
int hook_start(void* ra, fn func, Call&& call, const MPI_Request* reqs, int n) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  if (rc != MPI_SUCCESS || n <= 0) {  // nothing started
    r.mpi_call(ra, func, t0, t1, 0, -1);
    r.p2p_time += t1 - t0;
    return rc;
  }
  std::array<int, fn_count> requests{}, site{};  // per function started as: requests, then its site
  for (int i = 0; i < n; ++i) ++requests[started_as(persistent_of(r, reqs[i]), func)];
  int sliced = 0;
  double t = t0;
  for (int i = 0; i < n; ++i) {
    const persistent_req* p = persistent_of(r, reqs[i]);
    const fn as = started_as(p, func);
    if (requests[as] > 0) {  // the first request started as `as`: the call's slice for them all
      sliced += requests[as];
      requests[as] = 0;
      const double te = sliced == n ? t1 : t0 + (t1 - t0) * sliced / n;
      site[as] = r.mpi_call(ra, as, t, te, 0, -1);
      (as == func ? r.p2p_time : r.coll_time) += te - t;
      t = te;
    }
    if (p) start_one(r, site[as], func, reqs[i], *p, t0, t1);
  }
  return rc;
}

inline void forget_request(MPI_Request req) {
  if (!recorder::get().active()) return;
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  r.persistent.erase(req);
  r.pending.erase(req);
}

/// Collectives. A blocking one becomes a collective event the wait-state analysis matches across
/// ranks; a nonblocking one (Ibcast, ...) is counted where it is posted, with its bytes, and its
/// waiting is charged to the completion call that finishes it.
template <class Call>
int hook_coll(void* ra, fn func, Call&& call, std::uint64_t bytes, MPI_Comm comm, bool nonblocking = false) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int s = r.mpi_call(ra, func, t0, t1, rc == MPI_SUCCESS ? bytes : 0, -1);
  r.coll_time += t1 - t0;
  ++r.coll_calls;
  if (nonblocking || rc != MPI_SUCCESS) return rc;  // a failed collective is no instance to match
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

/// The destinations of a neighbourhood collective on comm's topology, in MPI's order (for a
/// Cartesian one: per dimension, the -1 then the +1 neighbour). Reuses a per-thread buffer.
inline const std::vector<int>& out_neighbours(MPI_Comm comm) {
  thread_local std::vector<int> out, in;
  out.clear();
  int topo = MPI_UNDEFINED;
  PMPI_Topo_test(comm, &topo);
  if (topo == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    for (int d = 0; d < ndims; ++d) {
      int src = 0, dst = 0;
      PMPI_Cart_shift(comm, d, 1, &src, &dst);
      out.push_back(src);
      out.push_back(dst);
    }
  } else if (topo == MPI_GRAPH) {
    int rank = 0, n = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    out.resize(static_cast<std::size_t>(n));
    if (n > 0) PMPI_Graph_neighbors(comm, rank, n, out.data());
  } else if (topo == MPI_DIST_GRAPH) {
    int nin = 0, nout = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &nin, &nout, &weighted);
    in.resize(static_cast<std::size_t>(nin));
    out.resize(static_cast<std::size_t>(nout));
    PMPI_Dist_graph_neighbors(comm, nin, in.data(), MPI_UNWEIGHTED, nout, out.data(), MPI_UNWEIGHTED);
  }
  return out;
}

/// Neighbourhood collectives: bytes(i) is what goes to the i-th destination; each destination is
/// credited as a partner of the site. They synchronise neighbours only, not the communicator, so
/// they are no collective events for the wait-state analysis.
template <class Call, class Bytes>
int hook_neighbor(void* ra, fn func, Call&& call, Bytes&& bytes, MPI_Comm comm) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  const int s = r.mpi_call(ra, func, t0, t1, 0, -1);
  r.coll_time += t1 - t0;
  ++r.coll_calls;
  if (rc != MPI_SUCCESS) return rc;
  const std::vector<int>& dst = out_neighbours(comm);
  for (std::size_t i = 0; i < dst.size(); ++i) {
    if (dst[i] < 0) continue;  // MPI_PROC_NULL at a mesh's edge
    r.credit(s, bytes(static_cast<int>(i)), r.world_rank_of(comm, dst[i]));
  }
  return rc;
}

/// Persistent neighbourhood collectives (MPIX_Neighbor_*_init): the init is counted without bytes
/// (as hook_coll_init); each start of the request is a call of func at the Start/Startall's address,
/// credited with what the blocking twin credits (hook_neighbor): bytes(i) to the i-th destination.
/// Destinations and bytes are taken here, once: the arguments are fixed for the request's life, and
/// the program may free its datatypes before a start.
template <class Call, class Bytes>
int hook_neighbor_init(void* ra, fn func, Call&& call, Bytes&& bytes, MPI_Comm comm, MPI_Request* req) {
  return hook_persistent_coll(ra, func, call, req, [&](recorder& r) {
    persistent_req p{0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, comm, false, true, 0};
    const std::vector<int>& dst = out_neighbours(comm);
    for (std::size_t i = 0; i < dst.size(); ++i) {
      if (dst[i] < 0) continue;  // MPI_PROC_NULL at a mesh's edge
      p.coll_partners.emplace_back(r.world_rank_of(comm, dst[i]), bytes(static_cast<int>(i)));
    }
    return p;
  });
}

/// MPI-IO: recorded as I/O (open, close: no bytes).
template <class Call>
int hook_file(void* ra, fn func, fn kind, Call&& call) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  busy_guard g;
  recorder::get().io(ra, func, kind, t0, t1, 0);
  return rc;
}

template <class Call>
int hook_file_rw(void* ra, fn func, fn kind, Call&& call, long long count, MPI_Datatype type, MPI_Status* status) {
  if (tracing_off()) return call(status);
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  double t0, t1;
  const int rc = timed([&] { return call(st); }, t0, t1);
  int got = MPI_UNDEFINED;
  if (rc == MPI_SUCCESS) PMPI_Get_count(st, type, &got);
  busy_guard g;
  recorder::get().io(ra, func, kind, t0, t1,
                     rc != MPI_SUCCESS ? 0 : type_bytes(type, got == MPI_UNDEFINED ? count : got));
  return rc;
}

/// Nonblocking (iread, iwrite): the bytes requested, when posted (the status comes with the wait).
template <class Call>
int hook_file_irw(void* ra, fn func, fn kind, Call&& call, long long count, MPI_Datatype type) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  busy_guard g;
  recorder::get().io(ra, func, kind, t0, t1, rc == MPI_SUCCESS ? type_bytes(type, count) : 0);
  return rc;
}

/// One-sided: the origin's bytes, the target's world rank (by the window's group) as partner.
template <class Call>
int hook_rma(void* ra, fn func, Call&& call, std::uint64_t bytes, MPI_Win win, int target) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  // A failed call, or one with MPI_PROC_NULL as target (a no-op), moves nothing.
  const bool moves = rc == MPI_SUCCESS && target >= 0;
  r.mpi_call(ra, func, t0, t1, moves ? bytes : 0, moves ? r.world_rank_of(win, target) : -1);
  r.p2p_time += t1 - t0;
  return rc;
}

template <class Call>
int hook_win_create(void* ra, fn func, Call&& call, MPI_Comm comm, MPI_Win* win) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  r.mpi_call(ra, func, t0, t1, 0, -1);
  r.coll_time += t1 - t0;
  if (rc == MPI_SUCCESS) r.remember_window(*win, comm);
  return rc;
}

}  // namespace toru::tune::shim
