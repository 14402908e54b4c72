// SPDX-License-Identifier: BSD-3-Clause
/* One injected bottleneck: every rank writes its records 64 bytes at a time (20000 system calls). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096], rec[64];
  memset(rec, 'r', sizeof rec);
  snprintf(path, sizeof path, "%s/records.%d", out_dir(argc, argv), rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (int i = 0; i < 20000; ++i)
    if (write(fd, rec, sizeof rec) != (ssize_t)sizeof rec) return 1; /* INJECT(small_writes) */
  close(fd);
  unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
