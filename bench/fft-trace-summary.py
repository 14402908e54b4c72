#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Summarises `toru-fft-bench --trace DIR` (DIR/trace.<rank>.csv, one clock for all ranks of a host).
For one traced transform (the last, or --transform K, of --points N) and each exchange in it, across
ranks: how far apart the ranks entered it (skew), how long it took (first entry to last exit), per
rank the sum of the indirect algorithm's chunk latencies (post to completion) in phase A and in
phase B (median and worst rank; chunks overlap, so a sum can exceed the span), and the time in the
overlap hook (unpack + local FFTs of arrived chunks); then the local FFT time per rank.

    bench/fft-trace-summary.py DIR [--points N] [--transform K]
"""
import argparse
import csv
import glob
import os
import statistics as st

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--points", type=int, default=0, help="only transforms of N points (default: any size)")
ap.add_argument("--transform", type=int, default=-1, help="index among those transforms (default: the last)")
a = ap.parse_args()

T, THREAD, KIND, NAME, DETAIL, BYTES, VALUE = range(7)
ranks = {}
for p in sorted(glob.glob(os.path.join(a.dir, "trace.*.csv"))):
    with open(p) as f:
        ranks[int(p.rsplit(".", 2)[1])] = [
            (int(x["t_ns"]), int(x["thread"]), x["kind"], x["name"], x["detail"], int(x["bytes"]), float(x["value"]))
            for x in csv.DictReader(f)]
if not ranks:
    raise SystemExit(f"no trace.*.csv in {a.dir}")


def transforms(ev):
    starts = [i for i, e in enumerate(ev) if e[NAME] == "bench.transform"]
    return [ev[s:e] for s, e in zip(starts, starts[1:] + [len(ev)]) if not a.points or ev[s][BYTES] == a.points]


def scopes(ev, name):
    """(begin, end) of every scope `name` on the calling thread (the one that marked the transform)."""
    out, open_ = [], []
    th = ev[0][THREAD]
    for e in ev:
        if e[NAME] != name or e[THREAD] != th:
            continue
        if e[KIND] == "begin":
            open_.append(e[T])
        elif e[KIND] == "end" and open_:
            out.append((open_.pop(), e[T]))
    return out


def latencies(ev, post, done, lo, hi):
    """Per chunk: done - post (ns), for marks inside [lo, hi]."""
    p, d = {}, {}
    for e in ev:
        if lo <= e[T] <= hi:
            if e[NAME] == post:
                p[int(e[VALUE])] = e[T]
            elif e[NAME] == done:
                d[int(e[VALUE])] = e[T]
    return [d[c] - p[c] for c in p if c in d]


rows = {r: transforms(ev)[a.transform] for r, ev in ranks.items()}
first = rows[min(rows)][0]
print(f"transform {first[DETAIL]} {first[BYTES]} points #{int(first[VALUE])}, {len(ranks)} ranks")
t0 = min(ev[0][T] for ev in rows.values())
ms = lambda ns: ns / 1e6
med = lambda v: st.median(v) if v else 0
print(f"span {ms(max(ev[-1][T] for ev in rows.values()) - t0):.1f} ms (first event on any rank to the last on any)")
ex = {r: scopes(ev, "comm.alltoall") for r, ev in rows.items()}
print(f"{'exchange':>8} {'enter':>7} {'skew':>7} {'span':>7} {'chunks':>6} {'A sum med/max':>15} "
      f"{'B sum med/max':>15} {'hook med/max':>13} {'A lat':>6} {'B lat':>6}  (ms from the transform's start)")
for i in range(min(len(x) for x in ex.values())):
    b = [ex[r][i][0] for r in ranks]
    e = [ex[r][i][1] for r in ranks]
    asum, bsum, hook, alat, blat, nc = [], [], [], [], [], 0
    for r, ev in rows.items():
        lo, hi = ex[r][i]
        al = latencies(ev, "comm.alltoall.a_post", "comm.alltoall.a_done", lo, hi)
        bl = latencies(ev, "comm.alltoall.b_post", "comm.alltoall.b_done", lo, hi)
        nc = max(nc, len(al))
        alat += al
        blat += bl
        asum.append(sum(al))
        bsum.append(sum(bl))
        hook.append(sum(y - x for x, y in scopes(ev, "comm.alltoall.hook") if lo <= x <= hi))
    print(f"{i:>8} {ms(min(b) - t0):7.1f} {ms(max(b) - min(b)):7.1f} {ms(max(e) - min(b)):7.1f} {nc:>6} "
          f"{ms(med(asum)):7.1f}/{ms(max(asum)):7.1f} {ms(med(bsum)):7.1f}/{ms(max(bsum)):7.1f} "
          f"{ms(med(hook)):6.2f}/{ms(max(hook)):6.2f} {ms(med(alat)):6.2f} {ms(med(blat)):6.2f}")
ffts = [sum(y - x for x, y in scopes(ev, "fft.local_fft")) for ev in rows.values()]
print(f"local FFTs (inside hooks too): median {ms(med(ffts)):.2f} ms, max {ms(max(ffts)):.2f} ms per rank")
