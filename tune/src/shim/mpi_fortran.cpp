// SPDX-License-Identifier: BSD-3-Clause
// Fortran MPI wrappers (mpif.h and the `mpi` module, which call the mpi_*_ symbols): Open MPI's
// Fortran bindings call the C PMPI_* entry points directly, so the C wrappers never see Fortran
// calls. Each wrapper here forwards to the Fortran pmpi_*_ symbol, looked up at first use (a C
// program never loads the Fortran library, and this library must not require it).
#include <dlfcn.h>
#include <mpi.h>

#include "fortran_real.hpp"
#include "hooks.hpp"

using namespace toru::tune::shim;
using F = MPI_Fint;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT void mpi_init_(F* ierr) {
  TORU_REAL(pmpi_init, F*);
  real_pmpi_init(ierr);
  if (*ierr == MPI_SUCCESS) recorder::get().on_init();
}

TORU_EXPORT void mpi_init_thread_(F* required, F* provided, F* ierr) {
  TORU_REAL(pmpi_init_thread, F*, F*, F*);
  real_pmpi_init_thread(required, provided, ierr);
  if (*ierr == MPI_SUCCESS) recorder::get().on_init();
}

TORU_EXPORT void mpi_finalize_(F* ierr) {
  TORU_REAL(pmpi_finalize, F*);
  recorder::get().on_finalize();
  real_pmpi_finalize(ierr);
}

TORU_EXPORT void mpi_send_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) {
  TORU_REAL(pmpi_send, void*, F*, F*, F*, F*, F*, F*);
  hook_send(
      TORU_RA, f_send,
      [&] {
        real_pmpi_send(buf, count, type, dest, tag, comm, ierr);
        return static_cast<int>(*ierr);
      },
      *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_ssend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* ierr) {
  TORU_REAL(pmpi_ssend, void*, F*, F*, F*, F*, F*, F*);
  hook_send(
      TORU_RA, f_ssend,
      [&] {
        real_pmpi_ssend(buf, count, type, dest, tag, comm, ierr);
        return static_cast<int>(*ierr);
      },
      *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_isend_(void* buf, F* count, F* type, F* dest, F* tag, F* comm, F* req, F* ierr) {
  TORU_REAL(pmpi_isend, void*, F*, F*, F*, F*, F*, F*, F*);
  hook_send(
      TORU_RA, f_isend,
      [&] {
        real_pmpi_isend(buf, count, type, dest, tag, comm, req, ierr);
        return static_cast<int>(*ierr);
      },
      *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_recv_(void* buf, F* count, F* type, F* source, F* tag, F* comm, F* status, F* ierr) {
  TORU_REAL(pmpi_recv, void*, F*, F*, F*, F*, F*, F*, F*);
  hook_recv(
      TORU_RA,
      [&](MPI_Status* st) {
        F own[status_size];
        F* fs = status == MPI_F_STATUS_IGNORE ? own : status;
        real_pmpi_recv(buf, count, type, source, tag, comm, fs, ierr);
        if (st != MPI_STATUS_IGNORE) MPI_Status_f2c(fs, st);
        return static_cast<int>(*ierr);
      },
      MPI_Type_f2c(*type), MPI_Comm_f2c(*comm), MPI_STATUS_IGNORE);
}

TORU_EXPORT void mpi_irecv_(void* buf, F* count, F* type, F* source, F* tag, F* comm, F* req, F* ierr) {
  TORU_REAL(pmpi_irecv, void*, F*, F*, F*, F*, F*, F*, F*);
  MPI_Request creq = MPI_REQUEST_NULL;
  hook_irecv(
      TORU_RA,
      [&] {
        real_pmpi_irecv(buf, count, type, source, tag, comm, req, ierr);
        creq = MPI_Request_f2c(*req);
        return static_cast<int>(*ierr);
      },
      *count, MPI_Type_f2c(*type), *source, MPI_Comm_f2c(*comm), &creq);
}

TORU_EXPORT void mpi_wait_(F* req, F* status, F* ierr) {
  TORU_REAL(pmpi_wait, F*, F*, F*);
  const MPI_Request creq = MPI_Request_f2c(*req);
  hook_wait(
      TORU_RA, f_wait,
      [&](MPI_Status* st) {
        F own[status_size];
        F* fs = status == MPI_F_STATUS_IGNORE ? own : status;
        real_pmpi_wait(req, fs, ierr);
        if (st != MPI_STATUS_IGNORE) MPI_Status_f2c(fs, st);
        return static_cast<int>(*ierr);
      },
      &creq, 1, MPI_STATUS_IGNORE, completed{});
}

TORU_EXPORT void mpi_waitall_(F* n, F* reqs, F* statuses, F* ierr) {
  TORU_REAL(pmpi_waitall, F*, F*, F*, F*);
  std::vector<MPI_Request> creqs(static_cast<std::size_t>(*n));
  for (int i = 0; i < *n; ++i) creqs[static_cast<std::size_t>(i)] = MPI_Request_f2c(reqs[i]);
  hook_wait(
      TORU_RA, f_waitall,
      [&](MPI_Status* st) {
        std::vector<F> own(static_cast<std::size_t>(*n) * status_size);
        F* fs = statuses == MPI_F_STATUSES_IGNORE ? own.data() : statuses;
        real_pmpi_waitall(n, reqs, fs, ierr);
        if (st != MPI_STATUSES_IGNORE)
          for (int i = 0; i < *n; ++i) MPI_Status_f2c(fs + i * status_size, st + i);
        return static_cast<int>(*ierr);
      },
      creqs.data(), *n, MPI_STATUSES_IGNORE, completed{});
}

TORU_EXPORT void mpi_barrier_(F* comm, F* ierr) {
  TORU_REAL(pmpi_barrier, F*, F*);
  hook_coll(
      TORU_RA, f_barrier,
      [&] {
        real_pmpi_barrier(comm, ierr);
        return static_cast<int>(*ierr);
      },
      0, MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_bcast_(void* buf, F* count, F* type, F* root, F* comm, F* ierr) {
  TORU_REAL(pmpi_bcast, void*, F*, F*, F*, F*, F*);
  hook_coll(
      TORU_RA, f_bcast,
      [&] {
        real_pmpi_bcast(buf, count, type, root, comm, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*type), *count), MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_allreduce_(void* in, void* out, F* count, F* type, F* op, F* comm, F* ierr) {
  TORU_REAL(pmpi_allreduce, void*, void*, F*, F*, F*, F*, F*);
  hook_coll(
      TORU_RA, f_allreduce,
      [&] {
        real_pmpi_allreduce(in, out, count, type, op, comm, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*type), *count), MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_reduce_(void* in, void* out, F* count, F* type, F* op, F* root, F* comm, F* ierr) {
  TORU_REAL(pmpi_reduce, void*, void*, F*, F*, F*, F*, F*, F*);
  hook_coll(
      TORU_RA, f_reduce,
      [&] {
        real_pmpi_reduce(in, out, count, type, op, root, comm, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*type), *count), MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_alltoall_(void* in, F* scount, F* stype, void* out, F* rcount, F* rtype, F* comm, F* ierr) {
  TORU_REAL(pmpi_alltoall, void*, F*, F*, void*, F*, F*, F*, F*);
  int size = 1;
  PMPI_Comm_size(MPI_Comm_f2c(*comm), &size);
  hook_coll(
      TORU_RA, f_alltoall,
      [&] {
        real_pmpi_alltoall(in, scount, stype, out, rcount, rtype, comm, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*stype), static_cast<long long>(*scount) * size), MPI_Comm_f2c(*comm));
}
