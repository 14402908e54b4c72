// SPDX-License-Identifier: BSD-3-Clause
/* Compiled as C: toru/comm.h must be valid C, and the plan-based C API must work from C. */
#include <stdlib.h>
#include <string.h>

#include "toru/comm.h"

/* Returns 0 when an all-to-all of `count` ints through the C plan API matches MPI_Alltoall. */
int c_api_plan_roundtrip(MPI_Comm comm, int count, toru_alltoall_algorithm algorithm) {
  int rank = 0, size = 0, bad = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* in = malloc(sizeof(int) * (size_t)(count * size + 1));
  int* out = malloc(sizeof(int) * (size_t)(count * size + 1));
  int* want = malloc(sizeof(int) * (size_t)(count * size + 1));
  for (int i = 0; i < count * size; ++i) in[i] = rank * 100003 + i;
  MPI_Alltoall(in, count, MPI_INT, want, count, MPI_INT, comm);

  toru_alltoall_options opts = toru_alltoall_options_default();
  opts.algorithm = algorithm;
  toru_alltoall_plan plan = NULL;
  if (toru_alltoall_plan_create(comm, (size_t)count, MPI_INT, &opts, &plan) != TORU_SUCCESS || plan == NULL) {
    bad = 1;
  } else {
    toru_alltoall_algorithm got = TORU_ALLTOALL_AUTO;
    size_t ws_bytes = 0;
    if (toru_alltoall_plan_algorithm(plan, &got) != TORU_SUCCESS || got != algorithm) bad = 2;
    if (toru_alltoall_plan_workspace_size(plan, &ws_bytes) != TORU_SUCCESS) bad = 3;
    void* ws = ws_bytes ? malloc(ws_bytes) : NULL;
    if (toru_alltoall_plan_execute_ws(plan, in, out, ws) != TORU_SUCCESS) bad = 4;
    if (memcmp(out, want, sizeof(int) * (size_t)(count * size)) != 0) bad = 5;
    memset(out, 0, sizeof(int) * (size_t)(count * size));
    if (toru_alltoall_plan_start(plan, in, out) != TORU_SUCCESS) bad = 8; /* split phase */
    if (toru_alltoall_plan_start(plan, in, out) != TORU_ERROR_INVALID_ARGUMENT) bad = 9;
    if (toru_alltoall_plan_wait(plan) != TORU_SUCCESS) bad = 10;
    if (memcmp(out, want, sizeof(int) * (size_t)(count * size)) != 0) bad = 11;
    if (toru_alltoall_plan_wait(plan) != TORU_ERROR_INVALID_ARGUMENT) bad = 12;
    toru_request req = NULL; /* persistent: bound once, started twice */
    if (toru_alltoall_plan_init(plan, in, out, &req) != TORU_SUCCESS || req == NULL) bad = 13;
    for (int round = 0; round < 2 && bad == 0; ++round) {
      memset(out, 0, sizeof(int) * (size_t)(count * size));
      if (toru_request_start(req) != TORU_SUCCESS) bad = 14;
      if (toru_request_wait(req) != TORU_SUCCESS) bad = 15;
      if (memcmp(out, want, sizeof(int) * (size_t)(count * size)) != 0) bad = 16;
    }
    if (toru_request_wait(req) != TORU_ERROR_INVALID_ARGUMENT) bad = 17;
    toru_request_free(&req);
    if (req != NULL || toru_alltoall_plan_init(plan, in, out, NULL) != TORU_ERROR_INVALID_ARGUMENT) bad = 18;
    if (toru_alltoall_plan_execute(plan, in, in) != TORU_SUCCESS) bad = 6; /* in place */
    if (memcmp(in, want, sizeof(int) * (size_t)(count * size)) != 0) bad = 7;
    free(ws);
    toru_alltoall_plan_destroy(plan);
  }
  free(in);
  free(out);
  free(want);
  return bad;
}
