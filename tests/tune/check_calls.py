#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs one coverage program (tests/tune/calls/) under libtoru_tune_pmpi (LD_PRELOAD or linked) and
checks the profile the shim wrote against what the program says it did (its expect.<rank> files):
for every MPI function named there, the calls and bytes of each rank summed over the function's
call sites, and the bytes per partner summed over ranks, must be exactly the program's."""
import argparse
import collections
import glob
import json
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
        files = sorted(glob.glob(os.path.join(run_dir, "expect.*")))
        if len(files) != a.np:
            print(f"FAIL: {len(files)} expect files for {a.np} ranks")
            return 1
        for path in files:
            rank = int(path.rsplit(".", 1)[1])
            with open(path) as f:
                for line in f:
                    fn, c, b, p, pb = line.split()
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
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
