/* SPDX-License-Identifier: BSD-3-Clause */
/* The C batched plans: three real fields (interleaved) of an 11 x 7 x 9 grid through one r2c plan,
 * each against serial FFTW's fftw_plan_dft_r2c_3d of that field alone on the whole array; backward
 * with full scaling restores every field; then two complex fields (planar) through the c2c plan
 * against fftw_plan_dft_3d; howmany 0 is TORU_ERROR_INVALID_ARGUMENT on every rank. Exit 0 when
 * all holds everywhere. */
#include <complex.h> /* before fftw3.h: fftw_complex is double complex */
#include <fftw3.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <toru/toru.h>

enum { F = 3 };
static const long long n[3] = {11, 7, 9};

/* Offset of global point g in box b's memory. */
static long long at(const toru_fft_box* b, const long long g[3]) {
  const int* o = b->order;
  return ((g[o[0]] - b->low[o[0]]) * b->size[o[1]] + (g[o[1]] - b->low[o[1]])) * b->row_stride +
         (g[o[2]] - b->low[o[2]]);
}

/* A value of field f at global point g, the same on every rank. */
static double value(int f, const long long g[3]) {
  return sin(0.7 * (double)(g[0] + 1) * (f + 1)) + cos(1.3 * (double)g[1] - 0.4 * (double)g[2] * (f + 2)) +
         0.1 * (double)f;
}

/* Steps g through every point of box b: for (int more = first(b, g); more; more = next(b, g)). */
static int first(const toru_fft_box* b, long long g[3]) {
  for (int a = 0; a < 3; ++a) g[a] = b->low[a];
  return b->size[0] > 0 && b->size[1] > 0 && b->size[2] > 0;
}
static int next(const toru_fft_box* b, long long g[3]) {
  for (int a = 2; a >= 0; --a) {
    if (++g[a] < b->low[a] + b->size[a]) return 1;
    g[a] = b->low[a];
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const long long N = n[0] * n[1] * n[2], nh = n[2] / 2 + 1;

  /* r2c: the serial reference of every field. */
  double* whole = malloc(sizeof(double) * (size_t)N);
  fftw_complex* ref = fftw_alloc_complex((size_t)(F * n[0] * n[1] * nh));
  for (int f = 0; f < F; ++f) {
    for (long long i = 0; i < N; ++i) {
      const long long g[3] = {i / (n[1] * n[2]), (i / n[2]) % n[1], i % n[2]};
      whole[i] = value(f, g);
    }
    fftw_plan p =
        fftw_plan_dft_r2c_3d((int)n[0], (int)n[1], (int)n[2], whole, ref + f * n[0] * n[1] * nh, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
  }
  toru_fft_options o = TORU_FFT_OPTIONS_INIT;
  o.transposed_out = 1;
  toru_fft_batch_plan plan;
  if (toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], 1, F, TORU_FFT_INTERLEAVED, &o, &plan) !=
      TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  toru_fft_box in, out;
  long long alloc;
  toru_fft_batch_plan_local_size(plan, &in, &out, &alloc);
  double* x = calloc((size_t)(2 * alloc), sizeof(double));
  double* z = calloc((size_t)(2 * alloc), sizeof(double));
  double complex* y = calloc((size_t)alloc, sizeof(double complex));
  long long g[3];
  for (int more = first(&in, g); more; more = next(&in, g))
    for (int f = 0; f < F; ++f) x[at(&in, g) * F + f] = value(f, g);
  if (toru_fft_batch_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y) != TORU_SUCCESS) ++bad;
  for (int more = first(&out, g); more; more = next(&out, g))
    for (int f = 0; f < F; ++f) {
      const fftw_complex* w = ref + f * n[0] * n[1] * nh + (g[0] * n[1] + g[1]) * nh + g[2];
      if (cabs(y[at(&out, g) * F + f] - *w) > 1e-9 * (double)N) ++bad;
    }
  if (toru_fft_batch_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z) != TORU_SUCCESS) ++bad;
  for (int more = first(&in, g); more; more = next(&in, g))
    for (int f = 0; f < F; ++f)
      if (fabs(z[at(&in, g) * F + f] - value(f, g)) > 1e-12) ++bad;
  toru_fft_batch_plan_destroy(plan);
  free(x);
  free(y);
  free(z);

  /* c2c, planar: two complex fields. */
  fftw_complex* cw = fftw_alloc_complex((size_t)N);
  fftw_complex* cref = fftw_alloc_complex((size_t)(2 * N));
  for (int f = 0; f < 2; ++f) {
    for (long long i = 0; i < N; ++i) {
      const long long g[3] = {i / (n[1] * n[2]), (i / n[2]) % n[1], i % n[2]};
      cw[i] = value(f, g) + I * value(f + 1, g);
    }
    fftw_plan p = fftw_plan_dft_3d((int)n[0], (int)n[1], (int)n[2], cw, cref + f * N, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
  }
  if (toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], 0, 2, TORU_FFT_PLANAR, NULL, &plan) !=
      TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create c2c: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  toru_fft_batch_plan_local_size(plan, &in, &out, &alloc);
  double complex* a = calloc((size_t)alloc, sizeof(double complex));
  double complex* b = calloc((size_t)alloc, sizeof(double complex));
  const long long ein = in.size[0] * in.size[1] * in.row_stride, eout = out.size[0] * out.size[1] * out.row_stride;
  for (int more = first(&in, g); more; more = next(&in, g))
    for (int f = 0; f < 2; ++f) a[f * ein + at(&in, g)] = value(f, g) + I * value(f + 1, g);
  if (toru_fft_batch_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b) != TORU_SUCCESS) ++bad;
  for (int more = first(&out, g); more; more = next(&out, g))
    for (int f = 0; f < 2; ++f) {
      const fftw_complex* w = cref + f * N + (g[0] * n[1] + g[1]) * n[2] + g[2];
      if (cabs(b[f * eout + at(&out, g)] - *w) > 1e-9 * (double)N) ++bad;
    }
  toru_fft_batch_plan_destroy(plan);
  free(a);
  free(b);

  toru_result rc =
      toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], 1, 0, TORU_FFT_INTERLEAVED, NULL, &plan);
  if (rc != TORU_ERROR_INVALID_ARGUMENT || plan != NULL) {
    fprintf(stderr, "rank %d: howmany 0 gave %d\n", me, (int)rc);
    ++bad;
  }
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("batched plans from C: %s (%d bad)\n", all_bad ? "FAILED" : "ok", all_bad);
  free(whole);
  fftw_free(ref);
  fftw_free(cw);
  fftw_free(cref);
  MPI_Finalize();
  return all_bad ? 1 : 0;
}
