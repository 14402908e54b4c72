/* SPDX-License-Identifier: BSD-3-Clause */
/* toru/fft.h — the C interface of fft/. Conventions and result codes: toru/core.h. */
#ifndef TORU_FFT_H
#define TORU_FFT_H

#include <mpi.h>
#include <stddef.h>

#include "toru/core.h"
#include "toru/request.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parallel 3D FFTs (c2c, r2c/c2r; slab or pencil) and the distributed 1D FFT of toru::fft.
 * Arrays are row-major (C order: n2 fastest); the conventions are FFTW-MPI's: forward is
 * exp(-2 pi i jk/n), nothing is normalized unless asked, real arrays of r2c plans are padded to
 * 2*(n2/2+1) reals per row, and every buffer passed as `out` (and `in` when in place) holds the
 * `alloc` complex elements toru_fft_plan_local_size reports. Example (error checks omitted):
 *
 *   toru_fft_plan p;
 *   toru_fft_options o = TORU_FFT_OPTIONS_INIT;                              (or NULL below)
 *   toru_fft_plan_create_3d(MPI_COMM_WORLD, 64, 64, 64, &o, &p);             (collective)
 *   toru_fft_box in, out; long long alloc;
 *   toru_fft_plan_local_size(p, &in, &out, &alloc);
 *   double complex *a = malloc(alloc * sizeof *a), *b = malloc(alloc * sizeof *b);
 *   ... fill a over box `in` ...
 *   toru_fft_plan_execute(p, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b);  (collective)
 *   toru_fft_plan_destroy(p);
 *
 * Names follow toru_<module>_<noun>_<verb> (toru_fft_plan_create_3d, toru_fft_plan_execute, ...).
 * The names of toru 0.1 (toru_fft_plan_3d, toru_fft_execute, toru_fft_destroy, ...) remain as
 * deprecated aliases at the end of this header. */

typedef struct toru_fft_plan_s* toru_fft_plan;

typedef enum toru_fft_precision { TORU_FFT_DOUBLE = 0, TORU_FFT_FLOAT = 1 } toru_fft_precision;
typedef enum toru_fft_direction { TORU_FFT_FORWARD = -1, TORU_FFT_BACKWARD = 1 } toru_fft_direction;
typedef enum toru_fft_scale {
  TORU_FFT_SCALE_NONE = 0,     /* unnormalized */
  TORU_FFT_SCALE_FULL = 1,     /* times 1/N */
  TORU_FFT_SCALE_SYMMETRIC = 2 /* times 1/sqrt(N) */
} toru_fft_scale;
typedef enum toru_fft_decomposition {
  TORU_FFT_DECOMPOSITION_AUTO = 0,
  TORU_FFT_DECOMPOSITION_SLAB = 1,  /* axis 0 split over all ranks */
  TORU_FFT_DECOMPOSITION_PENCIL = 2 /* axes 0 and 1 split over a p0 x p1 grid */
} toru_fft_decomposition;
/* r2c plans: how the real side's rows along axis 2 are stored (toru::fft::real_rows). */
typedef enum toru_fft_real_rows {
  TORU_FFT_ROWS_PADDED = 0, /* 2 * (n2/2 + 1) reals per row, as FFTW-MPI (in-place capable) */
  TORU_FFT_ROWS_PACKED = 1  /* n2 reals per row, as a serial code's or NumPy's arrays */
} toru_fft_real_rows;

/* Plan options. Start from TORU_FFT_OPTIONS_INIT, toru_fft_options_init(&o) or
 * toru_fft_options_default(): each sets `size` to this header's sizeof(toru_fft_options), so that a
 * later library, whose struct has grown at its end, reads only the fields the caller knows (the rest
 * keep their defaults). A size of 0 (an options struct never initialised) or one larger than the
 * library knows is refused with TORU_ERROR_INVALID_ARGUMENT. */
