#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs one validation program under libtoru_tune_pmpi (LD_PRELOAD or linked), then `toru-tune advise
--json`, and checks the diagnosis: every INJECT(rule) marker of the source must be named by a finding
of that rule whose location is the marker's file:line; a control (no marker) must raise nothing.
INJECT(rule, lines=N) marks a bottleneck spread over N lines (a write loop and its fsync: which of
the two costs most depends on the machine's disk), and a finding at any of them names it.
With --trace, also checks the OTF2 trace with otf2-print and the HTML report."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def markers(source):
    found = []
    with open(source) as f:
        for i, line in enumerate(f, 1):
            for m in re.finditer(r"INJECT\((\w+)(?:,\s*lines=(\d+))?\)", line):
                span = int(m.group(2) or 1)
                found.append((m.group(1), [f"{os.path.basename(source)}:{k}" for k in range(i, i + span)]))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mode", choices=["preload", "linked"], required=True)
    ap.add_argument("--lib", required=True, help="libtoru_tune_pmpi.so")
    ap.add_argument("--toru-tune", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--expect-region", action="append", default=[], help="a toru region the profile must hold")
    ap.add_argument("--expect-diagnosis", action="append", default=[],
                    help="a regular expression some finding's diagnosis must match (who and where)")
    a = ap.parse_args()

    expected = markers(a.source)
    run_dir = tempfile.mkdtemp(prefix="toru-tune-validate-")
    try:
        env = dict(os.environ)
        env["TORU_TUNE_DIR"] = run_dir
        env["TORU_TUNE_TRACE"] = "1" if a.trace else "0"
        env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        cmd = [a.mpiexec, "-n", str(a.np), "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if a.mode == "preload":
            # On the ranks only (-x NAME=VALUE), not on mpiexec itself.
            cmd += ["-x", "LD_PRELOAD=" + a.lib]
        cmd += ["-x", "TORU_TUNE_DIR", "-x", "TORU_TUNE_TRACE", a.exe, run_dir]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            print(f"FAIL: the program exited with {r.returncode}")
            return 1
        if not os.path.exists(os.path.join(run_dir, "profile.json")):
            print("FAIL: no profile.json: the tool did not run")
            return 1
        adv = subprocess.run([a.toru_tune, "advise", run_dir, "--json"], capture_output=True, text=True)
        if adv.returncode != 0:
            print("FAIL: toru-tune advise:", adv.stderr)
            return 1
        findings = json.loads(adv.stdout)["findings"]
        for f in findings:
            print(f"finding: {f['rule']} at {f['location']}: {f['diagnosis']}")
        ok = True
        for rule, locs in expected:
            loc = locs[0] if len(locs) == 1 else f"{locs[0]}-{locs[-1].split(':')[1]}"
            hit = [f for f in findings if f["rule"] == rule and
                   any(f["location"] == l or f["location"].startswith(l + " ") for l in locs)]
            if hit:
                print(f"found: {rule} at {loc}")
            else:
                print(f"FAIL: injected {rule} at {loc} not diagnosed")
                ok = False
        for pattern in a.expect_diagnosis:
            if any(re.search(pattern, f["diagnosis"]) for f in findings):
                print(f"found: a diagnosis matching {pattern!r}")
            else:
                print(f"FAIL: no diagnosis matches {pattern!r}")
                ok = False
        if expected and findings and findings[0].get("root_cause") is False and any(
                f.get("root_cause") for f in findings):
            print("FAIL: a root cause is listed after a symptom")
            ok = False
        if not expected and findings:
            print(f"FAIL: control program, {len(findings)} false positive(s)")
            ok = False
        profile = json.load(open(os.path.join(run_dir, "profile.json")))
        for reg in a.expect_region:
            if not any(r["name"] == reg for r in profile["regions"]):
                print(f"FAIL: toru region {reg} missing from the profile (regions: {[r['name'] for r in profile['regions']]})")
                ok = False
        if profile["nranks"] != a.np:
            print(f"FAIL: profile has {profile['nranks']} ranks, expected {a.np}")
            ok = False
        if a.trace:
            html = open(os.path.join(run_dir, "report.html")).read()
            if "<svg" not in html or "http://" in html.replace("http://www.w3.org/2000/svg", ""):
                print("FAIL: report.html lacks inline plots or loads network resources")
                ok = False
            otf2 = os.path.join(run_dir, "trace", "traces.otf2")
            p = subprocess.run(["otf2-print", otf2], capture_output=True, text=True)
            if p.returncode != 0:
                print("FAIL: otf2-print:", p.stderr[:2000])
                ok = False
            else:
                enters = len(re.findall(r"^ENTER", p.stdout, re.M))
                leaves = len(re.findall(r"^LEAVE", p.stdout, re.M))
                if enters == 0 or enters != leaves or "MPI_" not in p.stdout:
                    print(f"FAIL: trace has {enters} ENTER and {leaves} LEAVE records")
                    ok = False
                else:
                    print(f"trace: {enters} ENTER/LEAVE pairs")
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
