/* toru — the C interface (also the base for Fortran bindings through ISO_C_BINDING).
 *
 * Conventions for every function here:
 *  - returns a toru_result; TORU_SUCCESS (0) on success; toru_error_string() gives a short text
 *    for a code, and toru_last_error() the full message of the last failure on this thread;
 *  - no C++ exception crosses this boundary;
 *  - a function that creates a handle sets *out to NULL on failure;
 *  - "collective" means every rank of the communicator must call it, in the same order.
 *
 * The all-to-all part is owned by comm/; the FFT part (end of this file) by fft/.
 */
#ifndef TORU_TORU_H
#define TORU_TORU_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- common ---- */

/* Result codes; the values after TORU_SUCCESS mirror toru::errc (core/error.hpp). */
typedef enum toru_result {
  TORU_SUCCESS = 0,
  TORU_ERROR_INVALID_ARGUMENT = 1, /* a caller's argument is malformed or out of range */
  TORU_ERROR_MISMATCH = 2,         /* arguments disagree across ranks, or with a plan */
  TORU_ERROR_UNSUPPORTED = 3,      /* valid, but not supported by this build or backend */
  TORU_ERROR_MPI = 4,              /* an MPI call failed */
  TORU_ERROR_FFTW = 5,             /* FFTW failed to plan */
  TORU_ERROR_HWLOC = 6,            /* hwloc failed */
  TORU_ERROR_CUDA = 7,             /* a CUDA, cuFFT or NCCL call failed */
  TORU_ERROR_NO_DEVICE = 8,        /* a GPU was required and none is present */
  TORU_ERROR_IO = 9,               /* a file could not be read or written */
  TORU_ERROR_OUT_OF_MEMORY = 10,   /* an allocation failed */
  TORU_ERROR_INTERNAL = 11         /* a bug in toru: please report it */
} toru_result;

/* A static, short description of a result code ("success", "invalid argument", ...). Never NULL. */
const char* toru_error_string(toru_result result);

/* The full message (argument, expectation, rank) of the last failed toru call on this thread,
 * or "" when none failed. Valid until the next toru call on this thread. */
const char* toru_last_error(void);

/* ---- comm: all-to-all ---- */

/* Pass as sendbuf for an in-place exchange (like MPI_IN_PLACE), or pass in == out to a plan. */
#define TORU_IN_PLACE ((const void*)MPI_IN_PLACE)

/* Algorithm choice; TORU_ALLTOALL_AUTO lets the decision function (or measurement) pick. */
typedef enum toru_alltoall_algorithm {
  TORU_ALLTOALL_AUTO = 0,
  TORU_ALLTOALL_DIRECT = 1,   /* the MPI library's own MPI_Alltoall(v) */
  TORU_ALLTOALL_PAIRWISE = 2, /* P-1 steps of MPI_Sendrecv with (rank+s, rank-s) */
  TORU_ALLTOALL_BRUCK = 3,    /* log2(P) steps; small equal blocks only */
  TORU_ALLTOALL_INDIRECT = 4  /* two-phase torus algorithm, chunked and pipelined */
} toru_alltoall_algorithm;

/* Drop-in replacements with the signatures of MPI_Alltoall / MPI_Alltoallv. Collective.
 * Same semantics as MPI, including sendbuf == TORU_IN_PLACE (MPI_IN_PLACE). Each call validates its
 * arguments collectively (one small allreduce), so bad input fails on every rank instead of hanging;
 * for repeated exchanges of one shape, a plan avoids that cost. */
toru_result toru_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm);
toru_result toru_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                           void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                           MPI_Comm comm);

/* A persistent all-to-all plan (like MPI_Alltoall_init). Opaque. */
typedef struct toru_alltoall_plan_s* toru_alltoall_plan;

/* Options for plan creation; initialise with toru_alltoall_options_default(). */
typedef struct toru_alltoall_options {
  toru_alltoall_algorithm algorithm; /* TORU_ALLTOALL_AUTO by default */
  int chunks;                        /* pipeline chunks; 0 = chosen by the model */
  int measure;                       /* non-zero: time the candidates at plan creation */
  const char* torus;                 /* torus spec such as "4x4x8", or NULL: derived from the communicator */
} toru_alltoall_options;

