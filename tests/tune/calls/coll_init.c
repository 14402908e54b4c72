// SPDX-License-Identifier: BSD-3-Clause
// Persistent collectives (Open MPI 4.1's MPIX_*_init, MPI-4's MPI_*_init): each request started
// several times by MPI_Start and MPI_Startall, once together with persistent point-to-point requests
// in one MPI_Startall. Every start of a collective is a call of its init's function at the start's
// site, with the bytes the init described: collective communication for the metrics, while the
// persistent sends and receives, started alone or alongside, stay point-to-point at the
// Start/Startall site. Results are checked on every round.
#include "expect.h"
// after mpi.h (expect.h), which defines what it needs (OMPI_DECLSPEC)
#include <mpi-ext.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int left = (rank + n - 1) % n, right = (rank + 1) % n;
  double in[5], out[5], a[64], b[64], c[4], ring_out[6], ring_in[6];
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
  // Bytes per start: the all-reduce, the all-to-all-v, the broadcast, one ring message.
  const long long ar_b = 40, v_b = 8 * v_count, bc_b = 32, ring_b = 48;

  MPI_Request ar, vr[2], br, pr[3];
  MPIX_Allreduce_init(in, out, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar);
  MPIX_Alltoallv_init(a, counts, displs, MPI_DOUBLE, b, rcounts, displs, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL,
                      &vr[0]);
  MPIX_Bcast_init(c, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &vr[1]);
  MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &br);
  MPI_Recv_init(ring_in, 6, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &pr[0]);
  MPI_Send_init(ring_out, 6, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &pr[1]);
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
  // The ring alone, then with the all-reduce in one MPI_Startall.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 6; ++i) ring_out[i] = 100 * rank + round;
    MPI_Start(&pr[0]);
    MPI_Start(&pr[1]);
    MPI_Wait(&pr[1], MPI_STATUS_IGNORE);
    MPI_Wait(&pr[0], MPI_STATUS_IGNORE);
    CHECK(ring_in[5] == 100 * left + round);
  }
  pr[2] = ar;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 6; ++i) ring_out[i] = 100 * rank + 10 + round;
    for (int i = 0; i < 5; ++i) in[i] = rank + 10 + round;
    MPI_Startall(3, pr);
    MPI_Waitall(3, pr, MPI_STATUSES_IGNORE);
    CHECK(ring_in[5] == 100 * left + 10 + round);
    CHECK(out[4] == n * (n - 1) / 2.0 + n * (10 + round));
  }
  MPI_Request_free(&ar);
  MPI_Request_free(&vr[0]);
  MPI_Request_free(&vr[1]);
  MPI_Request_free(&br);
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);

  // Each collective: its init, then its starts (3 + 2 of the all-reduce).
  expect("MPIX_Allreduce_init", 1 + 5, 5 * ar_b, -1, 0);
  expect("MPIX_Alltoallv_init", 1 + 2, 2 * v_b, -1, 0);
  expect("MPIX_Bcast_init", 1 + 2, 2 * bc_b, -1, 0);
  expect("MPIX_Barrier_init", 1 + 1, 0, -1, 0);
  expect("MPI_Recv_init", 1, 0, left, 0);
  expect("MPI_Send_init", 1, 0, right, 0);
  // The ring's starts only: each start of the send sends its bytes to the right.
  expect("MPI_Start", 4, 2 * ring_b, right, 2 * ring_b);
  expect("MPI_Startall", 2, 2 * ring_b, right, 2 * ring_b);
  // Completions: the ring's receives bring their bytes from the left.
  expect("MPI_Wait", 3 + 1 + 4, 2 * ring_b, left, 2 * ring_b);
  expect("MPI_Waitall", 2 + 2, 2 * ring_b, left, 2 * ring_b);
  // The metrics: the persistent collectives, inits and starts, are collective communication; the
  // ring's inits, starts and every completion call point-to-point.
  expect_metric("is_collective", 6 + 3 + 3 + 2, 5 * ar_b + 2 * (v_b + bc_b));
  expect_metric("is_p2p", 2 + 4 + 2 + 8 + 4, 8 * ring_b);
  expect_close();
  MPI_Finalize();
  return 0;
}
