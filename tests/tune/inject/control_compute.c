// SPDX-License-Identifier: BSD-3-Clause
/* Control: balanced compute, a halo exchange whose receives are posted before the work, an
 * all-reduce per step. The tool must find nothing. */
#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  enum { n = 8192 };
  static double out[2][n], in[2][n];
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double x = rank, sum = 0;
  for (int it = 0; it < 8; ++it) {
    MPI_Request req[4];
    MPI_Irecv(in[0], n, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in[1], n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
    work(0.06);
    MPI_Isend(out[0], n, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(out[1], n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  (void)argv;
  MPI_Finalize();
  return 0;
}