typedef struct toru_fft_options {
  size_t size;                          /* sizeof(toru_fft_options) where the caller was compiled */
  toru_fft_precision precision;         /* TORU_FFT_DOUBLE */
  toru_fft_decomposition decomposition; /* TORU_FFT_DECOMPOSITION_AUTO (3D only) */
  int grid[2];                          /* pencil grid p0 x p1; {0, 0} = chosen (3D only) */
  int transposed_out;                   /* non-zero: skip the final transposes, like FFTW_MPI_TRANSPOSED_OUT
                                           (3D) or FFTW_MPI_SCRAMBLED_OUT (1D); backward then takes that order */
  int measure;                          /* non-zero: FFTW_MEASURE for the local FFTs (else FFTW_ESTIMATE) */
  int overlap;                          /* non-zero (default): local FFTs overlap the all-to-all */
  int chunks;                           /* chunks per all-to-all when overlapping; 0 = chosen */
  long long n1;                         /* 1D only: first factor of n = n1 * n2; 0 = chosen */
  const char* torus;                    /* torus of comm such as "2x2x4" (its size must be comm's), or NULL:
                                           the sub-torus comm's ranks occupy on TORU_TORUS (which describes
                                           MPI_COMM_WORLD), else derived; as toru_alltoall_options.torus */
  const char* order;                    /* rank order for the torus mapping, e.g. "ZXY", or NULL */
  toru_fft_real_rows rows;              /* TORU_FFT_ROWS_PADDED; toru_fft_plan_create_r2c_3d only (its
                                           toru_fft_plan_local_size in box then has row_stride 1 and n2 reals
                                           per row, as toru_fft_local_size_3d's with r2c then reports);
                                           other plans ignore a valid value. A caller whose size stops
                                           before it gets padded rows */
} toru_fft_options;

/* The defaults, as a C initialiser: toru_fft_options o = TORU_FFT_OPTIONS_INIT; */
#define TORU_FFT_OPTIONS_INIT                                                                                  \
  {                                                                                                            \
    sizeof(toru_fft_options), TORU_FFT_DOUBLE, TORU_FFT_DECOMPOSITION_AUTO, {0, 0}, 0, 0, 1, 0, 0, NULL, NULL, \
        TORU_FFT_ROWS_PADDED                                                                                   \
  }

/* Sets *options to the defaults (size included). Not collective; TORU_ERROR_INVALID_ARGUMENT for NULL. */
toru_result toru_fft_options_init(toru_fft_options* options);
/* The defaults by value (size included); for Fortran and callers that prefer it. */
toru_fft_options toru_fft_options_default(void);

/* A rank's part of the array: along axis a, global indices [low[a], low[a] + size[a]); memory nests
 * axes order[0] (slowest) .. order[2] (fastest), rows along the fastest axis row_stride elements apart.
 * For 1D plans: low[0] is the first global index, size[0] the count, size[1] = size[2] = 1, order
 * {0, 1, 2} and row_stride 1 (contiguous). Scrambled 1D output (transposed_out) holds, at local
 * index i, the coefficient X[k1 + n1 * k2] with k1 = (low[0] + i) / n2 and k2 = (low[0] + i) % n2,
 * n1 and n2 from toru_fft_plan_factors_1d. */
typedef struct toru_fft_box {
  long long low[3];
  long long size[3];
  int order[3];
  long long row_stride;
} toru_fft_box;

/* Create plans. Collective over comm; arguments must agree on all ranks (else TORU_ERROR_MISMATCH on
 * every rank). options may be NULL (defaults). On failure *plan = NULL. Every argument is agreed on
 * before any rank returns, so a bad one on any rank (plan == NULL included) is the same code and
 * message on every rank. The exception is comm itself: MPI_COMM_NULL or an intercommunicator is
 * refused with TORU_ERROR_INVALID_ARGUMENT on the ranks that pass it, which cannot tell the others. */
toru_result toru_fft_plan_create_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                    const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_create_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                        const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_create_1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan);

