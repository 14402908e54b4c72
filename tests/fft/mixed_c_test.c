/* SPDX-License-Identifier: BSD-3-Clause */
/* The C mixed plan on a channel (periodic x and y, DCT-II in z): the transform of
 * x = exp(2 pi i (a0 i / n0 + a1 j / n1)) cos(pi k2 (l + 1/2) / n2) is n0 n1 n2 at (a0, a1, k2) and
 * zero elsewhere (the DFT with sign -1 of the plane wave gives n at its frequency; FFTW's REDFT10
 * of the cosine mode gives n2), an analytic reference; backward with full scaling restores x;
 * TORU_FFT_PERIODIC passed to the real-to-real create is TORU_ERROR_INVALID_ARGUMENT on every
 * rank. The real-data mixed plan (DCT-II in y, r2c in z) on the real
 * x = cos(2 pi (a0 i / n0 + a2 l / n2)) cos(pi k1 (j + 1/2) / n1): n0 n1 n2 / 2 at (a0, k1, a2) in
 * the Hermitian half (its twin at (-a0, -a2) lies beyond n2/2), zero elsewhere; backward restores x.
 * Exit 0 when all holds everywhere. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <toru/toru.h>

static const double pi = 3.14159265358979323846;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const long long n[3] = {6, 5, 7}, peak_at[3] = {4, 2, 3};
  const toru_fft_r2r_kind kinds[3] = {TORU_FFT_PERIODIC, TORU_FFT_PERIODIC, TORU_FFT_DCT2};
  toru_fft_r2r_plan plan;
  if (toru_fft_r2r_plan_create_mixed_3d(MPI_COMM_WORLD, n[0], n[1], n[2], kinds, NULL, &plan) != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  toru_fft_box in, out;
  long long alloc;
  toru_fft_r2r_plan_local_size(plan, &in, &out, &alloc);
  double complex* x = calloc((size_t)alloc, sizeof(double complex));
  double complex* y = calloc((size_t)alloc, sizeof(double complex));
  double complex* z = calloc((size_t)alloc, sizeof(double complex));
  /* Natural output: in and out are the same z-pencils, order {0, 1, 2}. */
  for (long long i = 0; i < in.size[0]; ++i)
    for (long long j = 0; j < in.size[1]; ++j)
      for (long long l = 0; l < in.size[2]; ++l)
        x[(i * in.size[1] + j) * in.row_stride + l] =
            cexp(2 * pi * I *
                 ((double)(peak_at[0] * (in.low[0] + i)) / n[0] + (double)(peak_at[1] * (in.low[1] + j)) / n[1])) *
            cos(pi * peak_at[2] * (in.low[2] + l + 0.5) / n[2]);
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y) != TORU_SUCCESS) ++bad;
  for (long long i = 0; i < out.size[0]; ++i)
    for (long long j = 0; j < out.size[1]; ++j)
      for (long long l = 0; l < out.size[2]; ++l) {
        const int peak = out.low[0] + i == peak_at[0] && out.low[1] + j == peak_at[1] && out.low[2] + l == peak_at[2];
        const double want = peak ? (double)(n[0] * n[1] * n[2]) : 0.0;
        if (cabs(y[(i * out.size[1] + j) * out.row_stride + l] - want) > 1e-9) ++bad;
      }
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z) != TORU_SUCCESS) ++bad;
  for (long long i = 0; i < alloc && i < in.size[0] * in.size[1] * in.size[2]; ++i)
    if (cabs(z[i] - x[i]) > 1e-12) ++bad;
  toru_fft_r2r_plan_destroy(plan);

  toru_result rc = toru_fft_r2r_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], kinds, NULL, &plan);
  if (rc != TORU_ERROR_INVALID_ARGUMENT || plan != NULL) {
    fprintf(stderr, "rank %d: a periodic axis in a real-to-real plan gave %d\n", me, (int)rc);
    ++bad;
  }
  {
    const toru_fft_r2r_kind walls_in_y[3] = {TORU_FFT_PERIODIC, TORU_FFT_DCT2, TORU_FFT_PERIODIC};
    if (toru_fft_r2r_plan_create_mixed_r2c_3d(MPI_COMM_WORLD, n[0], n[1], n[2], walls_in_y, NULL, &plan) !=
        TORU_SUCCESS) {
      fprintf(stderr, "rank %d: create mixed_r2c: %s\n", me, toru_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    toru_fft_r2r_plan_local_size(plan, &in, &out, &alloc);
    double* r = calloc((size_t)(2 * alloc), sizeof(double));
    double* back = calloc((size_t)(2 * alloc), sizeof(double));
    double complex* spec = calloc((size_t)alloc, sizeof(double complex));
    for (long long i = 0; i < in.size[0]; ++i)
      for (long long j = 0; j < in.size[1]; ++j)
        for (long long l = 0; l < in.size[2]; ++l)
          r[(i * in.size[1] + j) * in.row_stride + l] =
              cos(2 * pi *
                  ((double)(peak_at[0] * (in.low[0] + i)) / n[0] + (double)(peak_at[2] * (in.low[2] + l)) / n[2])) *
              cos(pi * peak_at[1] * (in.low[1] + j + 0.5) / n[1]);
    if (in.row_stride != 2 * (n[2] / 2 + 1)) ++bad;
    if (toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, r, spec) != TORU_SUCCESS) ++bad;
    for (long long i = 0; i < out.size[0]; ++i)
      for (long long j = 0; j < out.size[1]; ++j)
        for (long long l = 0; l < out.size[2]; ++l) {
          const int peak = out.low[0] + i == peak_at[0] && out.low[1] + j == peak_at[1] && out.low[2] + l == peak_at[2];
          const double want = peak ? (double)(n[0] * n[1] * n[2]) / 2 : 0.0;
          if (cabs(spec[(i * out.size[1] + j) * out.row_stride + l] - want) > 1e-9) ++bad;
        }
    if (toru_fft_r2r_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, spec, back) != TORU_SUCCESS) ++bad;
    for (long long i = 0; i < in.size[0]; ++i)
      for (long long j = 0; j < in.size[1]; ++j)
        for (long long l = 0; l < in.size[2]; ++l) {
          const long long at = (i * in.size[1] + j) * in.row_stride + l;
          if (fabs(back[at] - r[at]) > 1e-12) ++bad;
        }
    toru_fft_r2r_plan_destroy(plan);
    free(r);
    free(back);
    free(spec);
  }

  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("mixed from C: %s (%d bad)\n", all_bad ? "FAILED" : "ok", all_bad);
  free(x);
  free(y);
  free(z);
  MPI_Finalize();
  return all_bad != 0;
}
