/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent requests of the C r2r and batched plans (toru_fft_r2r_plan_init,
 * toru_fft_batch_plan_init) on an odd, uneven 7 x 6 x 5 grid. Each plan is bound once (forward, and
 * backward with full scaling) and started for two steps, new input written into the bound buffer
 * before each. Every step is compared with serial FFTW on the whole array, run between start and
 * wait (fftw_plan_r2r_3d for DCT-II x DST-III x DCT-IV; fftw_plan_dft_3d per field for three
 * interleaved c2c fields), and bit for bit with the blocking *_execute of the same input; the bound
 * backward request restores the input. A second start before wait is refused. A NULL buffer on the
 * last rank, a NULL request pointer on rank 0 or (batched) a direction of 0 on the middle rank fails
 * init on every rank with the same code and message and leaves *request as it was. The other plans
 * behind the two calls likewise (without the error cases): a mixed plan, and two real fields of a
 * batched r2c plan. Exit 0 when all holds everywhere. */
#include <complex.h> /* before fftw3.h: fftw_complex is double complex */
#include <fftw3.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <toru/toru.h>

enum { N0 = 7, N1 = 6, N2 = 5, N = N0 * N1 * N2, F = 3, STEPS = 2 };

static int me, nranks, bad;

/* What a failed init must leave in *request: this, not NULL, so that any write shows. */
static char untouched_object;
#define UNTOUCHED ((toru_request)(void*)&untouched_object)

/* Offset of global point g in box b's memory (row_stride 0: packed rows). */
static long long at(const toru_fft_box* b, const long long g[3]) {
  const int* o = b->order;
  const long long stride = b->row_stride ? b->row_stride : b->size[o[2]];
  return ((g[o[0]] - b->low[o[0]]) * b->size[o[1]] + (g[o[1]] - b->low[o[1]])) * stride + (g[o[2]] - b->low[o[2]]);
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

/* Row-major index of g in the whole array. */
static long long flat(const long long g[3]) { return (g[0] * N1 + g[1]) * N2 + g[2]; }

/* Input of step s and series f at global point g, the same on every rank. */
static double value(int s, int f, const long long g[3]) {
  return sin(0.3 + 0.71 * (double)g[0] * (s + 1) + 1.3 * (double)(g[1] * g[1]) - 0.37 * (double)g[2] * (f + 2)) +
         0.1 * f + 0.05 * s;
}

/* rc must be `want` on every rank, with one code and one non-empty message (rank 0's) everywhere. */
static void expect_same_error(toru_result rc, toru_result want, const char* what) {
  int mine = (int)rc, lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  char msg[1024], msg0[1024];
  snprintf(msg, sizeof msg, "%s", rc == TORU_SUCCESS ? "" : toru_last_error());
  memcpy(msg0, msg, sizeof msg);
  MPI_Bcast(msg0, (int)sizeof msg0, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (lo != hi || rc != want || msg[0] == '\0' || strcmp(msg, msg0) != 0) {
    fprintf(stderr, "rank %d: %s: got %d (codes %d..%d over the ranks), message '%s', rank 0's '%s'\n", me, what, mine,
            lo, hi, msg, msg0);
    ++bad;
  }
}

static void require(toru_result rc, const char* what) {
  if (rc != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: %s: %s\n", me, what, toru_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static void check(toru_result rc, const char* what) {
  if (rc != TORU_SUCCESS) {
    fprintf(stderr, "rank %d: %s: %s\n", me, what, toru_last_error());
    ++bad;
  }
}

/* DCT-II x DST-III x DCT-IV (reals). */
static void r2r_case(void) {
  const toru_fft_r2r_kind kinds[3] = {TORU_FFT_DCT2, TORU_FFT_DST3, TORU_FFT_DCT4};
  toru_fft_r2r_plan plan;
  require(toru_fft_r2r_plan_create_3d(MPI_COMM_WORLD, N0, N1, N2, kinds, NULL, &plan), "r2r create");
  toru_fft_box in, out;
  long long alloc;
  require(toru_fft_r2r_plan_local_size(plan, &in, &out, &alloc), "r2r local_size");
  const size_t count = (size_t)(alloc > 0 ? alloc : 1);
  double *x = calloc(count, sizeof *x), *y = calloc(count, sizeof *y), *yb = calloc(count, sizeof *yb),
         *z = calloc(count, sizeof *z);
  double *whole = fftw_alloc_real(N), *ref = fftw_alloc_real(N);
  fftw_plan serial = fftw_plan_r2r_3d(N0, N1, N2, whole, ref, FFTW_REDFT10, FFTW_RODFT01, FFTW_REDFT11, FFTW_ESTIMATE);

  toru_request fwd = UNTOUCHED, bwd = NULL;
  expect_same_error(
      toru_fft_r2r_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, me == nranks - 1 ? NULL : x, y, &fwd),
      TORU_ERROR_INVALID_ARGUMENT, "r2r init, NULL in on the last rank");
  if (fwd != UNTOUCHED) ++bad;
  expect_same_error(toru_fft_r2r_plan_init(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z, me == 0 ? NULL : &fwd),
                    TORU_ERROR_INVALID_ARGUMENT, "r2r init, NULL request on rank 0");
  if (fwd != UNTOUCHED) ++bad;
  require(toru_fft_r2r_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y, &fwd), "r2r init forward");
  require(toru_fft_r2r_plan_init(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z, &bwd), "r2r init backward");

  long long g[3];
  for (int s = 0; s < STEPS; ++s) {
    for (int more = first(&in, g); more; more = next(&in, g)) x[at(&in, g)] = value(s, 0, g);
    for (long long i = 0; i < N; ++i) {
      const long long w[3] = {i / (N1 * N2), (i / N2) % N1, i % N2};
      whole[i] = value(s, 0, w);
    }
    memset(y, 0, count * sizeof *y);
    check(toru_request_start(fwd), "r2r start");
    if (s == 0 && toru_request_start(fwd) != TORU_ERROR_INVALID_ARGUMENT) ++bad; /* in flight */
    fftw_execute(serial);                                                        /* while the transform runs */
    check(toru_request_wait(fwd), "r2r wait");
    check(toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, yb), "r2r execute");
    for (int more = first(&out, g); more; more = next(&out, g)) {
      const long long o = at(&out, g);
      if (fabs(y[o] - ref[flat(g)]) > 1e-9) ++bad;
      if (memcmp(&y[o], &yb[o], sizeof *y) != 0) ++bad;
    }
    memset(z, 0, count * sizeof *z);
    check(toru_request_start(bwd), "r2r backward start");
    check(toru_request_wait(bwd), "r2r backward wait");
    for (int more = first(&in, g); more; more = next(&in, g))
      if (fabs(z[at(&in, g)] - x[at(&in, g)]) > 1e-12) ++bad;
  }
  check(toru_request_free(&fwd), "r2r free");
  check(toru_request_free(&bwd), "r2r free");
  if (fwd != NULL || bwd != NULL) ++bad;
  toru_fft_r2r_plan_destroy(plan);
  fftw_destroy_plan(serial);
  fftw_free(whole);
  fftw_free(ref);
  free(x);
  free(y);
  free(yb);
  free(z);
}

