// SPDX-License-Identifier: BSD-3-Clause
// The toru::comm communicators FFT plans exchange on, cached on the caller's MPI communicator:
// building one is collective and costs tens of milliseconds (sub-communicators, node topology,
// a communication thread), so every plan over one communicator shares them.
#pragma once

#include <mpi.h>

#include <memory>

#include "toru/comm/communicator.hpp"

namespace toru::fft::detail {

using comm_ptr = std::shared_ptr<const comm::communicator>;
using mpi_comm_ptr = std::shared_ptr<const MPI_Comm>;

struct grid_comms {
  comm_ptr all;       // every rank of the caller's communicator, same order
  comm_ptr row, col;  // pencil grids: ranks with equal r0 (ordered by r1) / equal r1 (by r0)
};

/// Collective over `user`. The communicator built with `opts` (cached per options), and with p0 * p1 > 0
/// also the row and column communicators of the p0 x p1 grid (rank = r0 * p1 + r1; {0, 0} for none),
/// which inherit the sub-tori their ranks occupy on its torus. The cache lives in an MPI attribute of
/// `user` (freed with it) and is emptied when MPI_Finalize starts (through an MPI_COMM_SELF attribute).
grid_comms communicators(MPI_Comm user, int p0, int p1, const comm::communicator_options& opts);

/// Collective over `user` (the first call on it duplicates it; cached and freed like the above).
/// The communicator on which every toru::fft plan over `user` agrees its calls' arguments, whatever
/// the plan's kind and options: a rank that calls another plan's transform than the rest then gets
/// the same mismatch error as they do, instead of waiting in a collective on another communicator.
mpi_comm_ptr agreement_comm(MPI_Comm user);

}  // namespace toru::fft::detail
