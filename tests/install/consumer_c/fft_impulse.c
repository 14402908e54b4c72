// SPDX-License-Identifier: BSD-3-Clause
/* A C code linking the installed toru, through CMake or through pkg-config alone: checks the
 * version and that the 3D FFT of a unit impulse at the origin is 1 everywhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <toru/toru.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int major = -1, minor = -1, patch = -1, bad = 0;
  toru_get_version(&major, &minor, &patch);
  if (major != TORU_VERSION_MAJOR || minor != TORU_VERSION_MINOR || patch != TORU_VERSION_PATCH) bad = 1;

  toru_fft_plan plan = NULL;
  toru_fft_box in, out;
  long long alloc = 0;
  if (toru_fft_plan_create_3d(MPI_COMM_WORLD, 4, 3, 5, NULL, &plan) != TORU_SUCCESS ||
      toru_fft_plan_local_size(plan, &in, &out, &alloc) != TORU_SUCCESS) {
    fprintf(stderr, "toru: %s\n", toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double* a = calloc((size_t)(2 * alloc + 2), sizeof(double));
  double* b = calloc((size_t)(2 * alloc + 2), sizeof(double));
  if (in.low[0] == 0 && in.low[1] == 0 && in.low[2] == 0 && in.size[0] * in.size[1] * in.size[2] > 0) a[0] = 1.0;
  if (toru_fft_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b) != TORU_SUCCESS) bad = 2;
  const long long s0 = out.size[out.order[0]], s1 = out.size[out.order[1]], s2 = out.size[out.order[2]];
  for (long long i = 0; i < s0; ++i)
    for (long long j = 0; j < s1; ++j)
      for (long long k = 0; k < s2; ++k) {
        const long long at = (i * s1 + j) * out.row_stride + k;
        if (fabs(b[2 * at] - 1.0) > 1e-12 || fabs(b[2 * at + 1]) > 1e-12) bad = 3;
      }
  toru_fft_plan_destroy(plan);
  free(a);
  free(b);
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("toru %s from C: impulse FFT %s\n", toru_version_string(), any ? "WRONG" : "ok");
  MPI_Finalize();
  return any ? 1 : 0;
}
