// SPDX-License-Identifier: BSD-3-Clause
/* One injected bottleneck: rank 0 writes everybody's output (64 MiB a step, enough that even a fast page cache spends well over the rule's 0.05 s in it) while the others wait. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const size_t chunk = 1 << 20;
  char* buf = malloc(chunk);
  memset(buf, 'x', chunk);
  char path[4096];
  snprintf(path, sizeof path, "%s/serialized.dat", out_dir(argc, argv));
  for (int it = 0; it < 8; ++it) {
    work(0.02);
    if (rank == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      for (int i = 0; i < 64; ++i)
        if (write(fd, buf, chunk) != (ssize_t)chunk) return 1; /* INJECT(serialized_io, lines=2) */
      fsync(fd);
      close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) unlink(path);
  free(buf);
  MPI_Finalize();
  return 0;
}
