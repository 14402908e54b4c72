#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# mpi4py-fft's PFFT (Debian python3-mpi4py-fft, FFTW underneath) as a peer of toru-fft-bench's 3D
# rows in bench/fft-compare.sh: forward c2c and r2c of an n^3 complex-double / double array, slab
# decomposition over all ranks (the same grid as toru's slab on one node), out of place. Prints one
# JSON list on rank 0: {"kind", "n", "ranks", "median_s", "min_s", "max_s", "plan_s"} per row; each
# time is the max over ranks of one call, after a barrier.
#   mpiexec -n 4 /usr/bin/python3 bench/fft_mpi4py.py --n3 128 256 --reps 5 --warmup 1 [--measure]
import argparse, json, time

import numpy as np
from mpi4py import MPI
from mpi4py_fft import PFFT, newDistArray

ap = argparse.ArgumentParser()
ap.add_argument("--n3", type=int, nargs="+", required=True)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--warmup", type=int, default=1)
ap.add_argument("--measure", action="store_true", help="FFTW_MEASURE (default FFTW_ESTIMATE)")
a = ap.parse_args()
comm = MPI.COMM_WORLD
flag = "FFTW_MEASURE" if a.measure else "FFTW_ESTIMATE"
rows = []
for n in a.n3:
    for kind, dtype in (("3d", np.complex128), ("3d-r2c", np.float64)):
        comm.Barrier()
        t0 = time.perf_counter()
        fft = PFFT(comm, [n, n, n], axes=(0, 1, 2), dtype=dtype, slab=True, backend="fftw",
                   planner_effort=flag)
        plan_s = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        u = newDistArray(fft, False)
        u[:] = np.random.default_rng(comm.rank).random(u.shape)
        out = newDistArray(fft, True)
        times = []
        for r in range(-a.warmup, a.reps):
            comm.Barrier()
            t0 = time.perf_counter()
            fft.forward(u, out, normalize=False)
            dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
            if r >= 0:
                times.append(dt)
        rows.append({"kind": kind, "n": f"{n}x{n}x{n}", "ranks": comm.size, "median_s": float(np.median(times)),
                     "min_s": min(times), "max_s": max(times), "plan_s": plan_s})
        fft.destroy()
if comm.rank == 0:
    print(json.dumps(rows))
