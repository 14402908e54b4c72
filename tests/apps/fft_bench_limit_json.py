#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# toru-fft-bench --peers fftw-threads --json: every row carries the shared-memory limit's figures,
# consistent with each other, and the limit's transform is right.
# Usage: fft_bench_limit_json.py [--wisdom FILE] CMD...
# With --wisdom, CMD runs twice with --limit-wisdom FILE (a fresh file): the first run plans the
# limit and writes FFTW's wisdom, the second takes every limit plan from it and reports no plan time.
import json, os, subprocess, sys

args = sys.argv[1:]
wisdom = None
if args[0] == "--wisdom":
    wisdom, args = args[1], args[2:]


def rows_of(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("["):])


def check(rows, from_wisdom):
    assert {r["kind"] for r in rows} == {"3d", "3d-r2c", "1d"}, rows
    for r in rows:
        for key in ("limit_median_s", "limit_min_s", "limit_max_s", "limit_plan_s", "toru_plan_s", "ratio_to_limit",
                    "ratio_to_limit_min", "ratio_to_limit_max", "limit_max_rel_error", "limit_threads",
                    "limit_plan_from_wisdom"):
            assert key in r, f"{r['kind']} {r['n']}: no {key}"
        assert r["limit"] == "fftw-threads" and r["limit_threads"] == r["ranks"], r
        assert 0 < r["limit_min_s"] <= r["limit_median_s"] <= r["limit_max_s"], r
        assert abs(r["ratio_to_limit"] - r["toru_median_s"] / r["limit_median_s"]) < 1e-9 * r["ratio_to_limit"], r
        assert r["ratio_to_limit_min"] <= r["ratio_to_limit_max"], r
        assert r["toru_plan_s"] > 0, r
        assert r["limit_plan_from_wisdom"] == from_wisdom, r
        assert (r["limit_plan_s"] is None) if from_wisdom else (r["limit_plan_s"] > 0), r
        assert r["limit_max_rel_error"] < 1e-12, r


if wisdom is None:
    rows = rows_of(args)
    check(rows, False)
    print(f"ok: {len(rows)} rows with the limit")
else:
    if os.path.exists(wisdom):
        os.remove(wisdom)
    check(rows_of(args + ["--limit-wisdom", wisdom]), False)
    assert os.path.getsize(wisdom) > 0, "no FFTW wisdom written"
    rows = rows_of(args + ["--limit-wisdom", wisdom])
    check(rows, True)
    os.remove(wisdom)
    print(f"ok: {len(rows)} rows planned, then {len(rows)} taken from FFTW's wisdom")
