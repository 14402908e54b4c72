// SPDX-License-Identifier: BSD-3-Clause
/* Spectral Poisson solver on the periodic box [0, 2 pi)^3 through toru's C API: solves
 *
 *   laplacian(u) = f,   f = -14 sin(x) cos(2y) sin(3z) - 10.5 cos(2x - y + 4z)
 *
 * whose zero-mean solution is u = sin(x) cos(2y) sin(3z) + 0.5 cos(2x - y + 4z): a real-to-complex
 * forward FFT of f, a division by -|k|^2 in wavenumber space (the zero mode, the mean, set to 0), a
 * complex-to-real backward FFT scaled by 1/N. The modes are resolved on every grid used, so the
 * answer is exact up to round-off: the program fails unless max |u - u_exact| < 1e-10.
 *
 * Usage: mpiexec -n P poisson_c [n0 n1 n2]   (default: 24 18 30, then 10 14 15, odd last axis)
 * Exit status 0 = every grid solved to round-off on every rank. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "toru/toru.h"

#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    toru_result r_ = (call);                                                                            \
    if (r_ != TORU_SUCCESS) {                                                                           \
      fprintf(stderr, "poisson: %s failed: %s: %s\n", #call, toru_error_string(r_), toru_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                     \
    }                                                                                                   \
  } while (0)

static const double two_pi = 6.283185307179586476925286766559;

static double exact_u(double x, double y, double z) {
  return sin(x) * cos(2 * y) * sin(3 * z) + 0.5 * cos(2 * x - y + 4 * z);
}
static double rhs_f(double x, double y, double z) {
  return -14.0 * sin(x) * cos(2 * y) * sin(3 * z) - 0.5 * 21.0 * cos(2 * x - y + 4 * z);
}

/* Offset of local coordinates l (per global axis) in a box's memory: axes nest order[0] (slowest)
 * to order[2] (fastest), rows of the fastest axis row_stride elements apart. */
static long long offset(const toru_fft_box* b, const long long l[3]) {
  const int* o = b->order;
  return (l[o[0]] * b->size[o[1]] + l[o[1]]) * b->row_stride + l[o[2]];
}

/* The signed wavenumber of global index i on an axis of n points. */
static double wavenumber(long long i, long long n) { return (double)(2 * i <= n ? i : i - n); }

/* Solves on an n0 x n1 x n2 grid; returns the largest error over all ranks. */
static double solve(MPI_Comm comm, const long long n[3]) {
  toru_fft_options opts = toru_fft_options_default();
  /* Leave the spectrum in the plan's transposed order: the solver only scales it pointwise, and the
   * backward transform takes that order, which saves the final transposes of both directions. */
  opts.transposed_out = 1;
  toru_fft_plan plan = NULL;
  CHECK(toru_fft_plan_create_r2c_3d(comm, n[0], n[1], n[2], &opts, &plan));
  toru_fft_box in, out;
  long long alloc = 0;
  CHECK(toru_fft_plan_local_size(plan, &in, &out, &alloc));

  /* Real arrays hold 2 * alloc doubles (rows padded to 2 (n2/2 + 1)); the spectrum alloc complex. */
  double* f = calloc((size_t)(2 * alloc), sizeof(double));
  double* u = calloc((size_t)(2 * alloc), sizeof(double));
  double complex* spec = calloc((size_t)alloc, sizeof(double complex));
  if (!f || !u || !spec) {
    fprintf(stderr, "poisson: out of memory (%lld complex elements)\n", alloc);
    MPI_Abort(comm, 1);
  }
  long long l[3];
  for (l[0] = 0; l[0] < in.size[0]; ++l[0])
    for (l[1] = 0; l[1] < in.size[1]; ++l[1])
      for (l[2] = 0; l[2] < in.size[2]; ++l[2])
        f[offset(&in, l)] = rhs_f(two_pi * (double)(in.low[0] + l[0]) / (double)n[0],
                                  two_pi * (double)(in.low[1] + l[1]) / (double)n[1],
                                  two_pi * (double)(in.low[2] + l[2]) / (double)n[2]);

  CHECK(toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, f, spec));
  for (l[0] = 0; l[0] < out.size[0]; ++l[0])
    for (l[1] = 0; l[1] < out.size[1]; ++l[1])
      for (l[2] = 0; l[2] < out.size[2]; ++l[2]) {
        /* The r2c side keeps wavenumbers 0..n2/2 of the last axis, all signed ones of the others. */
        const double kx = wavenumber(out.low[0] + l[0], n[0]);
        const double ky = wavenumber(out.low[1] + l[1], n[1]);
        const double kz = (double)(out.low[2] + l[2]);
        const double k2 = kx * kx + ky * ky + kz * kz;
        double complex* c = &spec[offset(&out, l)];
        *c = k2 == 0.0 ? 0.0 : -*c / k2;
      }
  CHECK(toru_fft_plan_execute(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, spec, u));

  double err = 0;
  for (l[0] = 0; l[0] < in.size[0]; ++l[0])
    for (l[1] = 0; l[1] < in.size[1]; ++l[1])
      for (l[2] = 0; l[2] < in.size[2]; ++l[2]) {
        const double want = exact_u(two_pi * (double)(in.low[0] + l[0]) / (double)n[0],
                                    two_pi * (double)(in.low[1] + l[1]) / (double)n[1],
                                    two_pi * (double)(in.low[2] + l[2]) / (double)n[2]);
        err = fmax(err, fabs(u[offset(&in, l)] - want));
      }
  double max_err = 0;
  MPI_Allreduce(&err, &max_err, 1, MPI_DOUBLE, MPI_MAX, comm);
  CHECK(toru_fft_plan_destroy(plan));
  free(f);
  free(u);
  free(spec);
  return max_err;
}

int main(int argc, char** argv) {
  /* toru's pipelined all-to-all drives its two phases from two threads when MPI allows it. */
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  long long grids[2][3] = {{24, 18, 30}, {10, 14, 15}};
  int ngrids = 2;
  if (argc == 4) {
    for (int a = 0; a < 3; ++a) grids[0][a] = atoll(argv[a + 1]);
    ngrids = 1;
  } else if (argc != 1) {
    if (rank == 0) fprintf(stderr, "poisson: usage: poisson_c [n0 n1 n2]\n");
    MPI_Finalize();
    return 2;
  }
  int failed = 0;
  for (int g = 0; g < ngrids; ++g) {
    /* Each mode of u must be resolved: |k| < n/2 on every axis (the largest are 2, 2 and 4). */
    if (grids[g][0] <= 4 || grids[g][1] <= 4 || grids[g][2] <= 8) {
      if (rank == 0) fprintf(stderr, "poisson: n0, n1 > 4 and n2 > 8 needed to resolve u\n");
      MPI_Finalize();
      return 2;
    }
    const double err = solve(MPI_COMM_WORLD, grids[g]);
    const int ok = err < 1e-10;
    failed |= !ok;
    if (rank == 0)
      printf("poisson (C): %lldx%lldx%lld on %d rank(s): max error %.3e %s\n", grids[g][0], grids[g][1], grids[g][2],
             nranks, err, ok ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
