// SPDX-License-Identifier: BSD-3-Clause
/* Control: every rank writes its own 8 MiB in 1 MiB blocks, balanced. The tool must find nothing. */
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
  memset(buf, 'c', chunk);
  char path[4096];
  snprintf(path, sizeof path, "%s/part.%d", out_dir(argc, argv), rank);
  for (int it = 0; it < 2; ++it) {
    work(0.05);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 8; ++i)
      if (write(fd, buf, chunk) != (ssize_t)chunk) return 1;
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  unlink(path);
  free(buf);
  MPI_Finalize();
  return 0;
}
