// SPDX-License-Identifier: BSD-3-Clause
// The Fortran wrappers, one line of description per MPI call, each exported for mpif.h / `use mpi`
// (mpi_NAME_) and for `use mpi_f08` (mpi_NAME_f08_): Open MPI's Fortran layers call the C PMPI_*
// entry points directly, so the C wrappers never see Fortran calls. Each converts the handles and
// records through the same hooks as the C wrappers (fortran_wrap.hpp says how).
#include <mpi.h>
// after mpi.h, which defines what it needs (OMPI_DECLSPEC)
#include <mpi-ext.h>

#include "coll_bytes.hpp"
#include "fortran_wrap.hpp"

using namespace toru::tune::shim;
using namespace toru::tune::shim::fortran;

namespace toru::tune::shim::fortran {
namespace {
/// The C request a successful call left in *req (hooks that remember requests read it after).
int c_request(int rc, const F* req, MPI_Request& creq) {
  if (rc == MPI_SUCCESS) creq = PMPI_Request_f2c(*req);
  return rc;
}
/// Requests converted before a call that may change them (Startall).
struct c_requests {
  MPI_Request small[16];
  std::vector<MPI_Request> big;
  MPI_Request* p = small;
  c_requests(const F* f, int n) {
    if (n > 16) {
      big.resize(static_cast<std::size_t>(n));
      p = big.data();
    }
    for (int i = 0; i < n; ++i) p[i] = PMPI_Request_f2c(f[i]);
  }
};
std::uint64_t alltoallw_fbytes(bool in_place, const F* scounts, const F* stypes, const F* rcounts, const F* rtypes,
                               MPI_Comm comm) {
  const int n = comm_size(comm);
  return in_place ? w_bytes(
                        I(rcounts), [&](int i) { return T(&rtypes[i]); }, n)
                  : w_bytes(
                        I(scounts), [&](int i) { return T(&stypes[i]); }, n);
}
void forget_window(const F* win) {
  if (tracing_off()) return;
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  r.windows.erase(W(win));
}
void forget_comm(const F* comm) {
  if (!recorder::get().active()) return;
  std::lock_guard lock(recorder::get().mu);
  recorder::get().forget_comm(C(comm));
}
}  // namespace
}  // namespace toru::tune::shim::fortran

// --- start and end ---------------------------------------------------------------------------
// MPI_Init and MPI_Finalize take no argument but ierror, which the table's macro cannot express.

namespace {
template <class Real>
void init(Real real, F* ierr) {
  real(ierr);
  if (*ierr == MPI_SUCCESS) recorder::get().on_init();
}
template <class Real>
void finalize(Real real, F* ierr) {
  recorder::get().on_finalize();
  real(ierr);
}
using ierr_only = void (*)(F*);
}  // namespace

TORU_FORTRAN_EXPORT void mpi_init_(F* ierr) { init(real<ierr_only>("pmpi_init_"), ierr); }
TORU_FORTRAN_EXPORT void mpi_init_f08_(F* ierr) {
  F own = 0;
  init(real<ierr_only>("pmpi_init_f08_"), ierr ? ierr : &own);
}
TORU_FORTRAN_EXPORT void mpi_finalize_(F* ierr) { finalize(real<ierr_only>("pmpi_finalize_"), ierr); }
TORU_FORTRAN_EXPORT void mpi_finalize_f08_(F* ierr) {
  F own = 0;
  finalize(real<ierr_only>("pmpi_finalize_f08_"), ierr ? ierr : &own);
}
TORU_FORTRAN(init_thread, (F * required, F* provided), (required, provided),
             if (real(required, provided) == MPI_SUCCESS) recorder::get().on_init())
TORU_FORTRAN(comm_free, (F * comm), (comm), forget_comm(comm); real(comm))

// --- point-to-point --------------------------------------------------------------------------

