// Drop-in replacements for MPI_Alltoall / MPI_Alltoallv: same arguments, so a code switches by
// renaming the call.
//
//   toru::comm::alltoall(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, MPI_COMM_WORLD);
//
// Collective. The first call on a communicator attaches a toru::comm::communicator to it (as an MPI
// attribute, released when the communicator is freed or at MPI_Finalize), with the sub-torus its
// ranks occupy on TORU_TORUS (which describes MPI_COMM_WORLD) when set. MPI_COMM_NULL and
// intercommunicators are refused. Plans for equal blocks are cached per (count, type) on that communicator.
// Each call validates its arguments collectively (one small allreduce), so bad input throws the
// same toru::error on every rank instead of hanging; a persistent plan skips that cost.
// Not thread-safe for concurrent calls on one communicator (as MPI collectives).
#pragma once

#include <mpi.h>

#include "toru/comm/alltoall_plan.hpp"

namespace toru::comm {

/// As MPI_Alltoall (sendbuf may be MPI_IN_PLACE). Returns MPI_SUCCESS; throws toru::error on bad
/// input (null buffers with non-zero counts, sendcount*size(sendtype) != recvcount*size(recvtype),
/// counts differing across ranks) or MPI failure.
int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm);

/// As MPI_Alltoallv (sendbuf may be MPI_IN_PLACE: then recvcounts/rdispls describe both sides).
/// Returns MPI_SUCCESS; throws toru::error on bad input, including a send count that does not match
/// the peer's receive count.
int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

}  // namespace toru::comm