toru_alltoall_options toru_alltoall_options_default(void);

/* Creates a plan exchanging `count` elements of `type` between every pair of ranks of `comm`.
 * Collective. `options` may be NULL (defaults). On failure *plan = NULL. */
toru_result toru_alltoall_plan_create(MPI_Comm comm, size_t count, MPI_Datatype type,
                                      const toru_alltoall_options* options, toru_alltoall_plan* plan);

/* Same for variable counts; arrays of length size(comm), counts and displacements in elements of `type`. */
toru_result toru_alltoallv_plan_create(MPI_Comm comm, const int* send_counts, const int* send_displs,
                                       const int* recv_counts, const int* recv_displs, MPI_Datatype type,
                                       const toru_alltoall_options* options, toru_alltoall_plan* plan);

/* Runs the plan. Collective over the plan's communicator. in == out (or in == TORU_IN_PLACE) is in place. */
toru_result toru_alltoall_plan_execute(toru_alltoall_plan plan, const void* in, void* out);

/* Runs the plan with a caller workspace of at least toru_alltoall_plan_workspace_size() bytes. */
toru_result toru_alltoall_plan_execute_ws(toru_alltoall_plan plan, const void* in, void* out, void* ws);

toru_result toru_alltoall_plan_workspace_size(toru_alltoall_plan plan, size_t* bytes);
toru_result toru_alltoall_plan_algorithm(toru_alltoall_plan plan, toru_alltoall_algorithm* algorithm);
toru_result toru_alltoall_plan_chunks(toru_alltoall_plan plan, int* chunks);

/* Frees the plan (not collective; NULL is allowed). */
toru_result toru_alltoall_plan_destroy(toru_alltoall_plan plan);

/* Wisdom: the measured choices, as a JSON file. Collective over comm (rank 0 reads/writes). */
toru_result toru_alltoall_wisdom_save(MPI_Comm comm, const char* path);
toru_result toru_alltoall_wisdom_load(MPI_Comm comm, const char* path);

/* ---- fft ---- */
/* Parallel 3D FFTs (c2c, r2c/c2r; slab or pencil) and the distributed 1D FFT of toru::fft.
 * Arrays are row-major (C order: n2 fastest); the conventions are FFTW-MPI's: forward is
 * exp(-2 pi i jk/n), nothing is normalized unless asked, real arrays of r2c plans are padded to
 * 2*(n2/2+1) reals per row, and every buffer passed as `out` (and `in` when in place) holds the
 * `alloc` complex elements toru_fft_local_size reports. Example (error checks omitted):
 *
 *   toru_fft_plan p;
 *   toru_fft_plan_3d(MPI_COMM_WORLD, 64, 64, 64, NULL, &p);          (collective)
 *   toru_fft_box in, out; long long alloc;
 *   toru_fft_local_size(p, &in, &out, &alloc);
 *   double complex *a = malloc(alloc * sizeof *a), *b = malloc(alloc * sizeof *b);
 *   ... fill a over box `in` ...
 *   toru_fft_execute(p, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b);  (collective)
 *   toru_fft_destroy(p);
 */

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

/* Plan options; start from toru_fft_options_default(). */
typedef struct toru_fft_options {
  toru_fft_precision precision;         /* TORU_FFT_DOUBLE */
  toru_fft_decomposition decomposition; /* TORU_FFT_DECOMPOSITION_AUTO (3D only) */
  int grid[2];                          /* pencil grid p0 x p1; {0, 0} = chosen (3D only) */
  int transposed_out;                   /* non-zero: skip the final transposes, like FFTW_MPI_TRANSPOSED_OUT
                                           (3D) or FFTW_MPI_SCRAMBLED_OUT (1D); backward then takes that order */
  int measure;                          /* non-zero: FFTW_MEASURE for the local FFTs (else FFTW_ESTIMATE) */
  int overlap;                          /* non-zero (default): local FFTs overlap the all-to-all */
  int chunks;                           /* chunks per all-to-all when overlapping; 0 = chosen */
  long long n1;                         /* 1D only: first factor of n = n1 * n2; 0 = chosen */
} toru_fft_options;

