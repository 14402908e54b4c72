// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the neighbourhood collectives, one line each for the blocking call and its
// nonblocking twin: each destination of the communicator's topology is a partner of the call site,
// credited with what this rank sends it (`bytes` is a function of the destination's index).
#include <mpi.h>

#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))
#define TORU_UNPAREN(...) __VA_ARGS__

// TORU_NEIGHBOR(Name, name, (parameters), (names), bytes): MPI_Name and MPI_Iname.
#define TORU_NEIGHBOR(Name, name, params, names, bytes)                                          \
  TORU_EXPORT int MPI_##Name(TORU_UNPAREN params) {                                              \
    return hook_neighbor(                                                                        \
        TORU_RA, f_##name, [&] { return PMPI_##Name names; }, bytes, comm);                      \
  }                                                                                              \
  TORU_EXPORT int MPI_I##name(TORU_UNPAREN params, MPI_Request* req) {                           \
    return hook_neighbor(                                                                        \
        TORU_RA, f_i##name, [&] { return PMPI_I##name(TORU_UNPAREN names, req); }, bytes, comm); \
  }

TORU_NEIGHBOR(Neighbor_allgather, neighbor_allgather,
              (const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
               MPI_Comm comm),
              (in, scount, stype, out, rcount, rtype, comm), ([&](int) { return type_bytes(stype, scount); }))
TORU_NEIGHBOR(Neighbor_allgatherv, neighbor_allgatherv,
              (const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[], const int displs[],
               MPI_Datatype rtype, MPI_Comm comm),
              (in, scount, stype, out, rcounts, displs, rtype, comm), ([&](int) { return type_bytes(stype, scount); }))
TORU_NEIGHBOR(Neighbor_alltoall, neighbor_alltoall,
              (const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype,
               MPI_Comm comm),
              (in, scount, stype, out, rcount, rtype, comm), ([&](int) { return type_bytes(stype, scount); }))
TORU_NEIGHBOR(Neighbor_alltoallv, neighbor_alltoallv,
              (const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype, void* out,
               const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm),
              (in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm),
              ([&](int i) { return type_bytes(stype, scounts[i]); }))
TORU_NEIGHBOR(Neighbor_alltoallw, neighbor_alltoallw,
              (const void* in, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void* out,
               const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm),
              (in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm),
              ([&](int i) { return type_bytes(stypes[i], scounts[i]); }))