/* Not collective. in: where the forward input (backward output) lies; out: the forward output
 * (backward input); alloc: complex elements every buffer must hold. Any pointer may be NULL. */
toru_result toru_fft_plan_local_size(toru_fft_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc);
/* Not collective, no plan needed (like fftw_mpi_local_size_3d): the boxes and alloc a 3D plan with these
 * arguments would have on this rank of comm. r2c non-zero: for toru_fft_plan_create_r2c_3d (real, padded
 * input). */
toru_result toru_fft_local_size_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c,
                                   const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                   long long* alloc);
/* Not collective: the six-step factors n = n1 * n2 of a 1D plan (any pointer may be NULL);
 * TORU_ERROR_INVALID_ARGUMENT for a 3D plan. */
toru_result toru_fft_plan_factors_1d(toru_fft_plan plan, long long* n1, long long* n2);
/* Bytes of caller workspace toru_fft_plan_execute_ws needs. */
toru_result toru_fft_plan_workspace_size(toru_fft_plan plan, size_t* bytes);
/* Collective on the first call (later calls return the same pointer): *buffer = this rank's buffer
 * of alloc complex elements in node memory, owned by the 3D plan (freed with it), for its complex
 * side. Passed as forward's out (backward's in) on every rank, it lets the plan on one node write
 * (read) every rank's part directly: two passes over the array instead of three in natural order
 * (docs/fft.md, "Shared output"). Pass it on every rank or on none (TORU_ERROR_MISMATCH otherwise).
 * TORU_ERROR_INVALID_ARGUMENT for a 1D plan. */
toru_result toru_fft_plan_shared_out(toru_fft_plan plan, void** buffer);

/* Collective. in == out is in place; out-of-place leaves in unchanged. r2c plans: forward takes reals,
 * backward returns reals (the real output buffer holds 2*alloc reals). direction, scale and the
 * buffers are agreed on in one small allreduce per call, so a bad or differing one on any rank is
 * the same error on every rank. plan == NULL cannot be agreed on (it has no communicator): that rank
 * alone returns TORU_ERROR_INVALID_ARGUMENT while the others wait in the call, so treat it as fatal. */
toru_result toru_fft_plan_execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                  const void* in, void* out);
toru_result toru_fft_plan_execute_ws(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                     const void* in, void* out, void* ws);

/* Frees the plan (not collective, but before MPI_Finalize; NULL is allowed). */
/* Split phase (MPI-4 persistent-collective semantics): start begins toru_fft_plan_execute's
 * transform and returns; wait returns when it is done, with its result. In between the caller
 * computes, touches neither buffer and runs nothing else on the plan; it calls MPI itself only
 * under MPI_THREAD_MULTIPLE. A second start before wait, or a wait without start, is
 * TORU_ERROR_INVALID_ARGUMENT. Below MPI_THREAD_SERIALIZED start runs the whole transform. */
toru_result toru_fft_plan_start(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                                void* out);
toru_result toru_fft_plan_wait(toru_fft_plan plan);
/* Persistent form (MPI-4's MPI_Alltoall_init; toru/request.h): collective. Checks direction, scale
 * and the buffers as toru_fft_plan_execute does (the same errors, on every rank; request NULL is one)
 * and binds them to a new *request; each toru_request_start then runs that transform with no
 * argument checks. Free it with toru_request_free before the plan. */
toru_result toru_fft_plan_init(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                               void* out, toru_request* request);
toru_result toru_fft_plan_destroy(toru_fft_plan plan);

/* A 3D plan (r2c != 0: r2c/c2r) between the caller's own boxes: in is this rank's part of the
 * input (for r2c a box of the n0 x n1 x n2 real grid), out its part of the output (a box of the
 * n0 x n1 x n2 complex grid, or of n0 x n1 x (n2/2+1) for r2c), any memory order, row_stride 0 for
 * packed rows; the boxes of all ranks must tile their grid (see the reshape below). The plan runs
 * in its own layout with one reshape each way; toru_fft_plan_local_size reports these boxes.
 * Host (FFTW) plans only. Collective, with the same agreement rules as the other create calls. */
