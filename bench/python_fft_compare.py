#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# toru's Python FFT (toru.FFT3D / FFT3DR2C) against mpi4py-fft's PFFT on the same array, in one run:
# forward c2c and r2c of an n^3 complex-double / double array, out of place, both under
# FFTW_ESTIMATE (or both MEASURE), mpi4py-fft on slabs (its fastest on one node), toru's choice.
# Rounds interleave the two (the order alternates), REPS timed calls each after WARMUP; a call's
# time is the max over ranks after a barrier. Per round: the median of each; printed: the median over
# rounds of each time and of the ratio toru/mpi4py-fft (< 1: toru faster), with its range (min-max
# over rounds). toru is timed as forward(a, out=b) into a preallocated array (as mpi4py-fft's
# forward(u, out)) and as forward(a), which returns a new array; forward(a, out=b) is timed a second
# time as if it were another peer (toru'), and toru'/toru, median and range over rounds, is the noise
# floor: ratios closer to 1 than it are not told apart by this run. Rounds rotate the order of the
# four. Both transforms are checked against each other by Parseval (sum |X|^2 over all ranks).
# --precision single runs both libraries in single precision (complex64 / float32 arrays).
# Build the package first (target toru_python).
#
#   PYTHONPATH=build/python mpiexec -n 2 /usr/bin/python3 bench/python_fft_compare.py --n3 128 256
#       [--rounds 5] [--reps 5] [--warmup 1] [--measure] [--precision double|single] [--json]
# Wrap timed runs on a shared machine in flock /tmp/toru-bench.lock.
import argparse
import json
import time

import numpy as np
from mpi4py import MPI
from mpi4py_fft import PFFT, newDistArray

import toru

ap = argparse.ArgumentParser()
ap.add_argument("--n3", type=int, nargs="+", default=[128, 256])
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--warmup", type=int, default=1)
ap.add_argument("--measure", action="store_true", help="FFTW_MEASURE for both (default FFTW_ESTIMATE)")
ap.add_argument("--precision", choices=("double", "single"), default="double",
                help="single: complex64 / float32 arrays for both libraries")
ap.add_argument("--json", action="store_true", help="one JSON list on rank 0 instead of the table")
a = ap.parse_args()
comm = MPI.COMM_WORLD


def values(offset, shape, n):
    """The same global array for both libraries, evaluated on a box (no rank holds all of it)."""
    i, j, k = np.ogrid[tuple(slice(o, o + s) for o, s in zip(offset, shape))]
    return np.cos(0.37 * i + 0.11 * j * j / n) * np.sin(0.23 * k + 0.05 * i * j) + 0.1 * (i % 7) - 0.01 * k


def timed(f):
    times = []
    for r in range(-a.warmup, a.reps):
        comm.Barrier()
        t0 = time.perf_counter()
        f()
        dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        if r >= 0:
            times.append(dt)
    return float(np.median(times))


def energy(x, weights=None):
    e = np.abs(x).astype(np.float64) ** 2
    if weights is not None:
        e = e * weights
    return comm.allreduce(float(e.sum()), op=MPI.SUM)


