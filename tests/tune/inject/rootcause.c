// SPDX-License-Identifier: BSD-3-Clause
/* A wait passed along a chain: every step, after an all-reduce, rank 0 computes 0.1 s and sends to
 * rank 1, which receives (waiting), computes 0.01 s and sends to rank 2, which receives (waiting).
 * The symptoms are late senders at both receives and waits at the all-reduce; the one cause is
 * rank 0's compute between the all-reduce and its send, which the root-cause rule must name. */
#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double buf[16] = {0}, sum = 0;
  for (int it = 0; it < 6; ++it) {
    MPI_Allreduce(&buf[0], &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
      work(0.1);
      MPI_Send(buf, 16, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD); /* INJECT(imbalance_root_cause) */
    } else if (rank == 1) {
      work(0.01);
      MPI_Recv(buf, 16, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* INJECT(late_sender) */
      work(0.01);
      if (size > 2) MPI_Send(buf, 16, MPI_DOUBLE, 2, 0, MPI_COMM_WORLD);
    } else if (rank == 2) {
      work(0.01);
      MPI_Recv(buf, 16, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  return 0;
}
