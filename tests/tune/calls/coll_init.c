// SPDX-License-Identifier: BSD-3-Clause
// Persistent collectives (Open MPI 4.1's MPIX_*_init, MPI-4's MPI_*_init): each request started
// several times by MPI_Start and MPI_Startall; every start is a collective of the bytes the init
// described, credited to the Start/Startall site. Results are checked on every round.
#include "expect.h"
// after mpi.h (expect.h), which defines what it needs (OMPI_DECLSPEC)
#include <mpi-ext.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  double in[5], out[5], a[64], b[64], c[4];
  int counts[16], displs[16];
  long long v_count = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = 1 + (i + 2 * rank) % 3;  // what this rank sends i; i sends it 1 + (rank + 2 i) % 3
    displs[i] = 4 * i;
    v_count += counts[i];
  }
  int rcounts[16];
  for (int i = 0; i < n; ++i) rcounts[i] = 1 + (rank + 2 * i) % 3;
  for (int i = 0; i < 64; ++i) a[i] = rank;

  MPI_Request ar, vr[2], br;
  MPIX_Allreduce_init(in, out, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar);
  MPIX_Alltoallv_init(a, counts, displs, MPI_DOUBLE, b, rcounts, displs, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL,
                      &vr[0]);
  MPIX_Bcast_init(c, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &vr[1]);
  MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &br);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5; ++i) in[i] = rank + round;
    MPI_Start(&ar);
    MPI_Wait(&ar, MPI_STATUS_IGNORE);
    CHECK(out[4] == n * (n - 1) / 2.0 + n * round);
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4; ++i) c[i] = rank == 0 ? 10 + round : -1;
    MPI_Startall(2, vr);
    MPI_Waitall(2, vr, MPI_STATUSES_IGNORE);
    CHECK(c[3] == 10 + round);
    for (int i = 0; i < n; ++i) CHECK(b[4 * i + rcounts[i] - 1] == i);
  }
  MPI_Start(&br);
  MPI_Wait(&br, MPI_STATUS_IGNORE);
  MPI_Request_free(&ar);
  MPI_Request_free(&vr[0]);
  MPI_Request_free(&vr[1]);
  MPI_Request_free(&br);

  expect("MPIX_Allreduce_init", 1, 0, -1, 0);
  expect("MPIX_Alltoallv_init", 1, 0, -1, 0);
  expect("MPIX_Bcast_init", 1, 0, -1, 0);
  expect("MPIX_Barrier_init", 1, 0, -1, 0);
  expect("MPI_Start", 4, 3 * 40, -1, 0);
  expect("MPI_Startall", 2, 2 * (8 * v_count + 32), -1, 0);
  expect("MPI_Wait", 4, 0, -1, 0);
  expect("MPI_Waitall", 2, 0, -1, 0);
  expect_close();
  MPI_Finalize();
  return 0;
}