#define TORU_F_SEND(name)                                                                                           \
  TORU_FORTRAN(name, (void* buf, F* count, F* type, F* dest, F* tag, F* comm), (buf, count, type, dest, tag, comm), \
               hook_send(                                                                                           \
                   ra, f_##name, [&] { return real(buf, count, type, dest, tag, comm); }, *count, T(type), *dest,   \
                   *tag, C(comm)))                                                                                  \
  TORU_FORTRAN(i##name, (void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* req),                           \
               (buf, count, type, dest, tag, comm, req),                                                            \
               hook_send(                                                                                           \
                   ra, f_i##name, [&] { return real(buf, count, type, dest, tag, comm, req); }, *count, T(type),    \
                   *dest, *tag, C(comm)))
TORU_F_SEND(send)
TORU_F_SEND(ssend)
TORU_F_SEND(bsend)
TORU_F_SEND(rsend)

TORU_FORTRAN(recv, (void* buf, F* count, F* type, F* source, F* tag, F* comm, F* status),
             (buf, count, type, source, tag, comm, status),
             hook_recv(ra, f_recv,
                       with_status(status, [&](F* fs) { return real(buf, count, type, source, tag, comm, fs); }),
                       T(type), C(comm), MPI_STATUS_IGNORE))
TORU_FORTRAN(irecv, (void* buf, F* count, F* type, F* source, F* tag, F* comm, F* req),
             (buf, count, type, source, tag, comm, req), MPI_Request creq = MPI_REQUEST_NULL;
             hook_irecv(
                 ra, f_irecv, [&] { return c_request(real(buf, count, type, source, tag, comm, req), req, creq); },
                 *count, T(type), *source, C(comm), &creq))
TORU_FORTRAN(sendrecv,
             (void* sbuf, F* scount, F* stype, F* dest, F* stag, void* rbuf, F* rcount, F* rtype, F* source, F* rtag,
              F* comm, F* status),
             (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status),
             hook_sendrecv(ra, f_sendrecv,
                           with_status(status,
                                       [&](F* fs) {
                                         return real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                                                     comm, fs);
                                       }),
                           *scount, T(stype), *dest, *stag, T(rtype), C(comm), MPI_STATUS_IGNORE))
TORU_FORTRAN(sendrecv_replace, (void* buf, F* count, F* type, F* dest, F* stag, F* source, F* rtag, F* comm, F* status),
             (buf, count, type, dest, stag, source, rtag, comm, status),
             hook_sendrecv(
                 ra, f_sendrecv_replace,
                 with_status(status, [&](F* fs) { return real(buf, count, type, dest, stag, source, rtag, comm, fs); }),
                 *count, T(type), *dest, *stag, T(type), C(comm), MPI_STATUS_IGNORE))
TORU_FORTRAN(probe, (F * source, F* tag, F* comm, F* status), (source, tag, comm, status),
             hook_probe(ra, f_probe, with_status(status, [&](F* fs) { return real(source, tag, comm, fs); }), C(comm),
                        nullptr, MPI_STATUS_IGNORE))
TORU_FORTRAN(iprobe, (F * source, F* tag, F* comm, F* flag, F* status), (source, tag, comm, flag, status),
             hook_probe(ra, f_iprobe, with_status(status, [&](F* fs) { return real(source, tag, comm, flag, fs); }),
                        C(comm), flag, MPI_STATUS_IGNORE))
TORU_FORTRAN(mprobe, (F * source, F* tag, F* comm, F* msg, F* status), (source, tag, comm, msg, status),
             MPI_Message cmsg = MPI_MESSAGE_NULL;
             hook_mprobe(ra, f_mprobe,
                         with_status(status,
                                     [&](F* fs) {
                                       const int rc = real(source, tag, comm, msg, fs);
                                       if (rc == MPI_SUCCESS) cmsg = PMPI_Message_f2c(*msg);
                                       return rc;
                                     }),
                         C(comm), nullptr, &cmsg, MPI_STATUS_IGNORE))
