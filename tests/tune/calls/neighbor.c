// SPDX-License-Identifier: BSD-3-Clause
// Neighbourhood collectives on a non-periodic line (MPI_Cart_create, no reordering): rank r's
// neighbours are r - 1 and r + 1 where they exist, MPI_PROC_NULL at the ends (no partner, no bytes).
#include "expect.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm line;
  const int dims[1] = {n}, periods[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
  const int nb[2] = {rank - 1, rank + 1 < n ? rank + 1 : -1};  // -1: MPI_PROC_NULL
  double a[64] = {0}, b[64];
  for (int i = 0; i < 64; ++i) a[i] = rank;
  MPI_Request req;

  // Allgather: 3 doubles to each neighbour; the result holds the neighbours' ranks.
  for (int i = 0; i < 64; ++i) b[i] = -7;
  MPI_Neighbor_allgather(a, 3, MPI_DOUBLE, b, 3, MPI_DOUBLE, line);
  for (int k = 0; k < 2; ++k)
    if (nb[k] >= 0) CHECK(b[3 * k] == nb[k]);
  MPI_Ineighbor_allgather(a, 3, MPI_DOUBLE, b, 3, MPI_DOUBLE, line, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  const int rc[2] = {4, 4}, rd[2] = {0, 8};
  MPI_Neighbor_allgatherv(a, 4, MPI_DOUBLE, b, rc, rd, MPI_DOUBLE, line);
  MPI_Ineighbor_allgatherv(a, 4, MPI_DOUBLE, b, rc, rd, MPI_DOUBLE, line, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Neighbor_alltoall(a, 5, MPI_DOUBLE, b, 5, MPI_DOUBLE, line);
  MPI_Ineighbor_alltoall(a, 5, MPI_DOUBLE, b, 5, MPI_DOUBLE, line, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  // Alltoallv: 2 doubles to the lower neighbour, 6 to the upper one (so each receives 6 from below
  // and 2 from above).
  const int sc[2] = {2, 6}, sd[2] = {0, 16}, vc[2] = {6, 2}, vd[2] = {0, 16};
  MPI_Neighbor_alltoallv(a, sc, sd, MPI_DOUBLE, b, vc, vd, MPI_DOUBLE, line);
  MPI_Ineighbor_alltoallv(a, sc, sd, MPI_DOUBLE, b, vc, vd, MPI_DOUBLE, line, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  // Alltoallw: 2 ints down, 6 doubles up.
  const MPI_Datatype st[2] = {MPI_INT, MPI_DOUBLE}, rt[2] = {MPI_DOUBLE, MPI_INT};
  const MPI_Aint swd[2] = {0, 128}, rwd[2] = {0, 128};
  MPI_Neighbor_alltoallw(a, sc, swd, st, b, vc, rwd, rt, line);
  MPI_Ineighbor_alltoallw(a, sc, swd, st, b, vc, rwd, rt, line, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  const long long per[5][2] = {{24, 24}, {32, 32}, {40, 40}, {16, 48}, {8, 48}};
  const char* names[5][2] = {{"MPI_Neighbor_allgather", "MPI_Ineighbor_allgather"},
                             {"MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv"},
                             {"MPI_Neighbor_alltoall", "MPI_Ineighbor_alltoall"},
                             {"MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv"},
                             {"MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw"}};
  for (int f = 0; f < 5; ++f)
    for (int nbk = 0; nbk < 2; ++nbk) {
      long long total = 0;
      for (int k = 0; k < 2; ++k)
        if (nb[k] >= 0) {
          total += per[f][k];
          expect(names[f][nbk], 0, 0, nb[k], per[f][k]);
        }
      expect(names[f][nbk], 1, total, -1, 0);
    }

  MPI_Comm_free(&line);
  expect_close();
  MPI_Finalize();
  return 0;
}
