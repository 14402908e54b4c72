/* SPDX-License-Identifier: BSD-3-Clause */
/* toru/core.h — the part of toru's C interface every module shares: result codes, error text and
 * the version. toru/comm.h and toru/fft.h include it; toru/toru.h includes them all.
 *
 * Conventions for every function of toru's C interface (also the base for the Fortran bindings
 * through ISO_C_BINDING):
 *  - returns a toru_result; TORU_SUCCESS (0) on success; toru_error_string() gives a short text
 *    for a code, and toru_last_error() the full message of the last failure on this thread;
 *  - no C++ exception crosses this boundary;
 *  - a function that creates a handle sets *out to NULL on failure;
 *  - "collective" means every rank of the communicator must call it, in the same order.
 */
#ifndef TORU_CORE_H
#define TORU_CORE_H

#include "toru/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a C call kept only so that old callers still build: the compiler names its replacement.
 * Compilers without the attribute see a plain declaration. */
#ifndef TORU_DEPRECATED
#if defined(__GNUC__) || defined(__clang__)
#define TORU_DEPRECATED(replacement) __attribute__((deprecated("use " replacement " instead")))
#else
#define TORU_DEPRECATED(replacement)
#endif
#endif

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

/* ---- errors (libtoru_core: every component links it) ---- */

/* A static, short description of a result code ("success", "invalid argument", ...). Never NULL.
 * Not collective, thread-safe. */
const char* toru_error_string(toru_result result);

/* The full message (argument, expectation, rank) of the last failed toru C call on the calling
 * thread, whichever module's call it was (comm, fft, ...): every failing call of toru's C interface
 * sets it, and calls that check their input (plan creation, execution, queries) clear it when they
 * succeed, so read it right after the failing call. "" when nothing failed. Thread-local: threads
 * never see each other's messages. Not collective. The pointer stays valid until the calling
 * thread's next toru call.
 *
 *   if (toru_fft_plan_create_3d(comm, n0, n1, n2, NULL, &plan) != TORU_SUCCESS)
 *     fprintf(stderr, "toru: %s\n", toru_last_error());
 */
const char* toru_last_error(void);

/* ---- version ---- */

/* The version of the library linked in (TORU_VERSION_* in toru/version.h give the headers' version).
 * Not collective, thread-safe; any pointer may be NULL. */
toru_result toru_get_version(int* major, int* minor, int* patch);

/* The same as "major.minor.patch", static storage. Never NULL. */
const char* toru_version_string(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORU_CORE_H */