TORU_FORTRAN(improbe, (F * source, F* tag, F* comm, F* flag, F* msg, F* status), (source, tag, comm, flag, msg, status),
             MPI_Message cmsg = MPI_MESSAGE_NULL;
             hook_mprobe(ra, f_improbe,
                         with_status(status,
                                     [&](F* fs) {
                                       const int rc = real(source, tag, comm, flag, msg, fs);
                                       if (rc == MPI_SUCCESS && *flag) cmsg = PMPI_Message_f2c(*msg);
                                       return rc;
                                     }),
                         C(comm), flag, &cmsg, MPI_STATUS_IGNORE))
TORU_FORTRAN(mrecv, (void* buf, F* count, F* type, F* msg, F* status), (buf, count, type, msg, status),
             hook_mrecv(ra, with_status(status, [&](F* fs) { return real(buf, count, type, msg, fs); }), T(type),
                        PMPI_Message_f2c(*msg), MPI_STATUS_IGNORE))
TORU_FORTRAN(imrecv, (void* buf, F* count, F* type, F* msg, F* req), (buf, count, type, msg, req),
             MPI_Request creq = MPI_REQUEST_NULL;
             hook_imrecv(
                 ra, [&] { return c_request(real(buf, count, type, msg, req), req, creq); }, *count, T(type),
                 PMPI_Message_f2c(*msg), &creq))

// Persistent requests.
#define TORU_F_INIT(name, func)                                                                                  \
  TORU_FORTRAN(name, (void* buf, F* count, F* type, F* peer, F* tag, F* comm, F* req),                           \
               (buf, count, type, peer, tag, comm, req), MPI_Request creq = MPI_REQUEST_NULL;                    \
               hook_p2p_init(                                                                                    \
                   ra, func, [&] { return c_request(real(buf, count, type, peer, tag, comm, req), req, creq); }, \
                   *count, T(type), *peer, *tag, C(comm), &creq))
TORU_F_INIT(send_init, f_send_init)
TORU_F_INIT(ssend_init, f_send_init)
TORU_F_INIT(bsend_init, f_send_init)
TORU_F_INIT(rsend_init, f_send_init)
TORU_F_INIT(recv_init, f_recv_init)
TORU_FORTRAN(start, (F * req), (req), const MPI_Request before = PMPI_Request_f2c(*req); hook_start(
                 ra, f_start, [&] { return real(req); }, &before, 1))
TORU_FORTRAN(startall, (F * n, F* reqs), (n, reqs), const c_requests before(reqs, *n); hook_start(
                 ra, f_startall, [&] { return real(n, reqs); }, before.p, *n))
TORU_FORTRAN(request_free, (F * req), (req), forget_request(PMPI_Request_f2c(*req)); real(req))

// Completion.
TORU_FORTRAN(wait, (F * req, F* status), (req, status),
             hook_fwait(
                 ra, f_wait, [&](F* fs) { return real(req, fs); }, req, 1, status, completed{}))
TORU_FORTRAN(waitall, (F * n, F* reqs, F* statuses), (n, reqs, statuses),
             hook_fwait(
                 ra, f_waitall, [&](F* fs) { return real(n, reqs, fs); }, reqs, *n, statuses, completed{}))
TORU_FORTRAN(waitany, (F * n, F* reqs, F* index, F* status), (n, reqs, index, status),
             hook_fwait(
                 ra, f_waitany, [&](F* fs) { return real(n, reqs, index, fs); }, reqs, *n, status,
                 completed{.which = completed::one, .index = index}))
TORU_FORTRAN(waitsome, (F * n, F* reqs, F* outcount, F* indices, F* statuses), (n, reqs, outcount, indices, statuses),
             hook_fwait(
                 ra, f_waitsome, [&](F* fs) { return real(n, reqs, outcount, indices, fs); }, reqs, *n, statuses,
                 completed{.which = completed::some, .outcount = outcount, .indices = indices}))
