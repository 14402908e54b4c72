// SPDX-License-Identifier: BSD-3-Clause
// What a coverage program knows it did, written next to the shim's profile for check_calls.py: one
// line per fact, "FUNCTION calls bytes partner partner_bytes" (partner -1: none), or
// "metric:NAME calls bytes -1 0" (expect_metric).
#pragma once

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static FILE* expect_file;

static void expect_open(const char* dir) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[4096];
  snprintf(path, sizeof path, "%s/expect.%d", dir, rank);
  expect_file = fopen(path, "w");
  if (!expect_file) {
    fprintf(stderr, "cannot write %s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static void expect(const char* function, long calls, long long bytes, int partner, long long partner_bytes) {
  fprintf(expect_file, "%s %ld %lld %d %lld\n", function, calls, bytes, partner, partner_bytes);
}

// How the metrics class the program's calls: `calls` and `bytes` of all sites whose metric (is_collective,
// is_p2p) is 1 (check_calls.py sums them over ranks, as the metrics do).
static void expect_metric(const char* metric, long calls, long long bytes) {
  fprintf(expect_file, "metric:%s %ld %lld -1 0\n", metric, calls, bytes);
}

static void expect_close(void) { fclose(expect_file); }

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      MPI_Abort(MPI_COMM_WORLD, 3);                                            \
    }                                                                          \
  } while (0)
