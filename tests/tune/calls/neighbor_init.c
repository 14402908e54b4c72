// SPDX-License-Identifier: BSD-3-Clause
// Persistent neighbourhood collectives (Open MPI 4.1's MPIX_Neighbor_*_init, MPI-4's
// MPI_Neighbor_*_init) on a distributed graph whose ranks have different numbers of destinations and
// sources, each request started on several rounds by MPI_Start or MPI_Startall: every start is a
// call of its init's function at the start's site (collective communication for the metrics),
// crediting what the blocking twin credits, each destination a partner with the bytes sent to it.
// Each round's data are compared with the blocking twin's on the same input. A non-periodic line
// adds MPI_PROC_NULL neighbours (no partner, no bytes).
#include <string.h>

#include "expect.h"
// after mpi.h (expect.h), which defines what it needs (OMPI_DECLSPEC)
#include <mpi-ext.h>

enum { rounds = 3, max_nb = 16 };

// The graph's edges: s -> (s + k) % n for k = 1 .. degree(s) (for 3 ranks: 0 -> 1; 1 -> 2, 0; 2 -> 0).
static int degree(int s, int n) { return n > 1 ? 1 + s % (n - 1) : 1; }
// What s sends d in the v and w variants (elements), and the w variant's type.
static int vcount(int s, int d) { return 1 + (s + 2 * d) % 4; }
static MPI_Datatype wtype(int s, int d) { return (s + d) % 2 ? MPI_INT : MPI_DOUBLE; }
static double value(int s, int round, int i) { return 1000.0 * s + 100.0 * round + i; }

static void fill(double* p, int count, double v) {
  for (int i = 0; i < count; ++i) p[i] = v;
}

