// SPDX-License-Identifier: BSD-3-Clause
/* The cost libtoru_tune_pmpi.so adds to one MPI call: N calls of MPI_Allreduce (one double) and N
 * zero-byte MPI_Sendrecv to self on a single rank (no partner, no waiting), timed with and without
 * the library preloaded. Prints nanoseconds per call (the fastest of 5 rounds).
 *   mpiexec -n 1 wrapper_cost; mpiexec -n 1 -x LD_PRELOAD=libtoru_tune_pmpi.so wrapper_cost */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = 200000;
  double best_ar = 1e30, best_sr = 1e30, x = 1, y = 0;
  for (int round = 0; round < 5; ++round) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; ++i)
      MPI_Sendrecv(&x, 0, MPI_DOUBLE, 0, 0, &y, 0, MPI_DOUBLE, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    double t2 = MPI_Wtime();
    if (t1 - t0 < best_ar) best_ar = t1 - t0;
    if (t2 - t1 < best_sr) best_sr = t2 - t1;
  }
  printf("MPI_Allreduce %.1f ns/call, MPI_Sendrecv %.1f ns/call\n", best_ar / n * 1e9, best_sr / n * 1e9);
  MPI_Finalize();
  return 0;
}
