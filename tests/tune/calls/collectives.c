// SPDX-License-Identifier: BSD-3-Clause
// Every blocking collective the shim added and every nonblocking one, each once, with bytes this
// rank knows it contributes (counts depend on the rank, so a wrong count cannot pass by symmetry).
#include <string.h>

#include "expect.h"

static void wait(MPI_Request* req) { MPI_Wait(req, MPI_STATUS_IGNORE); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_open(argv[1]);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  enum { big = 4096 };
  double* a = calloc(big, sizeof(double));
  double* b = calloc(big, sizeof(double));
  int* counts = malloc(sizeof(int) * (size_t)n);
  int* rcounts = malloc(sizeof(int) * (size_t)n);
  int* displs = malloc(sizeof(int) * (size_t)n);
  int* rdispls = malloc(sizeof(int) * (size_t)n);
  MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)n);
  MPI_Datatype* rtypes = malloc(sizeof(MPI_Datatype) * (size_t)n);
  MPI_Request req;
  const int c = 3 + rank;  // a count that differs per rank
  long long sum_counts = 0;

  // Alltoallw / Ialltoallw: to rank i, (i + 1) ints when i is even, (i + 1) doubles when odd.
  long long w_bytes = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = i + 1;
    types[i] = i % 2 ? MPI_DOUBLE : MPI_INT;
    displs[i] = i * 64 * (int)sizeof(double);
    rcounts[i] = rank + 1;
    rtypes[i] = rank % 2 ? MPI_DOUBLE : MPI_INT;
    rdispls[i] = i * 64 * (int)sizeof(double);
    w_bytes += (long long)(i + 1) * (i % 2 ? 8 : 4);
  }
  MPI_Alltoallw(a, counts, displs, types, b, rcounts, rdispls, rtypes, MPI_COMM_WORLD);
  expect("MPI_Alltoallw", 1, w_bytes, -1, 0);
  MPI_Ialltoallw(a, counts, displs, types, b, rcounts, rdispls, rtypes, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ialltoallw", 1, w_bytes, -1, 0);

  // Gatherv / Scatterv at root 1 % n: rank r sends c = 3 + r doubles.
  const int root = 1 % n;
  for (int i = 0; i < n; ++i) {
    rcounts[i] = 3 + i;
    displs[i] = i * 64;
  }
  MPI_Gatherv(a, c, MPI_DOUBLE, b, rcounts, displs, MPI_DOUBLE, root, MPI_COMM_WORLD);
  expect("MPI_Gatherv", 1, 8LL * c, -1, 0);
  MPI_Igatherv(a, c, MPI_DOUBLE, b, rcounts, displs, MPI_DOUBLE, root, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Igatherv", 1, 8LL * c, -1, 0);
  MPI_Scatterv(a, rcounts, displs, MPI_DOUBLE, b, c, MPI_DOUBLE, root, MPI_COMM_WORLD);
  expect("MPI_Scatterv", 1, 8LL * c, -1, 0);
  MPI_Iscatterv(a, rcounts, displs, MPI_DOUBLE, b, c, MPI_DOUBLE, root, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Iscatterv", 1, 8LL * c, -1, 0);

  // Reduce_scatter: rank i gets 2 + i ints; every rank reduces the whole vector.
  for (int i = 0; i < n; ++i) {
    rcounts[i] = 2 + i;
    sum_counts += 2 + i;
  }
  MPI_Reduce_scatter(a, b, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect("MPI_Reduce_scatter", 1, 4 * sum_counts, -1, 0);
  MPI_Ireduce_scatter(a, b, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ireduce_scatter", 1, 4 * sum_counts, -1, 0);
  MPI_Reduce_scatter_block(a, b, 5, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  expect("MPI_Reduce_scatter_block", 1, 4LL * 5 * n, -1, 0);
  MPI_Ireduce_scatter_block(a, b, 5, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ireduce_scatter_block", 1, 4LL * 5 * n, -1, 0);

  MPI_Scan(a, b, 7, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  expect("MPI_Scan", 1, 56, -1, 0);
  MPI_Exscan(a, b, 9, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect("MPI_Exscan", 1, 36, -1, 0);
  MPI_Iscan(a, b, 7, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Iscan", 1, 56, -1, 0);
  MPI_Iexscan(a, b, 9, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Iexscan", 1, 36, -1, 0);

  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ibarrier", 1, 0, -1, 0);
  MPI_Ibcast(a, 11, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ibcast", 1, 88, -1, 0);
  MPI_Ireduce(a, b, 13, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ireduce", 1, 52, -1, 0);

  // Iallreduce: a real reduction, checked, so the wrapper provably left the request alone.
  double mine = rank + 1, total = 0;
  MPI_Iallreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
  wait(&req);
  CHECK(total == n * (n + 1) / 2.0);
  expect("MPI_Iallreduce", 1, 8, -1, 0);

  MPI_Ialltoall(a, 6, MPI_SHORT, b, 6, MPI_SHORT, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ialltoall", 1, 2LL * 6 * n, -1, 0);
  long long v_total = 0;
  for (int i = 0; i < n; ++i) {
    counts[i] = i + rank + 1;  // to rank i
    displs[i] = i * 64;
    rcounts[i] = rank + i + 1;  // from rank i: what i sends to us
    rdispls[i] = i * 64;
    v_total += counts[i];
  }
  MPI_Ialltoallv(a, counts, displs, MPI_DOUBLE, b, rcounts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Ialltoallv", 1, 8 * v_total, -1, 0);

  MPI_Iallgather(a, 3, MPI_INT, b, 3, MPI_INT, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Iallgather", 1, 12, -1, 0);
  for (int i = 0; i < n; ++i) {
    rcounts[i] = 3 + i;
    displs[i] = i * 64;
  }
  MPI_Iallgatherv(a, c, MPI_INT, b, rcounts, displs, MPI_INT, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Iallgatherv", 1, 4LL * c, -1, 0);
  MPI_Igather(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, root, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Igather", 1, 32, -1, 0);
  MPI_Iscatter(a, 5, MPI_DOUBLE, b, 5, MPI_DOUBLE, root, MPI_COMM_WORLD, &req);
  wait(&req);
  expect("MPI_Iscatter", 1, 40, -1, 0);

  expect_close();
  free(a);
  free(b);
  free(counts);
  free(rcounts);
  free(displs);
  free(rdispls);
  free(types);
  free(rtypes);
  MPI_Finalize();
  return 0;
}
