// SPDX-License-Identifier: BSD-3-Clause
/* One injected bottleneck: in every pair (0,1), (2,3), ... the even rank computes 0.1 s before it
 * sends, the odd rank only 0.01 s before it receives. */
#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double buf[16] = {0};
  const int partner = rank ^ 1;
  for (int it = 0; it < 6; ++it) {
    if (partner >= size) {
      work(0.1);
    } else if (rank % 2 == 0) {
      work(0.1);
      buf[0] = it;
      MPI_Send(buf, 16, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD);
    } else {
      work(0.01);
      MPI_Recv(buf, 16, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* INJECT(late_sender) */
    }
  }
  MPI_Finalize();
  return 0;
}
