/* SPDX-License-Identifier: BSD-3-Clause */
/* options.rows from C: an r2c plan with TORU_FFT_ROWS_PACKED reads n2 reals per row (its in box has
 * row_stride n2) and its forward transform matches serial FFTW's dft_r2c of the whole array on an odd,
 * uneven 5 x 6 x 7 grid (every rank computes the reference); backward with full scaling restores the
 * packed input. A struct whose size stops before `rows` (an older caller) gets padded rows even though
 * its rows field says packed, toru_fft_local_size_3d reports the plan's boxes, and rows = 7 is
 * TORU_ERROR_INVALID_ARGUMENT on every rank. Exit 0 when all holds everywhere. */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <toru/toru.h>

enum { N0 = 5, N1 = 6, N2 = 7, NC = N2 / 2 + 1 };

static double value(long long i, long long j, long long l) { return sin(1.0 + 0.37 * i + 1.3 * j * j + 2.1 * l); }

/* Where global point g lies in a rank's box (memory nests order[0] .. order[2], rows row_stride apart). */
static long long offset(const toru_fft_box* b, const long long g[3]) {
  const int* o = b->order;
  return ((g[o[0]] - b->low[o[0]]) * b->size[o[1]] + (g[o[1]] - b->low[o[1]])) * b->row_stride +
         (g[o[2]] - b->low[o[2]]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);

  double* whole = fftw_malloc(sizeof(double) * N0 * N1 * N2);
  fftw_complex* ref = fftw_malloc(sizeof(fftw_complex) * N0 * N1 * NC);
  fftw_plan serial = fftw_plan_dft_r2c_3d(N0, N1, N2, whole, ref, FFTW_ESTIMATE);
  for (long long i = 0; i < N0; ++i)
    for (long long j = 0; j < N1; ++j)
      for (long long l = 0; l < N2; ++l) whole[(i * N1 + j) * N2 + l] = value(i, j, l);
  fftw_execute(serial);
  fftw_destroy_plan(serial);

  toru_fft_options o = TORU_FFT_OPTIONS_INIT;
  o.rows = TORU_FFT_ROWS_PACKED;
  toru_fft_plan plan;
  if (toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, N0, N1, N2, &o, &plan) != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: create: %s\n", me, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  toru_fft_box in, out;
  long long alloc;
  toru_fft_plan_local_size(plan, &in, &out, &alloc);
  const long long nin = in.size[0] * in.size[1] * in.size[2];
  if (nin > 0 && (in.size[2] != N2 || in.row_stride != N2)) {
    fprintf(stderr, "rank %d: packed in box has row_stride %lld\n", me, in.row_stride);
    ++bad;
  }
  {
    /* The plan-less query reports the boxes the plan uses. */
    toru_fft_box qin, qout;
    long long qalloc;
    if (toru_fft_local_size_3d(MPI_COMM_WORLD, N0, N1, N2, 1, &o, &qin, &qout, &qalloc) != TORU_SUCCESS) ++bad;
    for (int a = 0; a < 3; ++a)
      if (qin.low[a] != in.low[a] || qin.size[a] != in.size[a] || qin.order[a] != in.order[a] ||
          qout.low[a] != out.low[a] || qout.size[a] != out.size[a] || qout.order[a] != out.order[a])
        ++bad;
    if (qin.row_stride != in.row_stride || qout.row_stride != out.row_stride || qalloc < alloc) {
      fprintf(stderr, "rank %d: local_size_3d row_stride %lld, alloc %lld; plan's %lld, %lld\n", me, qin.row_stride,
              qalloc, in.row_stride, alloc);
      ++bad;
    }
  }
  double* x = calloc((size_t)(2 * alloc + 1), sizeof(double));
  double* z = calloc((size_t)(2 * alloc + 1), sizeof(double));
  double complex* y = calloc((size_t)(alloc + 1), sizeof(double complex));
  long long g[3];
  for (g[0] = in.low[0]; g[0] < in.low[0] + in.size[0]; ++g[0])
    for (g[1] = in.low[1]; g[1] < in.low[1] + in.size[1]; ++g[1])
      for (g[2] = in.low[2]; g[2] < in.low[2] + in.size[2]; ++g[2]) x[offset(&in, g)] = value(g[0], g[1], g[2]);
  if (toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y) != TORU_SUCCESS) ++bad;
  for (g[0] = out.low[0]; g[0] < out.low[0] + out.size[0]; ++g[0])
    for (g[1] = out.low[1]; g[1] < out.low[1] + out.size[1]; ++g[1])
      for (g[2] = out.low[2]; g[2] < out.low[2] + out.size[2]; ++g[2]) {
        const fftw_complex* r = &ref[(g[0] * N1 + g[1]) * NC + g[2]];
        if (cabs(y[offset(&out, g)] - *r) > 1e-10) ++bad; /* fftw_complex is double complex after complex.h */
      }
  if (toru_fft_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z) != TORU_SUCCESS) ++bad;
  for (g[0] = in.low[0]; g[0] < in.low[0] + in.size[0]; ++g[0])
    for (g[1] = in.low[1]; g[1] < in.low[1] + in.size[1]; ++g[1])
      for (g[2] = in.low[2]; g[2] < in.low[2] + in.size[2]; ++g[2])
        if (fabs(z[offset(&in, g)] - value(g[0], g[1], g[2])) > 1e-12) ++bad;
  toru_fft_plan_destroy(plan);

  /* An older caller's struct ends before rows: whatever lies there is not read. */
  o.size = offsetof(toru_fft_options, rows);
  if (toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, N0, N1, N2, &o, &plan) != TORU_SUCCESS)
    ++bad;
  else {
    toru_fft_plan_local_size(plan, &in, &out, &alloc);
    if (in.size[0] * in.size[1] * in.size[2] > 0 && in.row_stride != 2 * NC) {
      fprintf(stderr, "rank %d: short struct gave row_stride %lld\n", me, in.row_stride);
      ++bad;
    }
    toru_fft_plan_destroy(plan);
  }

  o.size = sizeof o;
  o.rows = (toru_fft_real_rows)7;
  toru_result rc = toru_fft_plan_create_r2c_3d(MPI_COMM_WORLD, N0, N1, N2, &o, &plan);
  if (rc != TORU_ERROR_INVALID_ARGUMENT || plan != NULL) {
    fprintf(stderr, "rank %d: rows = 7 gave %d\n", me, (int)rc);
    ++bad;
  }

  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("packed rows from C: %s (%d bad)\n", all_bad ? "FAILED" : "ok", all_bad);
  free(x);
  free(y);
  free(z);
  fftw_free(whole);
  fftw_free(ref);
  MPI_Finalize();
  return all_bad != 0;
}
