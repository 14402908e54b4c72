// SPDX-License-Identifier: BSD-3-Clause
/* A rank that crashes: the job tests check that such a job ends FAILED and says why. The last rank
 * aborts (SIGABRT) while the others wait in a barrier it never reaches, so only the launcher's
 * kill-on-bad-exit (srun) or error handling (mpiexec) can end the step. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank == nranks - 1) {
    fprintf(stderr, "crash_rank: rank %d of %d aborting on purpose\n", rank, nranks);
    fflush(stderr);
    abort();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