/* F complex fields, interleaved (field f of element m at m * F + f). */
static void batch_case(void) {
  toru_fft_batch_plan plan;
  require(toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, N0, N1, N2, 0, F, TORU_FFT_INTERLEAVED, NULL, &plan),
          "batch create");
  toru_fft_box in, out;
  long long alloc;
  require(toru_fft_batch_plan_local_size(plan, &in, &out, &alloc), "batch local_size");
  const size_t count = (size_t)(alloc > 0 ? alloc : 1);
  double complex *x = calloc(count, sizeof *x), *y = calloc(count, sizeof *y), *yb = calloc(count, sizeof *yb),
                 *z = calloc(count, sizeof *z);
  fftw_complex *whole = fftw_alloc_complex((size_t)F * N), *ref = fftw_alloc_complex((size_t)F * N);
  fftw_plan serial[F];
  for (int f = 0; f < F; ++f)
    serial[f] = fftw_plan_dft_3d(N0, N1, N2, whole + f * N, ref + f * N, FFTW_FORWARD, FFTW_ESTIMATE);

  toru_request fwd = UNTOUCHED, bwd = NULL;
  expect_same_error(
      toru_fft_batch_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, me == nranks - 1 ? NULL : y, &fwd),
      TORU_ERROR_INVALID_ARGUMENT, "batch init, NULL out on the last rank");
  if (fwd != UNTOUCHED) ++bad;
  expect_same_error(toru_fft_batch_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y, me == 0 ? NULL : &fwd),
                    TORU_ERROR_INVALID_ARGUMENT, "batch init, NULL request on rank 0");
  if (fwd != UNTOUCHED) ++bad;
  const toru_fft_direction nonsense = (toru_fft_direction)0;
  expect_same_error(
      toru_fft_batch_plan_init(plan, me == nranks / 2 ? nonsense : TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y, &fwd),
      TORU_ERROR_INVALID_ARGUMENT, "batch init, direction 0 on the middle rank");
  if (fwd != UNTOUCHED) ++bad;
  require(toru_fft_batch_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y, &fwd), "batch init forward");
  require(toru_fft_batch_plan_init(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z, &bwd), "batch init backward");

  long long g[3];
  for (int s = 0; s < STEPS; ++s) {
    for (int more = first(&in, g); more; more = next(&in, g))
      for (int f = 0; f < F; ++f) x[at(&in, g) * F + f] = value(s, f, g) + I * value(s, f + F, g);
    for (int f = 0; f < F; ++f)
      for (long long i = 0; i < N; ++i) {
        const long long w[3] = {i / (N1 * N2), (i / N2) % N1, i % N2};
        whole[f * N + i] = value(s, f, w) + I * value(s, f + F, w);
      }
    memset(y, 0, count * sizeof *y);
    check(toru_request_start(fwd), "batch start");
    if (s == 0 && toru_request_start(fwd) != TORU_ERROR_INVALID_ARGUMENT) ++bad; /* in flight */
    for (int f = 0; f < F; ++f) fftw_execute(serial[f]);                         /* while the transform runs */
    check(toru_request_wait(fwd), "batch wait");
    check(toru_fft_batch_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, yb), "batch execute");
    for (int more = first(&out, g); more; more = next(&out, g))
      for (int f = 0; f < F; ++f) {
        const long long o = at(&out, g) * F + f;
        if (cabs(y[o] - ref[f * N + flat(g)]) > 1e-9) ++bad;
        if (memcmp(&y[o], &yb[o], sizeof *y) != 0) ++bad;
      }
    memset(z, 0, count * sizeof *z);
    check(toru_request_start(bwd), "batch backward start");
    check(toru_request_wait(bwd), "batch backward wait");
    for (int more = first(&in, g); more; more = next(&in, g))
      for (int f = 0; f < F; ++f)
        if (cabs(z[at(&in, g) * F + f] - x[at(&in, g) * F + f]) > 1e-12) ++bad;
  }
  check(toru_request_free(&fwd), "batch free");
  check(toru_request_free(&bwd), "batch free");
  if (fwd != NULL || bwd != NULL) ++bad;
  toru_fft_batch_plan_destroy(plan);
  for (int f = 0; f < F; ++f) fftw_destroy_plan(serial[f]);
  fftw_free(whole);
  fftw_free(ref);
  free(x);
  free(y);
  free(yb);
  free(z);
}