toru_result toru_fft_plan_create_boxes_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c,
                                          const toru_fft_box* in, const toru_fft_box* out,
                                          const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_create_boxes_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                            const toru_fft_box* in, const toru_fft_box* out,
                                            const toru_fft_options* options, toru_fft_plan* plan);

/* Real-to-real plans: a DCT or DST per axis (C++: toru::fft::fft3d_r2r; docs/fft.md, "Real to
 * real"). kinds[a] is FFTW's kind along axis a; options->precision picks double or float, and
 * options->transposed_out the x-pencil output; the other options keep their meaning where they
 * have one. TORU_FFT_BACKWARD applies the inverse kinds; TORU_FFT_SCALE_FULL divides by the
 * product of the logical sizes. Collective, with the agreement rules of the other plans. */
typedef struct toru_fft_r2r_plan_s* toru_fft_r2r_plan;
typedef enum toru_fft_r2r_kind {
  TORU_FFT_DCT1 = 0,     /* FFTW_REDFT00 */
  TORU_FFT_DCT2 = 1,     /* FFTW_REDFT10 */
  TORU_FFT_DCT3 = 2,     /* FFTW_REDFT01 */
  TORU_FFT_DCT4 = 3,     /* FFTW_REDFT11 */
  TORU_FFT_DST1 = 4,     /* FFTW_RODFT00 */
  TORU_FFT_DST2 = 5,     /* FFTW_RODFT10 */
  TORU_FFT_DST3 = 6,     /* FFTW_RODFT01 */
  TORU_FFT_DST4 = 7,     /* FFTW_RODFT11 */
  TORU_FFT_PERIODIC = -1 /* the DFT: mixed plans only */
} toru_fft_r2r_kind;
toru_result toru_fft_r2r_plan_create_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                        const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                        toru_fft_r2r_plan* plan);
toru_result toru_fft_r2r_plan_create_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                          const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                          toru_fft_r2r_plan* plan);
/* Mixed plans (C++: toru::fft::fft3d_mixed): complex data, each axis TORU_FFT_PERIODIC (the DFT,
 * sign -1 forward) or an r2r kind applied to the real and imaginary parts alike (a channel:
 * {TORU_FFT_PERIODIC, TORU_FFT_PERIODIC, TORU_FFT_DCT2}). The other r2r calls apply; buffers hold
 * complex values (double or float pairs) and local_size counts complex elements. */
toru_result toru_fft_r2r_plan_create_mixed_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                              const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                              toru_fft_r2r_plan* plan);
toru_result toru_fft_r2r_plan_create_mixed_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                                const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                                toru_fft_r2r_plan* plan);
/* Mixed plans on real data (C++: toru::fft::fft3d_mixed_r2c): forward is the r2c DFT along axis 2,
 * which must be TORU_FFT_PERIODIC, then kinds[1] and kinds[0] on the complex result; backward the
 * inverse kinds, then c2r. The complex side has n0 x n1 x (n2/2+1) points, real rows are padded
 * to 2*(n2/2+1) reals (the in box's row_stride), as the r2c plans. local_size counts complex
 * elements; a real buffer holds twice as many reals. */
toru_result toru_fft_r2r_plan_create_mixed_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                                  const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                                  toru_fft_r2r_plan* plan);
toru_result toru_fft_r2r_plan_create_mixed_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                                    const toru_fft_r2r_kind kinds[3], const toru_fft_options* options,
                                                    toru_fft_r2r_plan* plan);
/* Not collective: this rank's boxes and the elements (reals; complex for mixed plans) each buffer
 * must hold. Any pointer may be NULL. */
