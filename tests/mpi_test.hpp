// SPDX-License-Identifier: BSD-3-Clause
// Helpers for MPI tests that run under tests/mpi_main.cpp.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include "toru/core/device.hpp"

namespace toru::test {

inline int rank(MPI_Comm comm = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
inline int nranks(MPI_Comm comm = MPI_COMM_WORLD) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

/// True on every rank when every rank sees a GPU; collective, so all ranks skip together.
inline bool all_ranks_have_gpu() {
  int mine = toru::gpu_count() > 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace toru::test

/// Skips the test on all ranks, with the reason, unless every rank has a GPU.
#define TORU_SKIP_WITHOUT_GPU()                                                                                        \
  do {                                                                                                                 \
    if (!::toru::test::all_ranks_have_gpu()) GTEST_SKIP() << "no GPU on every rank: " << ::toru::gpu_absence_reason(); \
  } while (0)
