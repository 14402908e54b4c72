// SPDX-License-Identifier: BSD-3-Clause
/* C example, run as a test: a 3D complex FFT and a distributed 1D FFT through toru/toru.h.
 * Checks the forward transform of a plane wave (one non-zero coefficient), the round trip, and
 * that a bad argument gives a result code and a message on every rank. Exit status 0 = pass. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toru/toru.h"

#define CHECK(call)                                                                            \
  do {                                                                                         \
    toru_result r_ = (call);                                                                   \
    if (r_ != TORU_SUCCESS) {                                                                  \
      fprintf(stderr, "%s failed: %s: %s\n", #call, toru_error_string(r_), toru_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                            \
    }                                                                                          \
  } while (0)

static const double two_pi = 6.283185307179586476925286766559;

/* x(i,j,k) = exp(2 pi i (i*m0/n0 + j*m1/n1 + k*m2/n2)) on this rank's input box (natural order):
 * its transform is a single coefficient N at (m0,m1,m2). */
static void plane_wave(double complex* a, const toru_fft_box* in, const long long m[3], const long long n[3]) {
  for (long long i = 0; i < in->size[0]; ++i)
    for (long long j = 0; j < in->size[1]; ++j)
      for (long long k = 0; k < in->size[2]; ++k) {
        const double phase = (double)((in->low[0] + i) * m[0]) / n[0] + (double)((in->low[1] + j) * m[1]) / n[1] +
                             (double)((in->low[2] + k) * m[2]) / n[2];
        a[(i * in->size[1] + j) * in->size[2] + k] = cexp(I * two_pi * phase);
      }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  /* 3D: x(i,j,k) = exp(2 pi i (i*m0/n0 + j*m1/n1 + k*m2/n2)) has a single coefficient N at (m0,m1,m2). */
  const long long n[3] = {12, 9, 10}, m[3] = {3, 5, 7};
  const double N = (double)(n[0] * n[1] * n[2]);
  toru_fft_plan plan = NULL;
  toru_fft_options opts = toru_fft_options_default();
  opts.transposed_out = 1;
  CHECK(toru_fft_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], &opts, &plan));
  toru_fft_box in, out;
  long long alloc = 0;
  CHECK(toru_fft_plan_local_size(plan, &in, &out, &alloc));
  {
    /* The plan-less query (like fftw_mpi_local_size_3d) agrees with the plan. */
    toru_fft_box in2, out2;
    long long alloc2 = 0;
    CHECK(toru_fft_local_size_3d(MPI_COMM_WORLD, n[0], n[1], n[2], 0, &opts, &in2, &out2, &alloc2));
    for (int ax = 0; ax < 3; ++ax)
      if (in2.low[ax] != in.low[ax] || in2.size[ax] != in.size[ax] || out2.low[ax] != out.low[ax] ||
          out2.size[ax] != out.size[ax] || out2.order[ax] != out.order[ax])
        ++failures;
    if (alloc2 != alloc) ++failures;
  }
  double complex* a = malloc(sizeof(double complex) * (size_t)alloc);
  double complex* b = malloc(sizeof(double complex) * (size_t)alloc);
  plane_wave(a, &in, m, n);
  CHECK(toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b));
  double err = 0;
  const int* o = out.order;
  long long g[3];
  for (long long x = 0; x < out.size[o[0]]; ++x)
    for (long long y = 0; y < out.size[o[1]]; ++y)
      for (long long z = 0; z < out.size[o[2]]; ++z) {
        g[o[0]] = out.low[o[0]] + x;
        g[o[1]] = out.low[o[1]] + y;
        g[o[2]] = out.low[o[2]] + z;
        const double want = (g[0] == m[0] && g[1] == m[1] && g[2] == m[2]) ? N : 0.0;
        err = fmax(err, cabs(b[(x * out.size[o[1]] + y) * out.row_stride + z] - want));
      }
  CHECK(toru_fft_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, b, b));
  for (long long i = 0; i < in.size[0] * in.size[1] * in.size[2]; ++i) err = fmax(err, cabs(b[i] - a[i]));
  if (err > 1e-10) {
    fprintf(stderr, "rank %d: 3D error %g\n", rank, err);
    ++failures;
  }
  CHECK(toru_fft_plan_destroy(plan));
  free(a);
  free(b);

  /* 3D natural order into the plan's shared_out(): the same single coefficient, and back. */
  {
    const long long s[3] = {45, 20, 126}, q[3] = {4, 11, 100};
    const double S = (double)(s[0] * s[1] * s[2]);
    CHECK(toru_fft_plan_create_3d(MPI_COMM_WORLD, s[0], s[1], s[2], NULL, &plan));
    CHECK(toru_fft_plan_local_size(plan, &in, &out, &alloc));
    void* shared = NULL;
    CHECK(toru_fft_plan_shared_out(plan, &shared));
    void* again = NULL;
    CHECK(toru_fft_plan_shared_out(plan, &again));
    if (shared == NULL || again != shared) ++failures;
    double complex* x = malloc(sizeof(double complex) * (size_t)alloc);
    double complex* y = malloc(sizeof(double complex) * (size_t)alloc);
    double complex* X = shared;
    plane_wave(x, &in, q, s);
    CHECK(toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, X));
    double e = 0;
    for (long long i = 0; i < out.size[0]; ++i)
      for (long long j = 0; j < out.size[1]; ++j)
        for (long long k = 0; k < out.size[2]; ++k) {
          const int hit = out.low[0] + i == q[0] && out.low[1] + j == q[1] && out.low[2] + k == q[2];
          e = fmax(e, cabs(X[(i * out.size[1] + j) * out.row_stride + k] - (hit ? S : 0.0)));
        }
    CHECK(toru_fft_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, X, y));
    for (long long i = 0; i < in.size[0] * in.size[1] * in.size[2]; ++i) e = fmax(e, cabs(y[i] - x[i]));
    if (e > 1e-12 * S) { /* relative to the coefficient, N */
      fprintf(stderr, "rank %d: shared_out error %g\n", rank, e);
      ++failures;
    }
    CHECK(toru_fft_plan_destroy(plan));
    free(x);
    free(y);
  }

  /* 1D, N = 1024, scrambled output: round trip. */
  opts = toru_fft_options_default();
  opts.transposed_out = 1;
  CHECK(toru_fft_plan_create_1d(MPI_COMM_WORLD, 1024, &opts, &plan));
  CHECK(toru_fft_plan_local_size(plan, &in, &out, &alloc));
  a = malloc(sizeof(double complex) * (size_t)alloc);
  b = malloc(sizeof(double complex) * (size_t)alloc);
  for (long long i = 0; i < in.size[0]; ++i)
    a[i] = sin(0.1 * (double)(in.low[0] + i)) + I * (double)((in.low[0] + i) % 7);
  CHECK(toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b));
  CHECK(toru_fft_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, b, b));
  {
    void* none = NULL;
    if (toru_fft_plan_shared_out(plan, &none) != TORU_ERROR_INVALID_ARGUMENT || none != NULL) ++failures;
  }
  err = 0;
  for (long long i = 0; i < in.size[0]; ++i) err = fmax(err, cabs(b[i] - a[i]));
  if (err > 1e-10) {
    fprintf(stderr, "rank %d: 1D error %g\n", rank, err);
    ++failures;
  }
  CHECK(toru_fft_plan_destroy(plan));
  free(a);
  free(b);

  /* Bad input: a zero size fails on every rank with a code and a message, and no plan. */
  plan = (toru_fft_plan)&opts;
  toru_result r = toru_fft_plan_create_3d(MPI_COMM_WORLD, 8, 0, 8, NULL, &plan);
  if (r != TORU_ERROR_INVALID_ARGUMENT || plan != NULL || toru_last_error()[0] == '\0') {
    fprintf(stderr, "rank %d: bad size gave %d (%s)\n", rank, (int)r, toru_last_error());
    ++failures;
  }
  if (toru_fft_plan_execute(NULL, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, NULL, NULL) != TORU_ERROR_INVALID_ARGUMENT)
    ++failures;

  /* Options carry their size: 0 (never initialised) and a size larger than the library's struct are
   * refused on every rank with a message naming the field; a shorter size (a caller built against an
   * older header) reads only that prefix, so a bad torus beyond it goes unread. */
  {
    const toru_fft_options init = TORU_FFT_OPTIONS_INIT, def = toru_fft_options_default();
    toru_fft_options byfn;
    CHECK(toru_fft_options_init(&byfn));
    const toru_fft_options* all[3] = {&init, &def, &byfn};
    int same = init.size == sizeof(toru_fft_options);
    for (int i = 1; i < 3; ++i)
      same = same && all[i]->size == init.size && all[i]->precision == init.precision &&
             all[i]->decomposition == init.decomposition && all[i]->grid[0] == 0 && all[i]->grid[1] == 0 &&
             all[i]->transposed_out == 0 && all[i]->measure == 0 && all[i]->overlap == 1 && all[i]->chunks == 0 &&
             all[i]->n1 == 0 && all[i]->torus == NULL && all[i]->order == NULL;
    if (!same) {
      fprintf(stderr, "rank %d: TORU_FFT_OPTIONS_INIT, toru_fft_options_init and _default differ\n", rank);
      ++failures;
    }
    const size_t sizes[2] = {0, sizeof(toru_fft_options) + 8};
    for (int s = 0; s < 2; ++s) {
      toru_fft_options bad = TORU_FFT_OPTIONS_INIT;
      bad.size = sizes[s];
      r = toru_fft_plan_create_3d(MPI_COMM_WORLD, 8, 8, 8, &bad, &plan);
      if (r != TORU_ERROR_INVALID_ARGUMENT || plan != NULL || !strstr(toru_last_error(), "options->size")) {
        fprintf(stderr, "rank %d: options size %zu gave %d (%s)\n", rank, sizes[s], (int)r, toru_last_error());
        ++failures;
      }
    }
    toru_fft_options old = TORU_FFT_OPTIONS_INIT;
    old.torus = "not a torus";
    r = toru_fft_plan_create_3d(MPI_COMM_WORLD, 8, 8, 8, &old, &plan);
    if (r == TORU_SUCCESS || plan != NULL) {
      fprintf(stderr, "rank %d: a bad torus within the options' size was accepted\n", rank);
      ++failures;
    }
    old.size = offsetof(toru_fft_options, torus);
    r = toru_fft_plan_create_3d(MPI_COMM_WORLD, 8, 8, 8, &old, &plan);
    if (r != TORU_SUCCESS || plan == NULL) {
      fprintf(stderr, "rank %d: a prefix without torus gave %d (%s)\n", rank, (int)r, toru_last_error());
      ++failures;
    }
    CHECK(toru_fft_plan_destroy(plan));
  }

  /* toru 0.1's names still build (with a deprecation warning, silenced here) and give the same
   * transform as the new ones. */
  {
    toru_fft_plan p_new = NULL, p_old = NULL;
    CHECK(toru_fft_plan_create_1d(MPI_COMM_WORLD, 96, NULL, &p_new));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    CHECK(toru_fft_plan_1d(MPI_COMM_WORLD, 96, NULL, &p_old));
    long long alloc_old = 0;
    CHECK(toru_fft_local_size(p_old, &in, &out, &alloc_old));
    CHECK(toru_fft_plan_local_size(p_new, NULL, NULL, &alloc));
    if (alloc_old != alloc) ++failures;
    a = malloc(sizeof(double complex) * (size_t)alloc);
    b = malloc(sizeof(double complex) * (size_t)alloc);
    double complex* c = malloc(sizeof(double complex) * (size_t)alloc);
    for (long long i = 0; i < in.size[0]; ++i) a[i] = cos(0.3 * (double)(in.low[0] + i)) + I;
    CHECK(toru_fft_execute(p_old, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b));
    CHECK(toru_fft_plan_execute(p_new, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, c));
    for (long long i = 0; i < out.size[0]; ++i)
      if (b[i] != c[i]) {
        fprintf(stderr, "rank %d: old and new names differ at %lld\n", rank, i);
        ++failures;
        break;
      }
    CHECK(toru_fft_destroy(p_old));
#pragma GCC diagnostic pop
    CHECK(toru_fft_plan_destroy(p_new));
    free(a);
    free(b);
    free(c);
  }

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("toru C example: %s\n", total == 0 ? "passed" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
