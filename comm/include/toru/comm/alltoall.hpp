// SPDX-License-Identifier: BSD-3-Clause
// Drop-in replacements for MPI_Alltoall / MPI_Alltoallv: same arguments, so a code switches by
// renaming the call.
//
//   toru::comm::alltoall(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, MPI_COMM_WORLD);
//
// Collective. The first call on a communicator attaches a toru::comm::communicator to it (as an MPI
// attribute, released when the communicator is freed, or at the start of MPI_Finalize), with the
// sub-torus its ranks occupy on TORU_TORUS (which describes MPI_COMM_WORLD) when set. MPI_COMM_NULL
// and intercommunicators are refused. Plans are cached per signature: the counts (and displacements)
// and the datatypes, described by handle, size and bounds, so a freed handle that MPI hands out again
// for a type of another size or layout gets a plan of its own.
//
// Cost and checking (docs/comm.md, "Drop-in and C interfaces"):
// - alltoall: the first call of a signature agrees on every argument across ranks (bad input throws
//   the same toru::error on every rank) and plans it; later calls with that signature make no
//   collective but the exchange. Ranks must change signatures together, as MPI_Alltoall requires
//   matching arguments anyway: a signature new on some ranks and already seen on others is erroneous
//   (it may hang). A null buffer on a later call throws on its rank only, after taking part in the
//   exchange with scratch data.
// - alltoallv: counts may change on some ranks only, so every call makes one small allreduce that
//   tells whether every rank found its plan; if not, all agree on the arguments and plan again.
// - TORU_CHECK=1 (read when the communicator is attached; on if any rank sets it): every call
//   agrees on all arguments, which also catches a signature that changed on some ranks only.
// Counts and offsets beyond int are carried by derived datatypes. Not thread-safe for concurrent
// calls on one communicator (as MPI collectives).
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
