/* SPDX-License-Identifier: BSD-3-Clause */
/* The C reshape: x-slabs to z-slabs of a 5x7x3 array of doubles, every point checked against its
 * global index; then a box that leaves the grid on the last rank only must give
 * TORU_ERROR_INVALID_ARGUMENT on every rank; and a c2c plan from x-slabs to z-slabs
 * (toru_fft_plan_create_boxes_3d) transforms an impulse at j0 into exp(-2 pi i k.j0/n) at every k,
 * and again with toru_fft_plan_start / _wait, and with a persistent request (toru_fft_plan_init), to
 * the same bits.
 * Exit status 0 when all holds on every rank. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <toru/toru.h>

static long long part_start(long long n, int p, int r) { return n * r / p; }

static toru_fft_box slab(const long long n[3], int axis, int P, int me) {
  toru_fft_box b = {{0, 0, 0}, {n[0], n[1], n[2]}, {0, 1, 2}, 0};
  b.low[axis] = part_start(n[axis], P, me);
  b.size[axis] = part_start(n[axis], P, me + 1) - b.low[axis];
  return b;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int P, me, bad = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const long long n[3] = {5, 7, 3};
  toru_fft_box in = slab(n, 0, P, me), out = slab(n, 2, P, me);
  toru_fft_reshape r;
  if (toru_fft_reshape_create(MPI_COMM_WORLD, n[0], n[1], n[2], &in, &out, TORU_FFT_ELEMENT_DOUBLE, &r) !=
      TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long long in_size, out_size;
  toru_fft_reshape_sizes(r, &in_size, &out_size);
  double* a = malloc((size_t)(in_size + 1) * sizeof(double));
  double* b = malloc((size_t)(out_size + 1) * sizeof(double));
  for (long long i = 0; i < in.size[0]; ++i)
    for (long long j = 0; j < n[1]; ++j)
      for (long long k = 0; k < n[2]; ++k) a[(i * n[1] + j) * n[2] + k] = ((in.low[0] + i) * n[1] + j) * n[2] + k;
  if (toru_fft_reshape_execute(r, a, b) != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: execute: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long long i = 0; i < n[0]; ++i)
    for (long long j = 0; j < n[1]; ++j)
      for (long long k = 0; k < out.size[2]; ++k)
        if (b[(i * n[1] + j) * out.size[2] + k] != (double)((i * n[1] + j) * n[2] + out.low[2] + k)) ++bad;
  toru_fft_reshape_destroy(r);

  toru_fft_box outside = out;
  if (me == P - 1) outside.low[1] = 1; /* rows 1..7 of an axis of 7 */
  toru_result rc =
      toru_fft_reshape_create(MPI_COMM_WORLD, n[0], n[1], n[2], &in, &outside, TORU_FFT_ELEMENT_DOUBLE, &r);
  if (rc != TORU_ERROR_INVALID_ARGUMENT || r != NULL) {
    fprintf(stderr, "rank %d: a box outside the grid gave %d\n", me, (int)rc);
    ++bad;
  }
  /* The impulse through a plan between the same boxes. */
  toru_fft_plan plan;
  if (toru_fft_plan_create_boxes_3d(MPI_COMM_WORLD, n[0], n[1], n[2], 0, &in, &out, NULL, &plan) != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create_boxes: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  toru_fft_box pin, pout;
  long long alloc;
  toru_fft_plan_local_size(plan, &pin, &pout, &alloc);
  if (pin.low[0] != in.low[0] || pout.size[2] != out.size[2]) ++bad;
  double complex* x = calloc((size_t)alloc, sizeof(double complex));
  double complex* y = calloc((size_t)alloc, sizeof(double complex));
  const long long j0[3] = {3, 5, 2};
  if (j0[0] >= in.low[0] && j0[0] < in.low[0] + in.size[0]) x[((j0[0] - in.low[0]) * n[1] + j0[1]) * n[2] + j0[2]] = 1;
  if (toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y) != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: execute: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const double pi = acos(-1.0);
  for (long long i = 0; i < n[0]; ++i)
    for (long long j = 0; j < n[1]; ++j)
      for (long long k = 0; k < out.size[2]; ++k) {
        const double phase =
            -2 * pi *
            ((double)(i * j0[0]) / n[0] + (double)(j * j0[1]) / n[1] + (double)((out.low[2] + k) * j0[2]) / n[2]);
        if (cabs(y[(i * n[1] + j) * out.size[2] + k] - cexp(I * phase)) > 1e-12) ++bad;
      }
  /* Split phase: the same transform with start / wait, a checksum of the input computed meanwhile. */
  double complex* y2 = calloc((size_t)alloc, sizeof(double complex));
  if (toru_fft_plan_start(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y2) != TORU_SUCCESS) ++bad;
  if (toru_fft_plan_start(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y2) != TORU_ERROR_INVALID_ARGUMENT) ++bad;
  double complex sum = 0;
  for (long long i = 0; i < alloc; ++i) sum += x[i];
  if (toru_fft_plan_wait(plan) != TORU_SUCCESS) ++bad;
  for (long long i = 0; i < alloc; ++i)
    if (y2[i] != y[i]) ++bad;
  if (cabs(sum) > 1.0) ++bad; /* the input is the impulse (or nothing) on this rank */
  if (toru_fft_plan_wait(plan) != TORU_ERROR_INVALID_ARGUMENT) ++bad;
  /* Persistent: bound once (a NULL request pointer on one rank fails init on every rank), started twice. */
  toru_request req = NULL;
  if (toru_fft_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y2, me == P - 1 ? NULL : &req) !=
      TORU_ERROR_INVALID_ARGUMENT)
    ++bad;
  if (req != NULL) ++bad;
  if (toru_fft_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y2, &req) != TORU_SUCCESS) ++bad;
  for (int round = 0; round < 2; ++round) {
    for (long long i = 0; i < alloc; ++i) y2[i] = 0;
    if (toru_request_start(req) != TORU_SUCCESS) ++bad;
    if (toru_request_wait(req) != TORU_SUCCESS) ++bad;
    for (long long i = 0; i < alloc; ++i)
      if (y2[i] != y[i]) ++bad;
  }
  toru_request_free(&req);
  free(y2);
  toru_fft_plan_destroy(plan);
  free(x);
  free(y);

  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("reshape from C: %s (%d bad)\n", all_bad ? "FAILED" : "ok", all_bad);
  free(a);
  free(b);
  MPI_Finalize();
  return all_bad != 0;
}