/* The other plans behind the two calls, bound and started for two steps: a mixed plan (periodic x
 * DST-II x periodic, complex data through toru_fft_r2r_plan_init) bit for bit against execute, with
 * its round trip; two real fields through an r2c batched plan (interleaved, padded rows) against
 * serial FFTW's dft_r2c_3d per field and bit for bit against execute, with the c2r round trip. */
static void mixed_case(void) {
  const toru_fft_r2r_kind kinds[3] = {TORU_FFT_PERIODIC, TORU_FFT_DST2, TORU_FFT_PERIODIC};
  toru_fft_r2r_plan plan;
  require(toru_fft_r2r_plan_create_mixed_3d(MPI_COMM_WORLD, N0, N1, N2, kinds, NULL, &plan), "mixed create");
  toru_fft_box in, out;
  long long alloc;
  require(toru_fft_r2r_plan_local_size(plan, &in, &out, &alloc), "mixed local_size");
  const size_t count = (size_t)(alloc > 0 ? alloc : 1);
  double complex *x = calloc(count, sizeof *x), *y = calloc(count, sizeof *y), *yb = calloc(count, sizeof *yb),
                 *z = calloc(count, sizeof *z);
  toru_request fwd = NULL, bwd = NULL;
  require(toru_fft_r2r_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y, &fwd), "mixed init forward");
  require(toru_fft_r2r_plan_init(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z, &bwd), "mixed init backward");
  long long g[3];
  for (int s = 0; s < STEPS; ++s) {
    for (int more = first(&in, g); more; more = next(&in, g)) x[at(&in, g)] = value(s, 0, g) + I * value(s, 1, g);
    check(toru_request_start(fwd), "mixed start");
    check(toru_request_wait(fwd), "mixed wait");
    check(toru_fft_r2r_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, yb), "mixed execute");
    for (int more = first(&out, g); more; more = next(&out, g))
      if (memcmp(&y[at(&out, g)], &yb[at(&out, g)], sizeof *y) != 0) ++bad;
    check(toru_request_start(bwd), "mixed backward start");
    check(toru_request_wait(bwd), "mixed backward wait");
    for (int more = first(&in, g); more; more = next(&in, g))
      if (cabs(z[at(&in, g)] - x[at(&in, g)]) > 1e-12) ++bad;
  }
  toru_request_free(&fwd);
  toru_request_free(&bwd);
  toru_fft_r2r_plan_destroy(plan);
  free(x);
  free(y);
  free(yb);
  free(z);
}