// The facts of a neighbourhood call made `times` times: per[i] bytes to dst[i] each time.
static void expect_nb(const char* function, long calls, const int* dst, int ndst, const long long* per, int times) {
  long long total = 0;
  for (int i = 0; i < ndst; ++i)
    if (dst[i] >= 0) {
      total += per[i] * times;
      expect(function, 0, 0, dst[i], per[i] * times);
    }
  expect(function, calls, total, -1, 0);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(n <= max_nb);

  int dst[max_nb], src[max_nb], nout = degree(rank, n), nin = 0;
  for (int k = 0; k < nout; ++k) dst[k] = (rank + k + 1) % n;
  for (int s = 0; s < n; ++s)
    for (int k = 1; k <= degree(s, n); ++k)
      if ((s + k) % n == rank) src[nin++] = s;
  // Weighted (all 1): GCC 12 takes MPI_UNWEIGHTED, (int*)2, for an array of size 0 and warns.
  int weights[max_nb];
  for (int i = 0; i < max_nb; ++i) weights[i] = 1;
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, src, weights, nout, dst, weights, MPI_INFO_NULL, 0, &graph);

  // Send buffers, received data (persistent) and the blocking twin's (ref), per call.
  double ag_in[3], agv_in[4], a2a_in[5 * max_nb], a2av_in[4 * max_nb];
  double ag[2][3 * max_nb], agv[2][5 * max_nb], a2a[2][5 * max_nb], a2av[2][4 * max_nb];
  unsigned char a2aw_in[32 * max_nb], a2aw[2][32 * max_nb];  // up to 4 doubles per neighbour
  int agv_counts[max_nb], agv_displs[max_nb];
  int sc[max_nb], sd[max_nb], rc[max_nb], rd[max_nb];
  MPI_Aint swd[max_nb], rwd[max_nb];
  MPI_Datatype st[max_nb], rt[max_nb];
  long long ag_b[max_nb], agv_b[max_nb], a2a_b[max_nb], a2av_b[max_nb], a2aw_b[max_nb];
  for (int j = 0; j < nin; ++j) {
    agv_counts[j] = 4;
    agv_displs[j] = 5 * j;
    rc[j] = vcount(src[j], rank);
    rd[j] = 4 * j;
    rwd[j] = 32 * j;
    rt[j] = wtype(src[j], rank);
  }
  for (int i = 0; i < nout; ++i) {
    sc[i] = vcount(rank, dst[i]);
    sd[i] = 4 * i;
    swd[i] = 32 * i;
    st[i] = wtype(rank, dst[i]);
    int size = 0;
    MPI_Type_size(st[i], &size);
    ag_b[i] = 24;
    agv_b[i] = 32;
    a2a_b[i] = 40;
    a2av_b[i] = 8LL * sc[i];
    a2aw_b[i] = (long long)size * sc[i];
  }

  MPI_Request req[5];
  MPIX_Neighbor_allgather_init(ag_in, 3, MPI_DOUBLE, ag[0], 3, MPI_DOUBLE, graph, MPI_INFO_NULL, &req[0]);
  MPIX_Neighbor_allgatherv_init(agv_in, 4, MPI_DOUBLE, agv[0], agv_counts, agv_displs, MPI_DOUBLE, graph, MPI_INFO_NULL,
                                &req[1]);
  MPIX_Neighbor_alltoall_init(a2a_in, 5, MPI_DOUBLE, a2a[0], 5, MPI_DOUBLE, graph, MPI_INFO_NULL, &req[2]);
  MPIX_Neighbor_alltoallv_init(a2av_in, sc, sd, MPI_DOUBLE, a2av[0], rc, rd, MPI_DOUBLE, graph, MPI_INFO_NULL, &req[3]);
  MPIX_Neighbor_alltoallw_init(a2aw_in, sc, swd, st, a2aw[0], rc, rwd, rt, graph, MPI_INFO_NULL, &req[4]);
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < 3; ++i) ag_in[i] = value(rank, round, i);
    for (int i = 0; i < 4; ++i) agv_in[i] = value(rank, round, 10 + i);
    for (int i = 0; i < 5 * nout; ++i) a2a_in[i] = value(rank, round, i);
    for (int i = 0; i < 4 * nout; ++i) a2av_in[i] = value(rank, round, 50 + i);
    for (int i = 0; i < nout; ++i)
      for (int k = 0; k < sc[i]; ++k) {
        const double d = value(rank, round, 90 + 4 * i + k);
        const int v = (int)d;
        if (st[i] == MPI_INT)
          memcpy(a2aw_in + swd[i] + 4 * k, &v, 4);
        else
          memcpy(a2aw_in + swd[i] + 8 * k, &d, 8);
      }
    for (int r = 0; r < 2; ++r) {  // the same filler in both, so the buffers compare whole
      fill(ag[r], 3 * max_nb, -7);
      fill(agv[r], 5 * max_nb, -7);
      fill(a2a[r], 5 * max_nb, -7);
      fill(a2av[r], 4 * max_nb, -7);
      memset(a2aw[r], 0xab, sizeof a2aw[r]);
    }
    for (int f = 0; f < 3; ++f) {
      MPI_Start(&req[f]);
      MPI_Wait(&req[f], MPI_STATUS_IGNORE);
    }
    MPI_Startall(2, &req[3]);
    MPI_Waitall(2, &req[3], MPI_STATUSES_IGNORE);

    MPI_Neighbor_allgather(ag_in, 3, MPI_DOUBLE, ag[1], 3, MPI_DOUBLE, graph);
    MPI_Neighbor_allgatherv(agv_in, 4, MPI_DOUBLE, agv[1], agv_counts, agv_displs, MPI_DOUBLE, graph);
    MPI_Neighbor_alltoall(a2a_in, 5, MPI_DOUBLE, a2a[1], 5, MPI_DOUBLE, graph);
    MPI_Neighbor_alltoallv(a2av_in, sc, sd, MPI_DOUBLE, a2av[1], rc, rd, MPI_DOUBLE, graph);
    MPI_Neighbor_alltoallw(a2aw_in, sc, swd, st, a2aw[1], rc, rwd, rt, graph);
    CHECK(memcmp(ag[0], ag[1], sizeof ag[0]) == 0);
    CHECK(memcmp(agv[0], agv[1], sizeof agv[0]) == 0);
    CHECK(memcmp(a2a[0], a2a[1], sizeof a2a[0]) == 0);
    CHECK(memcmp(a2av[0], a2av[1], sizeof a2av[0]) == 0);
    CHECK(memcmp(a2aw[0], a2aw[1], sizeof a2aw[0]) == 0);
    // And by what each source sent: its own values; in alltoall, the block at this rank's place
    // among its destinations.
    for (int j = 0; j < nin; ++j) {
      const int at = (rank - src[j] + n - 1) % n;
      for (int k = 0; k < 3; ++k) CHECK(ag[0][3 * j + k] == value(src[j], round, k));
      for (int k = 0; k < 5; ++k) CHECK(a2a[0][5 * j + k] == value(src[j], round, 5 * at + k));
      CHECK(agv[0][5 * j + 3] == value(src[j], round, 13));
      CHECK(a2av[0][4 * j + rc[j] - 1] == value(src[j], round, 50 + 4 * at + rc[j] - 1));
    }
  }
  for (int f = 0; f < 5; ++f) MPI_Request_free(&req[f]);

  // A non-periodic line: the ranks at its ends have one neighbour (the other is MPI_PROC_NULL).
  MPI_Comm line;
  const int dims[1] = {n}, periods[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
  const int nb[2] = {rank - 1, rank + 1 < n ? rank + 1 : -1};  // -1: MPI_PROC_NULL
  const long long line_b[2] = {16, 16};
  double l_in[4], l_out[2][4];
  MPI_Request lreq;
  MPIX_Neighbor_alltoall_init(l_in, 2, MPI_DOUBLE, l_out[0], 2, MPI_DOUBLE, line, MPI_INFO_NULL, &lreq);
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < 4; ++i) l_in[i] = value(rank, round, i);
    fill(l_out[0], 4, -7);
    fill(l_out[1], 4, -7);
    MPI_Start(&lreq);
    MPI_Wait(&lreq, MPI_STATUS_IGNORE);
    MPI_Neighbor_alltoall(l_in, 2, MPI_DOUBLE, l_out[1], 2, MPI_DOUBLE, line);
    CHECK(memcmp(l_out[0], l_out[1], sizeof l_out[0]) == 0);
    if (nb[0] >= 0) CHECK(l_out[0][1] == value(nb[0], round, 3));  // the lower one's upward block
    if (nb[1] >= 0) CHECK(l_out[0][2] == value(nb[1], round, 0));
  }
  MPI_Request_free(&lreq);
  MPI_Comm_free(&line);
  MPI_Comm_free(&graph);

  // Each request: its init, then each start a call of the init's function crediting what the
  // blocking twin credits; no start is left at the Start/Startall site.
  expect("MPIX_Neighbor_allgather_init", 1, 0, -1, 0);
  expect("MPIX_Neighbor_allgatherv_init", 1, 0, -1, 0);
  expect("MPIX_Neighbor_alltoall_init", 2, 0, -1, 0);
  expect("MPIX_Neighbor_alltoallv_init", 1, 0, -1, 0);
  expect("MPIX_Neighbor_alltoallw_init", 1, 0, -1, 0);
  expect_nb("MPIX_Neighbor_allgather_init", rounds, dst, nout, ag_b, rounds);
  expect_nb("MPIX_Neighbor_allgatherv_init", rounds, dst, nout, agv_b, rounds);
  expect_nb("MPIX_Neighbor_alltoall_init", 2 * rounds, dst, nout, a2a_b, rounds);
  expect_nb("MPIX_Neighbor_alltoall_init", 0, nb, 2, line_b, rounds);
  expect_nb("MPIX_Neighbor_alltoallv_init", rounds, dst, nout, a2av_b, rounds);
  expect_nb("MPIX_Neighbor_alltoallw_init", rounds, dst, nout, a2aw_b, rounds);
  expect("MPI_Start", 0, 0, -1, 0);
  expect("MPI_Startall", 0, 0, -1, 0);
  expect("MPI_Wait", 4 * rounds, 0, -1, 0);
  expect("MPI_Waitall", rounds, 0, -1, 0);
  expect_nb("MPI_Neighbor_allgather", rounds, dst, nout, ag_b, rounds);
  expect_nb("MPI_Neighbor_allgatherv", rounds, dst, nout, agv_b, rounds);
  expect_nb("MPI_Neighbor_alltoall", 2 * rounds, dst, nout, a2a_b, rounds);
  expect_nb("MPI_Neighbor_alltoall", 0, nb, 2, line_b, rounds);
  expect_nb("MPI_Neighbor_alltoallv", rounds, dst, nout, a2av_b, rounds);
  expect_nb("MPI_Neighbor_alltoallw", rounds, dst, nout, a2aw_b, rounds);
  // The metrics: the inits, the starts and the blocking twins (six calls a round each) are
  // collective communication; only the completion calls are point-to-point, without bytes.
  long long round_b = 0;
  for (int i = 0; i < nout; ++i) round_b += ag_b[i] + agv_b[i] + a2a_b[i] + a2av_b[i] + a2aw_b[i];
  for (int i = 0; i < 2; ++i)
    if (nb[i] >= 0) round_b += line_b[i];
  expect_metric("is_collective", 6 + 2 * 6 * rounds, 2 * rounds * round_b);
  expect_metric("is_p2p", 5 * rounds, 0);
  expect_close();
  MPI_Finalize();
  return 0;
}
