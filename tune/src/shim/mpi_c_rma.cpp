// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of one-sided communication: Put/Get/Accumulate and their request-based (Rput, ...) and
// atomic (Get_accumulate, Fetch_and_op, Compare_and_swap) forms (bytes of the origin buffer, the
// target as partner), the synchronisation calls (Win_fence, Win_lock/unlock and Win_flush* with the
// target as partner, Win_lock_all/unlock_all)
// and window creation and release (which keep the window's ranks for the partner's world rank).
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

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

TORU_EXPORT int MPI_Rput(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                         MPI_Datatype ttype, MPI_Win win, MPI_Request* req) {
  return hook_rma(
      TORU_RA, f_rput, [&] { return PMPI_Rput(obuf, ocount, otype, target, tdisp, tcount, ttype, win, req); },
      type_bytes(otype, ocount), win, target);
}

TORU_EXPORT int MPI_Rget(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
                         MPI_Datatype ttype, MPI_Win win, MPI_Request* req) {
  return hook_rma(
      TORU_RA, f_rget, [&] { return PMPI_Rget(obuf, ocount, otype, target, tdisp, tcount, ttype, win, req); },
      type_bytes(otype, ocount), win, target);
}

TORU_EXPORT int MPI_Raccumulate(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                                int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request* req) {
  return hook_rma(
      TORU_RA, f_raccumulate,
      [&] { return PMPI_Raccumulate(obuf, ocount, otype, target, tdisp, tcount, ttype, op, win, req); },
      type_bytes(otype, ocount), win, target);
}

// The atomics: bytes of the origin buffer (what goes to the target; MPI_NO_OP sends none, but its
// origin count still says what the call covers).
TORU_EXPORT int MPI_Get_accumulate(const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount,
                                   MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype,
                                   MPI_Op op, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_get_accumulate,
      [&] {
        return PMPI_Get_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, tdisp, tcount, ttype, op, win);
      },
      type_bytes(otype, ocount), win, target);
}

TORU_EXPORT int MPI_Fetch_and_op(const void* obuf, void* rbuf, MPI_Datatype type, int target, MPI_Aint tdisp, MPI_Op op,
                                 MPI_Win win) {
  return hook_rma(
      TORU_RA, f_fetch_and_op, [&] { return PMPI_Fetch_and_op(obuf, rbuf, type, target, tdisp, op, win); },
      type_bytes(type, 1), win, target);
}

TORU_EXPORT int MPI_Compare_and_swap(const void* obuf, const void* cbuf, void* rbuf, MPI_Datatype type, int target,
                                     MPI_Aint tdisp, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_compare_and_swap, [&] { return PMPI_Compare_and_swap(obuf, cbuf, rbuf, type, target, tdisp, win); },
      type_bytes(type, 1), win, target);
}

TORU_EXPORT int MPI_Win_flush(int target, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_flush, [&] { return PMPI_Win_flush(target, win); }, 0, win, target);
}

TORU_EXPORT int MPI_Win_flush_local(int target, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_flush_local, [&] { return PMPI_Win_flush_local(target, win); }, 0, win, target);
}

TORU_EXPORT int MPI_Win_flush_all(MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_flush_all, [&] { return PMPI_Win_flush_all(win); }, 0, win, -1);
}

TORU_EXPORT int MPI_Win_flush_local_all(MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_flush_local_all, [&] { return PMPI_Win_flush_local_all(win); }, 0, win, -1);
}

TORU_EXPORT int MPI_Win_lock_all(int assert_, MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_lock_all, [&] { return PMPI_Win_lock_all(assert_, win); }, 0, win, -1);
}

TORU_EXPORT int MPI_Win_unlock_all(MPI_Win win) {
  return hook_rma(
      TORU_RA, f_win_unlock_all, [&] { return PMPI_Win_unlock_all(win); }, 0, win, -1);
}
