/* SPDX-License-Identifier: BSD-3-Clause */
/* The C r2r plan: a DCT-II of x = cos(pi k0 (i+1/2)/n0) cos(pi k1 (j+1/2)/n1) cos(pi k2 (l+1/2)/n2)
 * is n0 n1 n2 at (k0, k1, k2) and zero elsewhere (FFTW's REDFT10: Y_k = 2 sum_j x_j cos(pi k (j+1/2)/n),
 * so a mode k > 0 gives n), an analytic reference; backward with full scaling restores x; a kind
 * out of range is TORU_ERROR_INVALID_ARGUMENT on every rank. Exit 0 when all holds everywhere. */
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
  const long long n[3] = {6, 5, 7}, k0[3] = {2, 1, 3};
  const toru_fft_r2r_kind kinds[3] = {TORU_FFT_DCT2, TORU_FFT_DCT2, TORU_FFT_DCT2};
  toru_fft_r2r_plan plan;
  if (toru_fft_r2r_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], kinds, NULL, &plan) != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  toru_fft_box in, out;
  long long alloc;
  toru_fft_r2r_plan_local_size(plan, &in, &out, &alloc);
  double* x = calloc((size_t)alloc, sizeof(double));
  double* y = calloc((size_t)alloc, sizeof(double));
  double* z = calloc((size_t)alloc, sizeof(double));
  /* Natural output: in and out are the same z-pencils, order {0, 1, 2}. */
  for (long long i = 0; i < in.size[0]; ++i)
    for (long long j = 0; j < in.size[1]; ++j)
      for (long long l = 0; l < in.size[2]; ++l)
        x[(i * in.size[1] + j) * in.row_stride + l] = cos(pi * k0[0] * (in.low[0] + i + 0.5) / n[0]) *
                                                      cos(pi * k0[1] * (in.low[1] + j + 0.5) / n[1]) *
                                                      cos(pi * k0[2] * (in.low[2] + l + 0.5) / n[2]);
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y) != TORU_SUCCESS) ++bad;
  for (long long i = 0; i < out.size[0]; ++i)
    for (long long j = 0; j < out.size[1]; ++j)
      for (long long l = 0; l < out.size[2]; ++l) {
        const int peak = out.low[0] + i == k0[0] && out.low[1] + j == k0[1] && out.low[2] + l == k0[2];
        const double want = peak ? (double)(n[0] * n[1] * n[2]) : 0.0;
        if (fabs(y[(i * out.size[1] + j) * out.row_stride + l] - want) > 1e-9) ++bad;
      }
  if (toru_fft_r2r_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z) != TORU_SUCCESS) ++bad;
  for (long long i = 0; i < alloc && i < in.size[0] * in.size[1] * in.size[2]; ++i)
    if (fabs(z[i] - x[i]) > 1e-12) ++bad;
  toru_fft_r2r_plan_destroy(plan);

  const toru_fft_r2r_kind wrong[3] = {TORU_FFT_DCT2, (toru_fft_r2r_kind)9, TORU_FFT_DCT2};
  toru_result rc = toru_fft_r2r_plan_create_3d(MPI_COMM_WORLD, n[0], n[1], n[2], wrong, NULL, &plan);
  if (rc != TORU_ERROR_INVALID_ARGUMENT || plan != NULL) {
    fprintf(stderr, "rank %d: kind 9 gave %d\n", me, (int)rc);
    ++bad;
  }
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("r2r from C: %s (%d bad)\n", all_bad ? "FAILED" : "ok", all_bad);
  free(x);
  free(y);
  free(z);
  MPI_Finalize();
  return all_bad != 0;
}
