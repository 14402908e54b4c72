// SPDX-License-Identifier: BSD-3-Clause
// C wrappers of the collectives, one line each: a line defines the blocking call (MPI_Name) and its
// nonblocking twin (MPI_Iname, the same parameters and a request). Bytes are what this rank
// contributes (coll_bytes.hpp), the same for both, so a nonblocking call and its blocking twin
// compare. toru's FFT calls MPI_Alltoallw, its trainer MPI_Ialltoallv and MPI_Iallreduce.
#include <mpi.h>

#include "coll_bytes.hpp"
#include "hooks.hpp"

using namespace toru::tune::shim;

#define TORU_RA __builtin_return_address(0)
#define TORU_EXPORT extern "C" __attribute__((visibility("default")))
#define TORU_UNPAREN(...) __VA_ARGS__

// TORU_COLL(Name, name, (parameters), (names), bytes): MPI_Name and MPI_Iname (nonblocking
// collectives are named MPI_I + the lower-case name). The last parameter is the communicator, `comm`.
#define TORU_COLL(Name, name, params, names, bytes)                                                    \
  TORU_EXPORT int MPI_##Name(TORU_UNPAREN params) {                                                    \
    return hook_coll(                                                                                  \
        TORU_RA, f_##name, [&] { return PMPI_##Name names; }, bytes, comm);                            \
  }                                                                                                    \
  TORU_EXPORT int MPI_I##name(TORU_UNPAREN params, MPI_Request* req) {                                 \
    return hook_coll(                                                                                  \
        TORU_RA, f_i##name, [&] { return PMPI_I##name(TORU_UNPAREN names, req); }, bytes, comm, true); \
  }

TORU_COLL(Barrier, barrier, (MPI_Comm comm), (comm), 0)
TORU_COLL(Bcast, bcast, (void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
          (buf, count, type, root, comm), type_bytes(type, count))
TORU_COLL(Reduce, reduce, (const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm),
          (in, out, count, type, op, root, comm), type_bytes(type, count))
TORU_COLL(Allreduce, allreduce, (const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
          (in, out, count, type, op, comm), type_bytes(type, count))
TORU_COLL(Alltoall, alltoall,
          (const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype, MPI_Comm comm),
          (in, scount, stype, out, rcount, rtype, comm),
          alltoall_bytes(in == MPI_IN_PLACE, scount, stype, rcount, rtype, comm))
TORU_COLL(Alltoallv, alltoallv,
          (const void* in, const int scounts[], const int sdispls[], MPI_Datatype stype, void* out, const int rcounts[],
           const int rdispls[], MPI_Datatype rtype, MPI_Comm comm),
          (in, scounts, sdispls, stype, out, rcounts, rdispls, rtype, comm),
          alltoallv_bytes(in == MPI_IN_PLACE, scounts, stype, rcounts, rtype, comm))
TORU_COLL(Alltoallw, alltoallw,
          (const void* in, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* out,
           const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm),
          (in, scounts, sdispls, stypes, out, rcounts, rdispls, rtypes, comm),
          alltoallw_bytes(in == MPI_IN_PLACE, scounts, stypes, rcounts, rtypes, comm))
TORU_COLL(Allgather, allgather,
          (const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype, MPI_Comm comm),
          (in, scount, stype, out, rcount, rtype, comm),
          in == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount))
TORU_COLL(Allgatherv, allgatherv,
          (const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[], const int displs[],
           MPI_Datatype rtype, MPI_Comm comm),
          (in, scount, stype, out, rcounts, displs, rtype, comm),
          allgatherv_bytes(in == MPI_IN_PLACE, scount, stype, rcounts, rtype, comm))
TORU_COLL(Gather, gather,
          (const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype, int root,
           MPI_Comm comm),
          (in, scount, stype, out, rcount, rtype, root, comm), in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount))
TORU_COLL(Gatherv, gatherv,
          (const void* in, int scount, MPI_Datatype stype, void* out, const int rcounts[], const int displs[],
           MPI_Datatype rtype, int root, MPI_Comm comm),
          (in, scount, stype, out, rcounts, displs, rtype, root, comm),
          in == MPI_IN_PLACE ? 0 : type_bytes(stype, scount))
TORU_COLL(Scatter, scatter,
          (const void* in, int scount, MPI_Datatype stype, void* out, int rcount, MPI_Datatype rtype, int root,
           MPI_Comm comm),
          (in, scount, stype, out, rcount, rtype, root, comm), out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount))
TORU_COLL(Scatterv, scatterv,
          (const void* in, const int scounts[], const int displs[], MPI_Datatype stype, void* out, int rcount,
           MPI_Datatype rtype, int root, MPI_Comm comm),
          (in, scounts, displs, stype, out, rcount, rtype, root, comm),
          out == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount))
TORU_COLL(Reduce_scatter, reduce_scatter,
          (const void* in, void* out, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm),
          (in, out, rcounts, type, op, comm), counts_bytes(rcounts, comm_size(comm), type))
TORU_COLL(Reduce_scatter_block, reduce_scatter_block,
          (const void* in, void* out, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
          (in, out, rcount, type, op, comm), type_bytes(type, static_cast<long long>(rcount) * comm_size(comm)))
TORU_COLL(Scan, scan, (const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
          (in, out, count, type, op, comm), type_bytes(type, count))
TORU_COLL(Exscan, exscan, (const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
          (in, out, count, type, op, comm), type_bytes(type, count))
