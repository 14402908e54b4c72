// SPDX-License-Identifier: BSD-3-Clause
/* One injected bottleneck: in every pair the even rank sends 4 MiB right away with a synchronous send
 * (it completes only once the receive is posted, as a rendezvous send of this size would; Ssend
 * makes it so whatever the MPI library's protocol), the odd rank computes 0.1 s before it receives. */
#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 1 << 19;
  double* buf = calloc((size_t)n, sizeof(double));
  const int partner = rank ^ 1;
  for (int it = 0; it < 6; ++it) {
    if (partner >= size) {
      work(0.1);
    } else if (rank % 2 == 0) {
      work(0.01);
      MPI_Ssend(buf, n, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD); /* INJECT(late_receiver) */
    } else {
      work(0.1);
      MPI_Recv(buf, n, MPI_DOUBLE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
