// SPDX-License-Identifier: BSD-3-Clause
// Fortran (mpif.h, `use mpi`) wrappers of calls beyond mpi_fortran.cpp's first set, the ones toru
// itself and common codes make: Alltoallw, Ibarrier, Ibcast, Iallreduce, Ialltoallv, Waitany,
// Sendrecv. Same pattern: forward to pmpi_*_, record through the C wrappers' hooks.
#include <mpi.h>

#include "fortran_real.hpp"
#include "hooks.hpp"

using namespace toru::tune::shim;
using F = MPI_Fint;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
int comm_size(F comm) {
  int size = 1;
  PMPI_Comm_size(MPI_Comm_f2c(comm), &size);
  return size;
}
}  // namespace

TORU_EXPORT void mpi_alltoallw_(void* in, F* scounts, F* sdispls, F* stypes, void* out, F* rcounts, F* rdispls,
                                F* rtypes, F* comm, F* ierr) {
  TORU_REAL(pmpi_alltoallw, void*, F*, F*, F*, void*, F*, F*, F*, F*, F*);
  std::uint64_t bytes = 0;
  for (int i = 0, n = comm_size(*comm); i < n; ++i) bytes += type_bytes(MPI_Type_f2c(stypes[i]), scounts[i]);
  hook_coll(
      TORU_RA, f_alltoallw,
      [&] {
        real_pmpi_alltoallw(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm, ierr);
        return static_cast<int>(*ierr);
      },
      bytes, MPI_Comm_f2c(*comm));
}

TORU_EXPORT void mpi_ibarrier_(F* comm, F* req, F* ierr) {
  TORU_REAL(pmpi_ibarrier, F*, F*, F*);
  hook_coll(
      TORU_RA, f_ibarrier,
      [&] {
        real_pmpi_ibarrier(comm, req, ierr);
        return static_cast<int>(*ierr);
      },
      0, MPI_Comm_f2c(*comm), true);
}

TORU_EXPORT void mpi_ibcast_(void* buf, F* count, F* type, F* root, F* comm, F* req, F* ierr) {
  TORU_REAL(pmpi_ibcast, void*, F*, F*, F*, F*, F*, F*);
  hook_coll(
      TORU_RA, f_ibcast,
      [&] {
        real_pmpi_ibcast(buf, count, type, root, comm, req, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*type), *count), MPI_Comm_f2c(*comm), true);
}

TORU_EXPORT void mpi_iallreduce_(void* in, void* out, F* count, F* type, F* op, F* comm, F* req, F* ierr) {
  TORU_REAL(pmpi_iallreduce, void*, void*, F*, F*, F*, F*, F*, F*);
  hook_coll(
      TORU_RA, f_iallreduce,
      [&] {
        real_pmpi_iallreduce(in, out, count, type, op, comm, req, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*type), *count), MPI_Comm_f2c(*comm), true);
}

TORU_EXPORT void mpi_ialltoallv_(void* in, F* scounts, F* sdispls, F* stype, void* out, F* rcounts, F* rdispls,
                                 F* rtype, F* comm, F* req, F* ierr) {
  TORU_REAL(pmpi_ialltoallv, void*, F*, F*, F*, void*, F*, F*, F*, F*, F*, F*);
  long long total = 0;
  for (int i = 0, n = comm_size(*comm); i < n; ++i) total += scounts[i];
  hook_coll(
      TORU_RA, f_ialltoallv,
      [&] {
        real_pmpi_ialltoallv(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm, req, ierr);
        return static_cast<int>(*ierr);
      },
      type_bytes(MPI_Type_f2c(*stype), total), MPI_Comm_f2c(*comm), true);
}

TORU_EXPORT void mpi_waitany_(F* n, F* reqs, F* index, F* status, F* ierr) {
  TORU_REAL(pmpi_waitany, F*, F*, F*, F*, F*);
  constexpr int small = 16;
  MPI_Request creqs_small[small];
  std::vector<MPI_Request> creqs_big;
  MPI_Request* creqs = creqs_small;
  if (*n > small) {
    creqs_big.resize(static_cast<std::size_t>(*n));
    creqs = creqs_big.data();
  }
  for (int i = 0; i < *n; ++i) creqs[i] = MPI_Request_f2c(reqs[i]);
  int cindex = MPI_UNDEFINED;  // Fortran's index counts from 1
  hook_wait(
      TORU_RA, f_waitany,
      [&](MPI_Status* st) {
        F own[status_size];
        F* fs = status == MPI_F_STATUS_IGNORE ? own : status;
        real_pmpi_waitany(n, reqs, index, fs, ierr);
        if (*ierr == MPI_SUCCESS && *index != MPI_UNDEFINED) cindex = *index - 1;
        if (st != MPI_STATUS_IGNORE) MPI_Status_f2c(fs, st);
        return static_cast<int>(*ierr);
      },
      creqs, *n, MPI_STATUS_IGNORE, completed{.which = completed::one, .index = &cindex});
}

TORU_EXPORT void mpi_sendrecv_(void* sbuf, F* scount, F* stype, F* dest, F* stag, void* rbuf, F* rcount, F* rtype,
                               F* source, F* rtag, F* comm, F* status, F* ierr) {
  TORU_REAL(pmpi_sendrecv, void*, F*, F*, F*, F*, void*, F*, F*, F*, F*, F*, F*, F*);
  hook_sendrecv(
      TORU_RA, f_sendrecv,
      [&](MPI_Status* st) {
        F own[status_size];
        F* fs = status == MPI_F_STATUS_IGNORE ? own : status;
        real_pmpi_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, fs, ierr);
        if (st != MPI_STATUS_IGNORE) MPI_Status_f2c(fs, st);
        return static_cast<int>(*ierr);
      },
      *scount, MPI_Type_f2c(*stype), *dest, *stag, MPI_Type_f2c(*rtype), MPI_Comm_f2c(*comm), MPI_STATUS_IGNORE);
}
