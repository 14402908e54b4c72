// SPDX-License-Identifier: BSD-3-Clause
/* One injected bottleneck: the last rank computes five times longer before every all-reduce. */
#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double x = rank, sum = 0;
  for (int it = 0; it < 8; ++it) {
    work(rank == size - 1 ? 0.1 : 0.02);
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* INJECT(load_imbalance) */
  }
  (void)argv;
  MPI_Finalize();
  return sum == 0 && size > 1;
}