toru_fft_options toru_fft_options_default(void);

/* A rank's part of the array: along axis a, global indices [low[a], low[a] + size[a]); memory nests
 * axes order[0] (slowest) .. order[2] (fastest), rows along the fastest axis row_stride elements apart.
 * For 1D plans: low[0] is the first global index, size[0] the count, size[1] = size[2] = 1, order
 * {0, 1, 2} and row_stride 1 (contiguous). Scrambled 1D output (transposed_out) holds, at local
 * index i, the coefficient X[k1 + n1 * k2] with k1 = (low[0] + i) / n2 and k2 = (low[0] + i) % n2,
 * n1 and n2 from toru_fft_factors_1d. */
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
toru_result toru_fft_plan_3d(MPI_Comm comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                             toru_fft_plan* plan);
toru_result toru_fft_plan_r2c_3d(MPI_Comm comm, long long n0, long long n1, long long n2,
                                 const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_1d(MPI_Comm comm, long long n, const toru_fft_options* options, toru_fft_plan* plan);

/* Not collective. in: where the forward input (backward output) lies; out: the forward output
 * (backward input); alloc: complex elements every buffer must hold. Any pointer may be NULL. */
toru_result toru_fft_local_size(toru_fft_plan plan, toru_fft_box* in, toru_fft_box* out, long long* alloc);
/* Not collective, no plan needed (like fftw_mpi_local_size_3d): the boxes and alloc a 3D plan with these
 * arguments would have on this rank of comm. r2c non-zero: for toru_fft_plan_r2c_3d (real, padded input). */
toru_result toru_fft_local_size_3d(MPI_Comm comm, long long n0, long long n1, long long n2, int r2c,
                                   const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                   long long* alloc);
/* Not collective: the six-step factors n = n1 * n2 of a 1D plan (any pointer may be NULL);
 * TORU_ERROR_INVALID_ARGUMENT for a 3D plan. */
toru_result toru_fft_factors_1d(toru_fft_plan plan, long long* n1, long long* n2);
/* Bytes of caller workspace toru_fft_execute_ws needs. */
toru_result toru_fft_workspace_size(toru_fft_plan plan, size_t* bytes);

/* Collective. in == out is in place; out-of-place leaves in unchanged. r2c plans: forward takes reals,
 * backward returns reals (the real output buffer holds 2*alloc reals). direction, scale and the
 * buffers are agreed on in one small allreduce per call, so a bad or differing one on any rank is
 * the same error on every rank. plan == NULL cannot be agreed on (it has no communicator): that rank
 * alone returns TORU_ERROR_INVALID_ARGUMENT while the others wait in the call, so treat it as fatal. */
toru_result toru_fft_execute(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                             void* out);
toru_result toru_fft_execute_ws(toru_fft_plan plan, toru_fft_direction direction, toru_fft_scale scale, const void* in,
                                void* out, void* ws);

/* Frees the plan (not collective, but before MPI_Finalize; NULL is allowed). */
toru_result toru_fft_destroy(toru_fft_plan plan);

/* The same as toru_last_error() (kept so that Fortran and early C callers keep linking). */
const char* toru_fft_last_error(void);

/* Fortran entry points (used by the toru_fft module): the communicator as a Fortran handle. */
toru_result toru_fft_plan_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, const toru_fft_options* options,
                               toru_fft_plan* plan);
toru_result toru_fft_plan_r2c_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2,
                                   const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_plan_1d_f(MPI_Fint comm, long long n, const toru_fft_options* options, toru_fft_plan* plan);
toru_result toru_fft_local_size_3d_f(MPI_Fint comm, long long n0, long long n1, long long n2, int r2c,
                                     const toru_fft_options* options, toru_fft_box* in, toru_fft_box* out,
                                     long long* alloc);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORU_TORU_H */
