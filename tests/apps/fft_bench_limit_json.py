#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# toru-fft-bench --peers fftw-threads --json: every row carries the shared-memory limit's figures,
# consistent with each other, and the limit's transform is right. Usage: fft_bench_limit_json.py CMD...
import json, subprocess, sys

out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
rows = json.loads(out[out.index("["):])
assert {r["kind"] for r in rows} == {"3d", "3d-r2c", "1d"}, rows
for r in rows:
    for key in ("limit_median_s", "limit_min_s", "limit_max_s", "limit_plan_s", "toru_plan_s", "ratio_to_limit",
                "ratio_to_limit_min", "ratio_to_limit_max", "limit_max_rel_error", "limit_threads"):
        assert key in r, f"{r['kind']} {r['n']}: no {key}"
    assert r["limit"] == "fftw-threads" and r["limit_threads"] == r["ranks"], r
    assert 0 < r["limit_min_s"] <= r["limit_median_s"] <= r["limit_max_s"], r
    assert abs(r["ratio_to_limit"] - r["toru_median_s"] / r["limit_median_s"]) < 1e-9 * r["ratio_to_limit"], r
    assert r["ratio_to_limit_min"] <= r["ratio_to_limit_max"], r
    assert r["limit_plan_s"] > 0 and r["toru_plan_s"] > 0, r
    assert r["limit_max_rel_error"] < 1e-12, r
print(f"ok: {len(rows)} rows with the limit")