TORU_FORTRAN(test, (F * req, F* flag, F* status), (req, flag, status),
             hook_fwait(
                 ra, f_test, [&](F* fs) { return real(req, flag, fs); }, req, 1, status, completed{.flag = flag}))
TORU_FORTRAN(testall, (F * n, F* reqs, F* flag, F* statuses), (n, reqs, flag, statuses),
             hook_fwait(
                 ra, f_testall, [&](F* fs) { return real(n, reqs, flag, fs); }, reqs, *n, statuses,
                 completed{.flag = flag}))
TORU_FORTRAN(testany, (F * n, F* reqs, F* index, F* flag, F* status), (n, reqs, index, flag, status),
             hook_fwait(
                 ra, f_testany, [&](F* fs) { return real(n, reqs, index, flag, fs); }, reqs, *n, status,
                 completed{.which = completed::one, .flag = flag, .index = index}))
TORU_FORTRAN(testsome, (F * n, F* reqs, F* outcount, F* indices, F* statuses), (n, reqs, outcount, indices, statuses),
             hook_fwait(
                 ra, f_testsome, [&](F* fs) { return real(n, reqs, outcount, indices, fs); }, reqs, *n, statuses,
                 completed{.which = completed::some, .outcount = outcount, .indices = indices}))

// --- collectives: each line defines the blocking call, its nonblocking twin (MPI_I...) and its
// persistent one (MPIX_..._init) ----------------------------------------------------------------
// The last parameter of every collective is its communicator, `comm`.