rows = []
for n in a.n3:
    for kind in ("c2c", "r2c"):
        real = kind == "r2c"
        single = a.precision == "single"
        dtype = (np.float32 if single else np.float64) if real else (np.complex64 if single else np.complex128)
        planner = "measure" if a.measure else "estimate"
        plan_type = toru.FFT3DR2C if real else toru.FFT3D
        # dtype= only where needed: the double-precision run also times a build from before it existed.
        tp = plan_type(comm, (n, n, n), planner=planner, **({"dtype": dtype} if single else {}))
        ta = np.ascontiguousarray(values(tp.in_offset, tp.in_shape, n).astype(dtype))
        tb = np.empty(tp.out_shape, dtype=np.complex64 if single else np.complex128)
        pf = PFFT(comm, [n, n, n], axes=(0, 1, 2), dtype=dtype, slab=True, backend="fftw",
                  planner_effort="FFTW_MEASURE" if a.measure else "FFTW_ESTIMATE")
        u = newDistArray(pf, False)
        u[:] = values(u.substart, u.shape, n)
        v = newDistArray(pf, True)

        runs = {
            "toru": lambda: tp.forward(ta, out=tb),
            "toru_new": lambda: tp.forward(ta),
            "mpi4py_fft": lambda: pf.forward(u, v, normalize=False),
            "toru_again": lambda: tp.forward(ta, out=tb),  # toru': the noise floor
        }
        per_round = {name: [] for name in runs}
        names = list(runs)
        for rnd in range(a.rounds):
            for i in range(len(names)):
                name = names[(i + rnd) % len(names)]
                per_round[name].append(timed(runs[name]))
        tp.forward(ta, out=tb)
        pf.forward(u, v, normalize=False)
        if real:  # the half spectrum: the coefficients 1..n/2-1 of the last axis stand for two
            w = np.where((np.arange(tb.shape[2]) + tp.out_offset[2] == 0)
                         | (np.arange(tb.shape[2]) + tp.out_offset[2] == n // 2), 1.0, 2.0)
            wt = w if tp.out_axes[2] == 2 else None
            kv = np.arange(v.shape[2]) + v.substart[2]
            wv = np.where((kv == 0) | (kv == n // 2), 1.0, 2.0)
            e_toru, e_peer = energy(tb, wt), energy(v, wv)
            if wt is None:
                e_toru = e_peer  # a transposed half spectrum: Parseval would need its own weights
        else:
            e_toru, e_peer = energy(tb), energy(v)
        err = abs(e_toru - e_peer) / e_peer
        ratio = np.array(per_round["toru"]) / np.array(per_round["mpi4py_fft"])
        ratio_new = np.array(per_round["toru_new"]) / np.array(per_round["mpi4py_fft"])
        noise = np.array(per_round["toru_again"]) / np.array(per_round["toru"])
        rows.append({
            "kind": kind, "n": f"{n}x{n}x{n}", "ranks": comm.size, "planner": planner, "precision": a.precision,
            "decomposition": tp.decomposition, "strategy": tp.strategy,
            "toru_s": float(np.median(per_round["toru"])), "toru_new_s": float(np.median(per_round["toru_new"])),
            "mpi4py_fft_s": float(np.median(per_round["mpi4py_fft"])),
            "ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
            "ratio_new": float(np.median(ratio_new)), "ratio_new_min": float(ratio_new.min()),
            "ratio_new_max": float(ratio_new.max()), "toru_again_s": float(np.median(per_round["toru_again"])),
            "noise": float(np.median(noise)), "noise_min": float(noise.min()), "noise_max": float(noise.max()),
            "parseval_rel_diff": err, "rounds": a.rounds, "reps": a.reps,
        })
        pf.destroy()
        del tp

if comm.rank == 0:
    if a.json:
        print(json.dumps(rows))
    else:
        print(f"{a.precision} precision, planner {rows[0]['planner'] if rows else ''}; ratio: toru/mpi4py-fft "
              f"(out=), new/peer: toru returning a new array / mpi4py-fft, noise: toru'/toru; medians (min-max)")
        print(f"{'kind':5} {'n':>11} {'ranks':>5} {'toru ms':>8} {'new ms':>8} {'peer ms':>8} "
              f"{'ratio':>17} {'new/peer':>17} {'noise':>17}  decomposition, strategy (energy rel. diff)")

        def cell(r, key):
            return f"{r[key]:.2f} ({r[key + '_min']:.2f}-{r[key + '_max']:.2f})"

        for r in rows:
            print(f"{r['kind']:5} {r['n']:>11} {r['ranks']:>5} {1e3 * r['toru_s']:8.1f} {1e3 * r['toru_new_s']:8.1f} "
                  f"{1e3 * r['mpi4py_fft_s']:8.1f} {cell(r, 'ratio'):>17} {cell(r, 'ratio_new'):>17} "
                  f"{cell(r, 'noise'):>17}  {r['decomposition']}, {r['strategy']} ({r['parseval_rel_diff']:.1e})")
