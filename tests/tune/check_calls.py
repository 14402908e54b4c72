#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs one coverage program (tests/tune/calls/) under libtoru_tune_pmpi (LD_PRELOAD or linked) and
checks the profile the shim wrote against what the program says it did (its expect.<rank> files):
for every MPI function named there, the calls and bytes of each rank summed over the function's
call sites, and the bytes per partner summed over ranks, must be exactly the program's. A fact named
metric:NAME (is_collective, is_p2p) is the metrics' view instead: the calls and bytes of every site
whose metric NAME is 1, summed over sites and ranks, as toru-tune's rules see them (--toru-tune);
their time must be the ranks' time in that class (mpi_coll, mpi_p2p)."""
import argparse
import collections
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mode", choices=["preload", "linked"], required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--toru-tune", help="toru-tune, which reads the metric:NAME facts' site metrics")
    a = ap.parse_args()

    run_dir = tempfile.mkdtemp(prefix="toru-tune-calls-")
    try:
        env = dict(os.environ)
        env["TORU_TUNE_DIR"] = run_dir
        env["TORU_TUNE_TRACE"] = "0"
        env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        cmd = [a.mpiexec, "-n", str(a.np), "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if a.mode == "preload":
            cmd += ["-x", "LD_PRELOAD=" + a.lib]
        cmd += ["-x", "TORU_TUNE_DIR", "-x", "TORU_TUNE_TRACE", a.exe, run_dir]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            print(f"FAIL: the program exited with {r.returncode}")
            return 1
        with open(os.path.join(run_dir, "profile.json")) as f:
            profile = json.load(f)

        calls = collections.defaultdict(lambda: [0] * a.np)
        nbytes = collections.defaultdict(lambda: [0] * a.np)
        partners = collections.defaultdict(collections.Counter)
        metric_facts = collections.defaultdict(lambda: [0, 0])  # metric -> [calls, bytes] over ranks
        files = sorted(glob.glob(os.path.join(run_dir, "expect.*")))
        if len(files) != a.np:
            print(f"FAIL: {len(files)} expect files for {a.np} ranks")
            return 1
        for path in files:
            rank = int(path.rsplit(".", 1)[1])
            with open(path) as f:
                for line in f:
                    fn, c, b, p, pb = line.split()
                    if fn.startswith("metric:"):
                        metric_facts[fn[len("metric:"):]][0] += int(c)
                        metric_facts[fn[len("metric:"):]][1] += int(b)
                        continue
                    calls[fn][rank] += int(c)
                    nbytes[fn][rank] += int(b)
                    if int(p) >= 0:
                        partners[fn][int(p)] += int(pb)

        got_calls = collections.defaultdict(lambda: [0] * a.np)
        got_bytes = collections.defaultdict(lambda: [0] * a.np)
        got_partners = collections.defaultdict(collections.Counter)
        for s in profile["sites"] + profile["io_sites"]:
            fn = s["function"]
            for r_ in range(a.np):
                got_calls[fn][r_] += int(s["calls"][r_])
                got_bytes[fn][r_] += int(s["bytes"][r_])
            for p, b in s["partners"].items():
                got_partners[fn][int(p)] += int(b)

        ok = True
        for fn in sorted(calls):
            want = (calls[fn], nbytes[fn], dict(partners[fn]))
            got = (got_calls[fn], got_bytes[fn], dict(got_partners[fn]))
            # Zero-byte partners must be present too: compare key sets, not only sums.
            good = want[0] == got[0] and want[1] == got[1] and want[2] == got[2]
            print(f"{'ok  ' if good else 'FAIL'} {fn}: calls {got[0]} bytes {got[1]} partners {got[2]}"
                  + ("" if good else f"  (expected calls {want[0]} bytes {want[1]} partners {want[2]})"))
            ok &= good
        if metric_facts:
            ok &= check_metrics(a.toru_tune, run_dir, metric_facts)
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


# The time the shim counts in each class per rank (profile "ranks"), which the sites of that class
# must add up to: the time follows the calls.
RANK_TIME = {"is_collective": "mpi_coll", "is_p2p": "mpi_p2p"}


def check_metrics(toru_tune, run_dir, facts):
    """The site metrics through the rules engine: a rule that holds at every site reports each
    site's metrics as its evidence (toru-tune advise --json with that rule alone). Besides calls
    and bytes, a class's sites must hold the time the ranks spent in it (RANK_TIME)."""
    if not toru_tune:
        print("FAIL: the program states metric facts; --toru-tune is needed to check them")
        return False
    rules = os.path.join(run_dir, "rules")
    os.makedirs(rules)
    with open(os.path.join(rules, "sites.json"), "w") as f:
        json.dump({"rules": [{"id": "site", "scope": "site", "condition": "calls >= 0", "diagnosis": "{function}",
                              "evidence": ["function", "calls", "bytes", "time", *sorted(facts)]}]}, f)
    r = subprocess.run([toru_tune, "advise", run_dir, "--rules", rules, "--no-builtin", "--json"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        print(f"FAIL: toru-tune advise exited with {r.returncode}: {r.stderr}")
        return False
    sites = [f["evidence"] for f in json.loads(r.stdout)["findings"]]
    with open(os.path.join(run_dir, "profile.json")) as f:
        ranks = json.load(f)["ranks"]
    ok = True
    for metric in sorted(facts):
        mine = [s for s in sites if s[metric] == 1]
        got = [int(sum(s["calls"] for s in mine)), int(sum(s["bytes"] for s in mine))]
        good = got == facts[metric]
        names = sorted({s["function"] for s in mine})
        print(f"{'ok  ' if good else 'FAIL'} metric {metric}: calls {got[0]} bytes {got[1]} over {names}"
              + ("" if good else f"  (expected calls {facts[metric][0]} bytes {facts[metric][1]})"))
        ok &= good
        if metric in RANK_TIME:
            time = sum(s["time"] for s in mine)
            want = sum(r_[RANK_TIME[metric]] for r_ in ranks)
            good = math.isclose(time, want, rel_tol=1e-9, abs_tol=1e-12)
            print(f"{'ok  ' if good else 'FAIL'} metric {metric}: time {time:.9f} s"
                  + (f" = ranks' {RANK_TIME[metric]}" if good else f"  (ranks' {RANK_TIME[metric]}: {want:.9f} s)"))
            ok &= good
    return ok


if __name__ == "__main__":
    sys.exit(main())
