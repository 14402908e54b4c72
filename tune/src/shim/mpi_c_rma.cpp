// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of one-sided communication: Put/Get/Accumulate (bytes of the origin buffer, the target
// as partner), the synchronisation calls (Win_fence; Win_lock/unlock with the target as partner)
// and window creation and release (which keep the window's ranks for the partner's world rank).
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
template <class Call>
int hook_rma(void* ra, fn func, Call&& call, std::uint64_t bytes, MPI_Win win, int target) {
  if (tracing_off()) return call();
  double t0, t1;
  const int rc = timed(call, t0, t1);
  recorder& r = recorder::get();
  std::lock_guard lock(r.mu);
  r.mpi_call(ra, func, t0, t1, bytes, target >= 0 ? r.world_rank_of(win, target) : -1);
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
}  // namespace

TORU_EXPORT int MPI_Put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                        MPI_Datatype ttype, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_put, [&] { return PMPI_Put(obuf, ocount, otype, target, tdisp, tcount, ttype, win); },
      type_bytes(otype, ocount), win, target);
}

TORU_EXPORT int MPI_Get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                        MPI_Datatype ttype, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_get, [&] { return PMPI_Get(obuf, ocount, otype, target, tdisp, tcount, ttype, win); },
      type_bytes(otype, ocount), win, target);
}

TORU_EXPORT int MPI_Accumulate(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                               MPI_Datatype ttype, MPI_Op op, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_accumulate,
      [&] { return PMPI_Accumulate(obuf, ocount, otype, target, tdisp, tcount, ttype, op, win); },
      type_bytes(otype, ocount), win, target);
}

TORU_EXPORT int MPI_Win_fence(int assert_, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_fence, [&] { return PMPI_Win_fence(assert_, win); }, 0, win, -1);
}

TORU_EXPORT int MPI_Win_lock(int type, int target, int assert_, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_lock, [&] { return PMPI_Win_lock(type, target, assert_, win); }, 0, win, target);
}

TORU_EXPORT int MPI_Win_unlock(int target, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_unlock, [&] { return PMPI_Win_unlock(target, win); }, 0, win, target);
}

TORU_EXPORT int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return hook_win_create(
      TORU_RA, f_win_create, [&] { return PMPI_Win_create(base, size, disp_unit, info, comm, win); }, comm, win);
}

TORU_EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* base, MPI_Win* win) {
  return hook_win_create(
      TORU_RA, f_win_allocate, [&] { return PMPI_Win_allocate(size, disp_unit, info, comm, base, win); }, comm, win);
}

TORU_EXPORT int MPI_Win_free(MPI_Win* win) {
  if (tracing_off()) return PMPI_Win_free(win);
  {
    recorder& r = recorder::get();
    std::lock_guard lock(r.mu);
    r.windows.erase(*win);
  }
  return hook_rma(
      TORU_RA, f_win_free, [&] { return PMPI_Win_free(win); }, 0, MPI_WIN_NULL, -1);
}