#define TORU_F_COLL(name, params, names, bytes)                                                         \
  TORU_FORTRAN(name, params, names,                                                                     \
               hook_coll(                                                                               \
                   ra, f_##name, [&] { return real names; }, bytes, C(comm)))                           \
  TORU_FORTRAN(i##name, (TORU_UNPAREN params, F * req), (TORU_UNPAREN names, req),                      \
               hook_coll(                                                                               \
                   ra, f_i##name, [&] { return real(TORU_UNPAREN names, req); }, bytes, C(comm), true)) \
  TORU_F_COLL_INIT(name, params, names, bytes)

// The persistent twin, MPIX_NAME_init (info, request after the communicator), where Open MPI has
// its pcollreq extension; counted as the C wrappers in mpi_c_coll_init.cpp count it.
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define TORU_F_COLL_INIT(name, params, names, bytes)                                                             \
  TORU_FORTRAN_PREFIX(                                                                                           \
      mpix, name##_init, (TORU_UNPAREN params, F * info, F * req), (TORU_UNPAREN names, info, req),              \
      MPI_Request creq = MPI_REQUEST_NULL;                                                                       \
      hook_coll_init(                                                                                            \
          ra, f_##name##_init, [&] { return c_request(real(TORU_UNPAREN names, info, req), req, creq); }, bytes, \
          C(comm), &creq))
#else
#define TORU_F_COLL_INIT(name, params, names, bytes)
#endif

TORU_F_COLL(barrier, (F * comm), (comm), 0)
TORU_F_COLL(bcast, (void* buf, F* count, F* type, F* root, F* comm), (buf, count, type, root, comm), B(type, count))
TORU_F_COLL(reduce, (void* in, void* out, F* count, F* type, F* op, F* root, F* comm),
            (in, out, count, type, op, root, comm), B(type, count))
TORU_F_COLL(allreduce, (void* in, void* out, F* count, F* type, F* op, F* comm), (in, out, count, type, op, comm),
            B(type, count))
TORU_F_COLL(alltoall, (void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* comm),
            (in, scount, stype, out, rcount, rtype, comm),
            alltoall_bytes(in_place(in), *scount, T(stype), *rcount, T(rtype), C(comm)))
TORU_F_COLL(alltoallv,
            (void* in, F* scounts, F* sdispls, F* stype, void* out, F* rcounts, F* rdispls, F* rtype, F* comm),
            (in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm),
            alltoallv_bytes(in_place(in), I(scounts), T(stype), I(rcounts), T(rtype), C(comm)))
TORU_F_COLL(alltoallw,
            (void* in, F* scounts, F* sdispls, F* stypes, void* out, F* rcounts, F* rdispls, F* rtypes, F* comm),
            (in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm),
            alltoallw_fbytes(in_place(in), scounts, stypes, rcounts, rtypes, C(comm)))
TORU_F_COLL(allgather, (void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* comm),
            (in, scount, stype, out, rcount, rtype, comm), (in_place(in) ? B(rtype, rcount) : B(stype, scount)))
TORU_F_COLL(allgatherv, (void* in, F* scount, F* stype, void* out, F* rcounts, F* displs, F* rtype, F* comm),
            (in, scount, stype, out, rcounts, displs, rtype, comm),
            allgatherv_bytes(in_place(in), *scount, T(stype), I(rcounts), T(rtype), C(comm)))
TORU_F_COLL(gather, (void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* root, F* comm),
            (in, scount, stype, out, rcount, rtype, root, comm), (in_place(in) ? 0 : B(stype, scount)))
TORU_F_COLL(gatherv, (void* in, F* scount, F* stype, void* out, F* rcounts, F* displs, F* rtype, F* root, F* comm),
            (in, scount, stype, out, rcounts, displs, rtype, root, comm), (in_place(in) ? 0 : B(stype, scount)))
TORU_F_COLL(scatter, (void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* root, F* comm),
            (in, scount, stype, out, rcount, rtype, root, comm), (in_place(out) ? 0 : B(rtype, rcount)))
TORU_F_COLL(scatterv, (void* in, F* scounts, F* displs, F* stype, void* out, F* rcount, F* rtype, F* root, F* comm),
            (in, scounts, displs, stype, out, rcount, rtype, root, comm), (in_place(out) ? 0 : B(rtype, rcount)))
TORU_F_COLL(reduce_scatter, (void* in, void* out, F* rcounts, F* type, F* op, F* comm),
            (in, out, rcounts, type, op, comm), counts_bytes(I(rcounts), comm_size(C(comm)), T(type)))
TORU_F_COLL(reduce_scatter_block, (void* in, void* out, F* rcount, F* type, F* op, F* comm),
            (in, out, rcount, type, op, comm),
            type_bytes(T(type), static_cast<long long>(*rcount) * comm_size(C(comm))))
TORU_F_COLL(scan, (void* in, void* out, F* count, F* type, F* op, F* comm), (in, out, count, type, op, comm),
            B(type, count))
TORU_F_COLL(exscan, (void* in, void* out, F* count, F* type, F* op, F* comm), (in, out, count, type, op, comm),
            B(type, count))

// Neighbourhood: `bytes` is a function of the destination's index. Each line defines the blocking
// call, its nonblocking twin and its persistent one.
#define TORU_F_NEIGHBOR(name, params, names, bytes)                                               \
  TORU_FORTRAN(name, params, names,                                                               \
               hook_neighbor(                                                                     \
                   ra, f_##name, [&] { return real names; }, bytes, C(comm)))                     \
  TORU_FORTRAN(i##name, (TORU_UNPAREN params, F * req), (TORU_UNPAREN names, req),                \
               hook_neighbor(                                                                     \
                   ra, f_i##name, [&] { return real(TORU_UNPAREN names, req); }, bytes, C(comm))) \
  TORU_F_NEIGHBOR_INIT(name, params, names, bytes)

// The persistent twin, MPIX_NEIGHBOR_..._INIT; counted as the C wrappers in mpi_c_neighbor_init.cpp
// count it.
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define TORU_F_NEIGHBOR_INIT(name, params, names, bytes)                                                         \
  TORU_FORTRAN_PREFIX(                                                                                           \
      mpix, name##_init, (TORU_UNPAREN params, F * info, F * req), (TORU_UNPAREN names, info, req),              \
      MPI_Request creq = MPI_REQUEST_NULL;                                                                       \
      hook_neighbor_init(                                                                                        \
          ra, f_##name##_init, [&] { return c_request(real(TORU_UNPAREN names, info, req), req, creq); }, bytes, \
          C(comm), &creq))
#else
#define TORU_F_NEIGHBOR_INIT(name, params, names, bytes)
#endif

TORU_F_NEIGHBOR(neighbor_allgather, (void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* comm),
                (in, scount, stype, out, rcount, rtype, comm), ([&](int) { return B(stype, scount); }))
TORU_F_NEIGHBOR(neighbor_allgatherv,
                (void* in, F* scount, F* stype, void* out, F* rcounts, F* displs, F* rtype, F* comm),
                (in, scount, stype, out, rcounts, displs, rtype, comm), ([&](int) { return B(stype, scount); }))
TORU_F_NEIGHBOR(neighbor_alltoall, (void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* comm),
                (in, scount, stype, out, rcount, rtype, comm), ([&](int) { return B(stype, scount); }))
TORU_F_NEIGHBOR(neighbor_alltoallv,
                (void* in, F* scounts, F* sdispls, F* stype, void* out, F* rcounts, F* rdispls, F* rtype, F* comm),
                (in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm),
                ([&](int i) { return type_bytes(T(stype), scounts[i]); }))
TORU_F_NEIGHBOR(neighbor_alltoallw,
                (void* in, F* scounts, MPI_Aint* sdispls, F* stypes, void* out, F* rcounts, MPI_Aint* rdispls,
                 F* rtypes, F* comm),
                (in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm),
                ([&](int i) { return type_bytes(T(&stypes[i]), scounts[i]); }))

// --- one-sided -------------------------------------------------------------------------------

#define TORU_F_RMA(name, req_name, params, names, bytes)                              \
  TORU_FORTRAN(name, params, names,                                                   \
               hook_rma(                                                              \
                   ra, f_##name, [&] { return real names; }, bytes, W(win), *target)) \
  TORU_FORTRAN(req_name, (TORU_UNPAREN params, F * req), (TORU_UNPAREN names, req),   \
               hook_rma(                                                              \
                   ra, f_##req_name, [&] { return real(TORU_UNPAREN names, req); }, bytes, W(win), *target))

TORU_F_RMA(put, rput, (void* obuf, F* ocount, F* otype, F* target, MPI_Aint* tdisp, F* tcount, F* ttype, F* win),
           (obuf, ocount, otype, target, tdisp, tcount, ttype, win), B(otype, ocount))
TORU_F_RMA(get, rget, (void* obuf, F* ocount, F* otype, F* target, MPI_Aint* tdisp, F* tcount, F* ttype, F* win),
           (obuf, ocount, otype, target, tdisp, tcount, ttype, win), B(otype, ocount))
TORU_F_RMA(accumulate, raccumulate,
           (void* obuf, F* ocount, F* otype, F* target, MPI_Aint* tdisp, F* tcount, F* ttype, F* op, F* win),
           (obuf, ocount, otype, target, tdisp, tcount, ttype, op, win), B(otype, ocount))
TORU_FORTRAN(get_accumulate,
             (void* obuf, F* ocount, F* otype, void* rbuf, F* rcount, F* rtype, F* target, MPI_Aint* tdisp, F* tcount,
              F* ttype, F* op, F* win),
             (obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win),
             hook_rma(
                 ra, f_get_accumulate,
                 [&] { return real(obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win); },
                 B(otype, ocount), W(win), *target))
TORU_FORTRAN(fetch_and_op, (void* obuf, void* rbuf, F* type, F* target, MPI_Aint* tdisp, F* op, F* win),
             (obuf, rbuf, type, target, tdisp, op, win),
             hook_rma(
                 ra, f_fetch_and_op, [&] { return real(obuf, rbuf, type, target, tdisp, op, win); },
                 type_bytes(T(type), 1), W(win), *target))
TORU_FORTRAN(compare_and_swap, (void* obuf, void* cbuf, void* rbuf, F* type, F* target, MPI_Aint* tdisp, F* win),
             (obuf, cbuf, rbuf, type, target, tdisp, win),
             hook_rma(
                 ra, f_compare_and_swap, [&] { return real(obuf, cbuf, rbuf, type, target, tdisp, win); },
                 type_bytes(T(type), 1), W(win), *target))

// Synchronisation: the target as partner where there is one.
#define TORU_F_SYNC(name, params, names, target) \
  TORU_FORTRAN(name, params, names,              \
               hook_rma(                         \
                   ra, f_##name, [&] { return real names; }, 0, W(win), target))
TORU_F_SYNC(win_fence, (F * assert_, F* win), (assert_, win), -1)
TORU_F_SYNC(win_lock, (F * type, F* target, F* assert_, F* win), (type, target, assert_, win), *target)
TORU_F_SYNC(win_unlock, (F * target, F* win), (target, win), *target)
TORU_F_SYNC(win_flush, (F * target, F* win), (target, win), *target)
TORU_F_SYNC(win_flush_local, (F * target, F* win), (target, win), *target)
TORU_F_SYNC(win_flush_all, (F * win), (win), -1)
TORU_F_SYNC(win_flush_local_all, (F * win), (win), -1)
TORU_F_SYNC(win_lock_all, (F * assert_, F* win), (assert_, win), -1)
TORU_F_SYNC(win_unlock_all, (F * win), (win), -1)

TORU_FORTRAN(win_create, (void* base, MPI_Aint* size, F* disp_unit, F* info, F* comm, F* win),
             (base, size, disp_unit, info, comm, win), MPI_Win cwin = MPI_WIN_NULL;
             hook_win_create(
                 ra, f_win_create,
                 [&] {
                   const int rc = real(base, size, disp_unit, info, comm, win);
                   if (rc == MPI_SUCCESS) cwin = W(win);
                   return rc;
                 },
                 C(comm), &cwin))
TORU_FORTRAN(win_allocate, (MPI_Aint * size, F* disp_unit, F* info, F* comm, void* base, F* win),
             (size, disp_unit, info, comm, base, win), MPI_Win cwin = MPI_WIN_NULL;
             hook_win_create(
                 ra, f_win_allocate,
                 [&] {
                   const int rc = real(size, disp_unit, info, comm, base, win);
                   if (rc == MPI_SUCCESS) cwin = W(win);
                   return rc;
                 },
                 C(comm), &cwin))
TORU_FORTRAN(win_free, (F * win), (win), forget_window(win); hook_rma(
                 ra, f_win_free, [&] { return real(win); }, 0, MPI_WIN_NULL, -1))

// --- MPI-IO ----------------------------------------------------------------------------------

// File_open's name is a CHARACTER argument: its length comes after ierror, outside the table's form.
namespace {
using file_open_t = void (*)(F*, char*, F*, F*, F*, F*, std::size_t);
void file_open(void* ra, file_open_t real_fn, F* comm, char* name, F* amode, F* info, F* fh, F* ierr, std::size_t len) {
  hook_file(ra, f_file_open, f_io_open, [&] {
    real_fn(comm, name, amode, info, fh, ierr, len);
    return static_cast<int>(*ierr);
  });
}
}  // namespace
TORU_FORTRAN_EXPORT void mpi_file_open_(F* comm, char* name, F* amode, F* info, F* fh, F* ierr, std::size_t len) {
  static const auto fn = real<file_open_t>("pmpi_file_open_");
  file_open(__builtin_return_address(0), fn, comm, name, amode, info, fh, ierr, len);
}
TORU_FORTRAN_EXPORT void mpi_file_open_f08_(F* comm, char* name, F* amode, F* info, F* fh, F* ierr, std::size_t len) {
  static const auto fn = real<file_open_t>("pmpi_file_open_f08_");
  F own = 0;
  file_open(__builtin_return_address(0), fn, comm, name, amode, info, fh, ierr ? ierr : &own, len);
}
TORU_FORTRAN(file_close, (F * fh), (fh), hook_file(ra, f_file_close, f_io_close, [&] { return real(fh); }))

#define TORU_F_FILE(name, kind)                                                                                    \
  TORU_FORTRAN(                                                                                                    \
      name, (F * fh, void* buf, F* count, F* type, F* status), (fh, buf, count, type, status),                     \
      hook_file_rw(ra, f_##name, kind, with_status(status, [&](F* fs) { return real(fh, buf, count, type, fs); }), \
                   *count, T(type), MPI_STATUS_IGNORE))
#define TORU_F_FILE_AT(name, kind)                                                                                   \
  TORU_FORTRAN(name, (F * fh, MPI_Offset * off, void* buf, F* count, F* type, F* status),                            \
               (fh, off, buf, count, type, status),                                                                  \
               hook_file_rw(ra, f_##name, kind,                                                                      \
                            with_status(status, [&](F* fs) { return real(fh, off, buf, count, type, fs); }), *count, \
                            T(type), MPI_STATUS_IGNORE))
TORU_F_FILE_AT(file_read_at, f_io_read)
TORU_F_FILE_AT(file_read_at_all, f_io_read)
TORU_F_FILE_AT(file_write_at, f_io_write)
TORU_F_FILE_AT(file_write_at_all, f_io_write)
TORU_F_FILE(file_read, f_io_read)
TORU_F_FILE(file_read_all, f_io_read)
TORU_F_FILE(file_write, f_io_write)
TORU_F_FILE(file_write_all, f_io_write)
TORU_F_FILE(file_read_shared, f_io_read)
TORU_F_FILE(file_write_shared, f_io_write)
TORU_F_FILE(file_read_ordered, f_io_read)
TORU_F_FILE(file_write_ordered, f_io_write)

TORU_FORTRAN(file_iread, (F * fh, void* buf, F* count, F* type, F* req), (fh, buf, count, type, req),
             hook_file_irw(
                 ra, f_file_iread, f_io_read, [&] { return real(fh, buf, count, type, req); }, *count, T(type)))
TORU_FORTRAN(file_iwrite, (F * fh, void* buf, F* count, F* type, F* req), (fh, buf, count, type, req),
             hook_file_irw(
                 ra, f_file_iwrite, f_io_write, [&] { return real(fh, buf, count, type, req); }, *count, T(type)))
TORU_FORTRAN(file_iread_shared, (F * fh, void* buf, F* count, F* type, F* req), (fh, buf, count, type, req),
             hook_file_irw(
                 ra, f_file_iread_shared, f_io_read, [&] { return real(fh, buf, count, type, req); }, *count, T(type)))
TORU_FORTRAN(file_iwrite_shared, (F * fh, void* buf, F* count, F* type, F* req), (fh, buf, count, type, req),
             hook_file_irw(
                 ra, f_file_iwrite_shared, f_io_write, [&] { return real(fh, buf, count, type, req); }, *count,
                 T(type)))
TORU_FORTRAN(file_iread_at, (F * fh, MPI_Offset* off, void* buf, F* count, F* type, F* req),
             (fh, off, buf, count, type, req),
             hook_file_irw(
                 ra, f_file_iread_at, f_io_read, [&] { return real(fh, off, buf, count, type, req); }, *count, T(type)))
TORU_FORTRAN(file_iwrite_at, (F * fh, MPI_Offset* off, void* buf, F* count, F* type, F* req),
             (fh, off, buf, count, type, req),
             hook_file_irw(
                 ra, f_file_iwrite_at, f_io_write, [&] { return real(fh, off, buf, count, type, req); }, *count,
                 T(type)))
