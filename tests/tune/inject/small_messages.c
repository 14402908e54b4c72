// SPDX-License-Identifier: BSD-3-Clause
/* One injected bottleneck: pairs exchange 8-byte messages 5000 times instead of one message. The
 * latency is paid where the rank waits for the reply: the receive is the site to name. */
#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int partner = rank ^ 1;
  double v = rank;
  for (int i = 0; i < 5000 && partner < size; ++i) {
    if (rank % 2 == 0) {
      MPI_Send(&v, 1, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD);
      MPI_Recv(&v, 1, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* INJECT(small_messages) */
    } else {
      MPI_Recv(&v, 1, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&v, 1, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD);
    }
  }
  if (partner >= size) work(0.2);
  MPI_Finalize();
  return 0;
}