toru_result toru_fft_r2r_plan_local_size(toru_fft_r2r_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc);
/* Collective. in == out is in place; otherwise in is preserved. */
toru_result toru_fft_r2r_plan_execute(toru_fft_r2r_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                      const void* in, void* out);
/* Persistent form, as toru_fft_plan_init (toru/request.h): collective. Checks direction, scale and the
 * buffers as toru_fft_r2r_plan_execute does (the same errors, on every rank; request NULL is one; on
 * failure *request is left as it was) and binds them to a new *request; each toru_request_start then
 * runs that transform with no argument checks, with the same result bits as execute. Free it with
 * toru_request_free before the plan. Mixed plans too (their buffers hold complex values).
 *
 *   toru_request fwd;
 *   toru_fft_r2r_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b, &fwd);   collective
 *   each step: fill a; toru_request_start(fwd); ... compute ...; toru_request_wait(fwd); use b
 *   toru_request_free(&fwd); */
toru_result toru_fft_r2r_plan_init(toru_fft_r2r_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                   const void* in, void* out, toru_request* request);
toru_result toru_fft_r2r_plan_destroy(toru_fft_r2r_plan plan);

/* Batched plans: `howmany` fields of an n0 x n1 x n2 grid in one plan and one call, the single
 * plan's transform run field by field on its boxes (C++: toru::fft::fft3d_batch and
 * fft3d_batch_r2c; docs/fft.md, "Batched fields"). r2c = 0: complex fields (c2c); r2c != 0: real fields, forward r2c
 * and backward c2r, the complex side n0 x n1 x (n2/2+1) and the real rows padded to 2*(n2/2+1) as the r2c plans.
 * layout: TORU_FFT_INTERLEAVED (field f of the element at offset m of a box at m*howmany + f) or
 * TORU_FFT_PLANAR (field f's box at f * box extent). options->precision and ->transposed_out
 * apply, and ->grid fixes the pencil grid. Collective, with the agreement rules of the other
 * plans (n, r2c, howmany, layout and options equal on every rank). */
typedef struct toru_fft_batch_plan_s* toru_fft_batch_plan;
typedef enum toru_fft_fields { TORU_FFT_INTERLEAVED = 0, TORU_FFT_PLANAR = 1 } toru_fft_fields;
toru_result toru_fft_batch_plan_create_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c, int howmany,
                                          toru_fft_fields layout, const toru_fft_options* options,
                                          toru_fft_batch_plan* plan);
toru_result toru_fft_batch_plan_create_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                            int howmany, toru_fft_fields layout, const toru_fft_options* options,
                                            toru_fft_batch_plan* plan);
/* Not collective: one field's input and output boxes (r2c: the padded real box and the complex
 * one) and the complex elements each buffer holds for all fields (a real buffer holds twice as
 * many reals). Any pointer may be NULL. */
toru_result toru_fft_batch_plan_local_size(toru_fft_batch_plan plan, toru_fft_box* in, toru_fft_box* out,
                                           long long* alloc);
/* Collective. Forward: in (complex, or reals for r2c) to out (complex); backward the reverse.
 * in == out is in place; otherwise in is preserved. */
toru_result toru_fft_batch_plan_execute(toru_fft_batch_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                        const void* in, void* out);
/* Persistent form, as toru_fft_r2r_plan_init: collective; checks the arguments as
 * toru_fft_batch_plan_execute does (the same errors, on every rank; *request untouched on failure),
 * binds them to a new *request that toru_request_start / _wait run for all fields. Free it with
 * toru_request_free before the plan. */
toru_result toru_fft_batch_plan_init(toru_fft_batch_plan plan, toru_fft_direction direction, toru_fft_scale scale,
                                     const void* in, void* out, toru_request* request);
toru_result toru_fft_batch_plan_destroy(toru_fft_batch_plan plan);

/* A reshape moves an n0 x n1 x n2 array from one distribution, a box per rank (in), to another
 * (out), in one exchange: pencil transposes, slab <-> pencil, a solver's own bricks (C++:
 * toru::fft::reshape3d; docs/fft.md, "Reshape"). A row_stride of 0 means packed rows. Collective;
 * every rank checks every rank's boxes, so a box outside the grid, overlapping boxes or boxes that
 * leave a gap give the same TORU_ERROR_INVALID_ARGUMENT on every rank. */