enum { FR = 2, NC = N2 / 2 + 1 };

static void batch_r2c_case(void) {
  toru_fft_batch_plan plan;
  require(toru_fft_batch_plan_create_3d(MPI_COMM_WORLD, N0, N1, N2, 1, FR, TORU_FFT_INTERLEAVED, NULL, &plan),
          "r2c batch create");
  toru_fft_box in, out;
  long long alloc;
  require(toru_fft_batch_plan_local_size(plan, &in, &out, &alloc), "r2c batch local_size");
  const size_t count = (size_t)(alloc > 0 ? alloc : 1);
  double *x = calloc(2 * count, sizeof *x), *z = calloc(2 * count, sizeof *z);
  double complex *y = calloc(count, sizeof *y), *yb = calloc(count, sizeof *yb);
  double* whole = fftw_alloc_real(N);
  fftw_complex* ref = fftw_alloc_complex((size_t)FR * N0 * N1 * NC);
  fftw_plan serial = fftw_plan_dft_r2c_3d(N0, N1, N2, whole, ref, FFTW_ESTIMATE);
  toru_request fwd = NULL, bwd = NULL;
  require(toru_fft_batch_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, y, &fwd), "r2c batch init forward");
  require(toru_fft_batch_plan_init(plan, TORU_FFT_BACKWARD, TORU_FFT_SCALE_FULL, y, z, &bwd),
          "r2c batch init backward");
  long long g[3];
  for (int s = 0; s < STEPS; ++s) {
    for (int more = first(&in, g); more; more = next(&in, g))
      for (int f = 0; f < FR; ++f) x[at(&in, g) * FR + f] = value(s, f, g);
    check(toru_request_start(fwd), "r2c batch start");
    for (int f = 0; f < FR; ++f) { /* while the transform runs */
      for (long long i = 0; i < N; ++i) {
        const long long w[3] = {i / (N1 * N2), (i / N2) % N1, i % N2};
        whole[i] = value(s, f, w);
      }
      fftw_execute_dft_r2c(serial, whole, ref + f * N0 * N1 * NC);
    }
    check(toru_request_wait(fwd), "r2c batch wait");
    check(toru_fft_batch_plan_execute(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, x, yb), "r2c batch execute");
    for (int more = first(&out, g); more; more = next(&out, g))
      for (int f = 0; f < FR; ++f) {
        const long long o = at(&out, g) * FR + f;
        if (cabs(y[o] - ref[f * N0 * N1 * NC + (g[0] * N1 + g[1]) * NC + g[2]]) > 1e-9) ++bad;
        if (memcmp(&y[o], &yb[o], sizeof *y) != 0) ++bad;
      }
    check(toru_request_start(bwd), "r2c batch backward start");
    check(toru_request_wait(bwd), "r2c batch backward wait");
    for (int more = first(&in, g); more; more = next(&in, g))
      for (int f = 0; f < FR; ++f)
        if (fabs(z[at(&in, g) * FR + f] - x[at(&in, g) * FR + f]) > 1e-12) ++bad;
  }
  toru_request_free(&fwd);
  toru_request_free(&bwd);
  toru_fft_batch_plan_destroy(plan);
  fftw_destroy_plan(serial);
  fftw_free(whole);
  fftw_free(ref);
  free(x);
  free(y);
  free(yb);
  free(z);
}

int main(int argc, char** argv) {
  /* The thread level under which a started request runs on its own thread (overlapping the
   * reference computed between start and wait). */
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  r2r_case();
  int r2r_bad = 0;
  MPI_Allreduce(&bad, &r2r_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  batch_case();
  int batch_bad = 0;
  MPI_Allreduce(&bad, &batch_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  mixed_case();
  batch_r2c_case();
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0)
    printf(
        "persistent r2r and batched plans from C (thread level %d): r2r %d bad, batched c2c %d bad, "
        "mixed and batched r2c %d bad\n",
        provided, r2r_bad, batch_bad - r2r_bad, all_bad - batch_bad);
  MPI_Finalize();
  return all_bad != 0;
}
