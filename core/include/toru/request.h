/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent collectives (MPI-4: MPI_Alltoall_init, then MPI_Start / MPI_Wait as often as needed):
 * toru_fft_plan_init, toru_fft_r2r_plan_init, toru_fft_batch_plan_init and toru_alltoall_plan_init
 * bind a plan's call to its buffers, checking them (collectively, for FFT plans) once; each
 * toru_request_start then begins that call with no argument checks, and toru_request_wait completes
 * it. Between the two the caller touches neither bound buffer and runs nothing else on the plan; it
 * calls MPI itself only under MPI_THREAD_MULTIPLE. The plan must outlive its requests.
 *
 *   toru_request fwd;
 *   toru_fft_plan_init(plan, TORU_FFT_FORWARD, TORU_FFT_SCALE_NONE, a, b, &fwd);   collective
 *   for (step = 0; step < steps; ++step) {
 *     toru_request_start(fwd);   collective
 *     ... compute ...
 *     toru_request_wait(fwd);    b holds the transform
 *   }
 *   toru_request_free(&fwd); */
#ifndef TORU_REQUEST_H
#define TORU_REQUEST_H

#include "toru/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct toru_request_s* toru_request;

/* Collective: begins the bound call. A second start before wait is TORU_ERROR_INVALID_ARGUMENT
 * (on the rank that makes it, before anything runs). */
toru_result toru_request_start(toru_request request);
/* Returns when the call is done, with its result. Without a start: TORU_ERROR_INVALID_ARGUMENT. */
toru_result toru_request_wait(toru_request request);
/* Frees *request (waiting for a call in flight) and sets it to NULL; NULL or *request == NULL is allowed. */
toru_result toru_request_free(toru_request* request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORU_REQUEST_H */