typedef struct toru_fft_reshape_s* toru_fft_reshape;
typedef enum toru_fft_element {
  TORU_FFT_ELEMENT_DOUBLE = 0,
  TORU_FFT_ELEMENT_FLOAT = 1,
  TORU_FFT_ELEMENT_COMPLEX_DOUBLE = 2,
  TORU_FFT_ELEMENT_COMPLEX_FLOAT = 3
} toru_fft_element;
toru_result toru_fft_reshape_create(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_box* in,
                                    const toru_fft_box* out, toru_fft_element element, toru_fft_reshape* reshape);
toru_result toru_fft_reshape_create_f(MPI_Fint comm, long long n0, long long n1, long long n2, const toru_fft_box* in,
                                      const toru_fft_box* out, toru_fft_element element, toru_fft_reshape* reshape);
/* Elements of this rank's in and out arrays (padding included); either pointer may be NULL. */
toru_result toru_fft_reshape_sizes(toru_fft_reshape reshape, long long* in_size, long long* out_size);
/* Collective: in and out must not overlap; either may be NULL where this rank's box is empty. */
toru_result toru_fft_reshape_execute(toru_fft_reshape reshape, const void* in, void* out);
toru_result toru_fft_reshape_destroy(toru_fft_reshape reshape);

/* Deprecated: the same as toru_last_error() (toru/core.h), which every module's calls set; kept so
 * that early C callers keep building and linking. */
TORU_DEPRECATED("toru_last_error()") const char* toru_fft_last_error(void);

/* Fortran entry points (used by the toru_fft module): the communicator as a Fortran handle. */
toru_result toru_fft_plan_create_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                      const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_create_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                          const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_create_1d_f(MPI_Fint comm, long long n, const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_local_size_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                     const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                     long long* alloc);

/* ---- deprecated names of toru 0.1: each forwards to the call its attribute names ---- */
TORU_DEPRECATED("toru_fft_plan_create_3d()")
toru_result toru_fft_plan_3d(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                             toru_fft_plan* plan);
TORU_DEPRECATED("toru_fft_plan_create_r2c_3d()")
toru_result toru_fft_plan_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                 const toru_fft_options* options, toru_fft_plan* plan);
TORU_DEPRECATED("toru_fft_plan_create_1d()")
toru_result toru_fft_plan_1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan);
TORU_DEPRECATED("toru_fft_plan_local_size()")
toru_result toru_fft_local_size(toru_fft_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc);
TORU_DEPRECATED("toru_fft_plan_factors_1d()")
toru_result toru_fft_factors_1d(toru_fft_plan plan, long long* n1, long long* n2);
TORU_DEPRECATED("toru_fft_plan_workspace_size()")
toru_result toru_fft_workspace_size(toru_fft_plan plan, size_t* bytes);
TORU_DEPRECATED("toru_fft_plan_execute()")
toru_result toru_fft_execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                             void* out);
TORU_DEPRECATED("toru_fft_plan_execute_ws()")
toru_result toru_fft_execute_ws(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                                void* out, void* ws);
TORU_DEPRECATED("toru_fft_plan_destroy()") toru_result toru_fft_destroy(toru_fft_plan plan);
TORU_DEPRECATED("toru_fft_plan_create_3d_f()")
toru_result toru_fft_plan_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                               toru_fft_plan* plan);
TORU_DEPRECATED("toru_fft_plan_create_r2c_3d_f()")
toru_result toru_fft_plan_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                   const toru_fft_options* options, toru_fft_plan* plan);
TORU_DEPRECATED("toru_fft_plan_create_1d_f()")
toru_result toru_fft_plan_1d_f(MPI_Fint comm, long long n, const toru_fft_options* options, toru_fft_plan* plan);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORU_FFT_H */
