/* SPDX-License-Identifier: BSD-3-Clause */
/* toru/comm.h — the C interface of comm/: drop-in MPI_Alltoall(v), persistent all-to-all plans and
 * wisdom. Conventions and result codes: toru/core.h. */
#ifndef TORU_COMM_H
#define TORU_COMM_H

#include <mpi.h>
#include <stddef.h>

#include "toru/core.h"
#include "toru/request.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * Same semantics as MPI, including sendbuf == TORU_IN_PLACE (MPI_IN_PLACE). The first call of each
 * signature (counts, displacements, datatypes) on a communicator validates its arguments collectively,
 * so bad input fails on every rank instead of hanging, and plans the exchange; later toru_alltoall calls
 * with that signature cost what MPI_Alltoall costs, toru_alltoallv calls one small allreduce more.
 * Ranks change toru_alltoall signatures together (as MPI requires); TORU_CHECK=1 validates every call.
 * Details: toru/comm/alltoall.hpp and docs/comm.md. */
toru_result toru_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm);
toru_result toru_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                           void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                           MPI_Comm comm);

/* A persistent all-to-all plan (like MPI_Alltoall_init). Opaque. */
typedef struct toru_alltoall_plan_s* toru_alltoall_plan;

/* Options for plan creation. Start from TORU_ALLTOALL_OPTIONS_INIT, toru_alltoall_options_init(&o) or
 * toru_alltoall_options_default(): each sets `size` to this header's sizeof(toru_alltoall_options), so
 * that a later library, whose struct has grown at its end, reads only the fields the caller knows (the
 * rest keep their defaults). A size of 0 (never initialised) or one larger than the library knows is
 * refused with TORU_ERROR_INVALID_ARGUMENT on every rank. */
typedef struct toru_alltoall_options {
  size_t size;                       /* sizeof(toru_alltoall_options) where the caller was compiled */
  toru_alltoall_algorithm algorithm; /* TORU_ALLTOALL_AUTO by default */
  int chunks;                        /* pipeline chunks; 0 = chosen by the model */
  int measure;                       /* non-zero: time the candidates at plan creation */
  const char* torus;                 /* torus spec of comm such as "4x4x8" (its size must be comm's), or NULL:
                                        the sub-torus comm's ranks occupy on TORU_TORUS (which describes
                                        MPI_COMM_WORLD), else derived from the communicator */
  const char* order;                 /* rank order for the mapping, e.g. "ZXY" (fastest axis first), or NULL */
} toru_alltoall_options;

/* The defaults, as a C initialiser: toru_alltoall_options o = TORU_ALLTOALL_OPTIONS_INIT; */
#define TORU_ALLTOALL_OPTIONS_INIT \
  { sizeof(toru_alltoall_options), TORU_ALLTOALL_AUTO, 0, 0, NULL, NULL }

/* Sets *options to the defaults (size included). Not collective; TORU_ERROR_INVALID_ARGUMENT for NULL. */
toru_result toru_alltoall_options_init(toru_alltoall_options* options);
/* The defaults by value (size included). */
toru_alltoall_options toru_alltoall_options_default(void);

/* Creates a plan exchanging `count` elements of `type` between every pair of ranks of `comm`.
 * Collective. `options` may be NULL (defaults). On failure *plan = NULL. Every argument (count times the
 * size of type, every option, TORU_ALLTOALL_ALGORITHM / _CHUNKS / TORU_TORUS where consulted) must
 * agree across ranks: a bad or differing argument on one rank gives every rank the same error
 * (TORU_ERROR_MISMATCH for a difference). MPI_COMM_NULL and intercommunicators are refused. */
toru_result toru_alltoall_plan_create(MPI_Comm comm, size_t count, MPI_Datatype type,
                                      const toru_alltoall_options* options, toru_alltoall_plan* plan);

/* Same for variable counts; arrays of length size(comm), counts and displacements in elements of `type`. */
toru_result toru_alltoallv_plan_create(MPI_Comm comm, const int* send_counts, const int* send_displs,
                                       const int* recv_counts, const int* recv_displs, MPI_Datatype type,
                                       const toru_alltoall_options* options, toru_alltoall_plan* plan);

/* Runs the plan. Collective over the plan's communicator. in == out (or in == TORU_IN_PLACE) is in place.
 * Not agreed across ranks (that would cost a collective per call): a rank whose buffer is NULL while it
 * has data to move takes part with scratch data and alone returns TORU_ERROR_INVALID_ARGUMENT; a NULL
 * plan on one rank cannot take part at all and leaves the others waiting. */
toru_result toru_alltoall_plan_execute(toru_alltoall_plan plan, const void* in, void* out);

/* Runs the plan with a caller workspace of at least toru_alltoall_plan_workspace_size() bytes. */
toru_result toru_alltoall_plan_execute_ws(toru_alltoall_plan plan, const void* in, void* out, void* ws);

/* Split phase (MPI-4 persistent-collective semantics): start begins the exchange and returns;
 * wait returns when it is done, with its error. In between the caller computes, touches neither
 * buffer and runs nothing else on the plan; it calls MPI itself only under MPI_THREAD_MULTIPLE.
 * A second start before wait, or a wait without start, is TORU_ERROR_INVALID_ARGUMENT. Below
 * MPI_THREAD_SERIALIZED start runs the whole exchange (no overlap). */
toru_result toru_alltoall_plan_start(toru_alltoall_plan plan, const void* in, void* out);
toru_result toru_alltoall_plan_wait(toru_alltoall_plan plan);
/* Persistent form (MPI-4's MPI_Alltoall_init; toru/request.h): binds in and out to a new *request;
 * each toru_request_start begins toru_alltoall_plan_execute(plan, in, out). Not collective (the
 * exchange agrees on nothing per call, see above). Free it with toru_request_free before the plan. */
toru_result toru_alltoall_plan_init(toru_alltoall_plan plan, const void* in, void* out, toru_request* request);

toru_result toru_alltoall_plan_workspace_size(toru_alltoall_plan plan, size_t* bytes);
toru_result toru_alltoall_plan_algorithm(toru_alltoall_plan plan, toru_alltoall_algorithm* algorithm);
toru_result toru_alltoall_plan_chunks(toru_alltoall_plan plan, int* chunks);

/* Frees the plan (not collective; NULL is allowed). */
toru_result toru_alltoall_plan_destroy(toru_alltoall_plan plan);

/* Wisdom: the measured choices, as a JSON file. Collective over comm (rank 0 reads/writes); path must be
 * the same on every rank. Loading a missing or unreadable file returns TORU_ERROR_IO on every rank. */
toru_result toru_alltoall_wisdom_save(MPI_Comm comm, const char* path);
toru_result toru_alltoall_wisdom_load(MPI_Comm comm, const char* path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORU_COMM_H */
