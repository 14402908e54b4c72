// SPDX-License-Identifier: BSD-3-Clause
/* A legacy code's use of the drop-in calls: plain MPI_Init (no MPI_THREAD_MULTIPLE), toru_alltoall and
   toru_alltoallv on MPI_COMM_WORLD, on a communicator it frees and on one it never frees, then
   MPI_Finalize. tests/comm/check_program_output.cmake runs it and reads what it printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toru/comm.h"

static int exchange(MPI_Comm comm, int count) {
  int rank = 0, size = 0, bad = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t n = (size_t)count * (size_t)size;
  int* in = malloc(sizeof(int) * n);
  int* out = malloc(sizeof(int) * n);
  int* want = malloc(sizeof(int) * n);
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  for (size_t i = 0; i < n; ++i) in[i] = rank * 1000003 + (int)i;
  for (int j = 0; j < size; ++j) counts[j] = count, displs[j] = j * count;
  MPI_Alltoall(in, count, MPI_INT, want, count, MPI_INT, comm);
  for (int rep = 0; rep < 3; ++rep) {
    memset(out, 0, sizeof(int) * n);
    if (toru_alltoall(in, count, MPI_INT, out, count, MPI_INT, comm) != TORU_SUCCESS) bad = 1;
    if (memcmp(out, want, sizeof(int) * n) != 0) bad = 2;
    memset(out, 0, sizeof(int) * n);
    if (toru_alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm) != TORU_SUCCESS) bad = 3;
    if (memcmp(out, want, sizeof(int) * n) != 0) bad = 4;
  }
  if (bad) fprintf(stderr, "dropin_program: rank %d: %s\n", rank, toru_last_error());
  free(in);
  free(out);
  free(want);
  free(counts);
  free(displs);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, bad = 0, any = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm freed, kept;
  MPI_Comm_dup(MPI_COMM_WORLD, &freed);
  MPI_Comm_dup(MPI_COMM_WORLD, &kept);
  bad |= exchange(MPI_COMM_WORLD, 16);
  bad |= exchange(freed, 3);
  bad |= exchange(kept, 5);
  MPI_Comm_free(&freed);
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("dropin_program: %s\n", any ? "WRONG" : "results ok");
  fflush(stdout);
  MPI_Finalize();
  return any ? 1 : 0;
}
