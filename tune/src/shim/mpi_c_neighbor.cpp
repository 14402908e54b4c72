// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the neighbourhood collectives (blocking and nonblocking): each destination of the
// communicator's topology is a partner of the call site, credited with what this rank sends it.
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))

TORU_EXPORT int MPI_Neighbor_allgather(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                       MPI_Datatype rtype, MPI_Comm comm) {
  return hook_neighbor(
      TORU_RA, f_neighbor_allgather,
      [&] { return PMPI_Neighbor_allgather(in, scount, stype, out, rcount, rtype, comm); },
      [&](int) { return type_bytes(stype, scount); }, comm);
}

TORU_EXPORT int MPI_Neighbor_allgatherv(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                                        const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  return hook_neighbor(
      TORU_RA, f_neighbor_allgatherv,
      [&] { return PMPI_Neighbor_allgatherv(in, scount, stype, out, rcounts, displs, rtype, comm); },
      [&](int) { return type_bytes(stype, scount); }, comm);
}

TORU_EXPORT int MPI_Neighbor_alltoall(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                      MPI_Datatype rtype, MPI_Comm comm) {
  return hook_neighbor(
      TORU_RA, f_neighbor_alltoall, [&] { return PMPI_Neighbor_alltoall(in, scount, stype, out, rcount, rtype, comm); },
      [&](int) { return type_bytes(stype, scount); }, comm);
}

TORU_EXPORT int MPI_Neighbor_alltoallv(const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype,
                                       void* out, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                                       MPI_Comm comm) {
  return hook_neighbor(
      TORU_RA, f_neighbor_alltoallv,
      [&] { return PMPI_Neighbor_alltoallv(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm); },
      [&](int i) { return type_bytes(stype, scounts[i]); }, comm);
}

TORU_EXPORT int MPI_Neighbor_alltoallw(const void* in, const int scounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype stypes[], void* out, const int rcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  return hook_neighbor(
      TORU_RA, f_neighbor_alltoallw,
      [&] { return PMPI_Neighbor_alltoallw(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm); },
      [&](int i) { return type_bytes(stypes[i], scounts[i]); }, comm);
}

TORU_EXPORT int MPI_Ineighbor_allgather(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                        MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return hook_neighbor(
      TORU_RA, f_ineighbor_allgather,
      [&] { return PMPI_Ineighbor_allgather(in, scount, stype, out, rcount, rtype, comm, req); },
      [&](int) { return type_bytes(stype, scount); }, comm);
}

TORU_EXPORT int MPI_Ineighbor_allgatherv(const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[],
                                         const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return hook_neighbor(
      TORU_RA, f_ineighbor_allgatherv,
      [&] { return PMPI_Ineighbor_allgatherv(in, scount, stype, out, rcounts, displs, rtype, comm, req); },
      [&](int) { return type_bytes(stype, scount); }, comm);
}

TORU_EXPORT int MPI_Ineighbor_alltoall(const void* in, int scount, MPI_Datatype stype, void* out, int rcount,
                                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return hook_neighbor(
      TORU_RA, f_ineighbor_alltoall,
      [&] { return PMPI_Ineighbor_alltoall(in, scount, stype, out, rcount, rtype, comm, req); },
      [&](int) { return type_bytes(stype, scount); }, comm);
}

TORU_EXPORT int MPI_Ineighbor_alltoallv(const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype,
                                        void* out, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                                        MPI_Comm comm, MPI_Request* req) {
  return hook_neighbor(
      TORU_RA, f_ineighbor_alltoallv,
      [&] { return PMPI_Ineighbor_alltoallv(in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm, req); },
      [&](int i) { return type_bytes(stype, scounts[i]); }, comm);
}

TORU_EXPORT int MPI_Ineighbor_alltoallw(const void* in, const int scounts[], const MPI_Aint sdispls[],
                                        const MPI_Datatype stypes[], void* out, const int rcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                                        MPI_Request* req) {
  return hook_neighbor(
      TORU_RA, f_ineighbor_alltoallw,
      [&] { return PMPI_Ineighbor_alltoallw(in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm, req); },
      [&](int i) { return type_bytes(stypes[i], scounts[i]); }, comm);
}
