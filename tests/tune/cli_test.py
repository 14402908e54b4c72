#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""toru-tune's subcommands end to end on a small MPI program with one injected late sender:
`run` (preloads the tool, then advises: the finding at the marked line), `advise --json`, `report`
(a self-contained HTML file naming the finding), `rules` (every rule of tune/rules/*.json, read here
independently, and a user's rule directory alone with --no-builtin), and refused input.

Usage: cli_test.py TORU_TUNE PROGRAM PROGRAM_SOURCE RULES_DIR MPIEXEC [MPIEXEC FLAGS...]"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

toru_tune, program, source, rules_dir, *mpiexec = sys.argv[1:]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(*args, **kw):
    return subprocess.run([toru_tune, *args], capture_output=True, text=True, timeout=300, **kw)


# The marked line, found in the source as validate.py does.
with open(source) as f:
    marked = [i for i, line in enumerate(f, 1) if "INJECT(late_sender)" in line]
assert len(marked) == 1, marked
location = f"{os.path.basename(source)}:{marked[0]}"

work = tempfile.mkdtemp(prefix="toru-tune-cli-")
try:
    run_dir = os.path.join(work, "run")
    r = run("run", "--dir", run_dir, "--no-trace", "--", *mpiexec, "-n", "2", program, run_dir)
    check(r.returncode == 0, f"run: exit {r.returncode}: {r.stderr}")
    check(os.path.isfile(os.path.join(run_dir, "profile.json")), "run: no profile.json in --dir")
    check(re.search(r"^\S+: 2 ranks, [0-9.]+ s; [1-9][0-9]* finding\(s\)$", r.stdout, re.M) is not None,
          f"run: advice header: {r.stdout[:400]}")
    check(re.search(rf"^\[communication\] Late sender at {re.escape(location)}\b", r.stdout, re.M) is not None,
          f"run: no late sender at {location}: {r.stdout}")

    r = run("advise", run_dir, "--json")
    check(r.returncode == 0, f"advise --json: exit {r.returncode}: {r.stderr}")
    findings = json.loads(r.stdout)["findings"] if r.returncode == 0 else []
    hits = [f for f in findings if f["rule"] == "late_sender" and f["location"].startswith(location)]
    check(len(hits) == 1, f"advise --json: late_sender at {location}: {findings}")

    html = os.path.join(work, "report.html")
    r = run("report", run_dir, "-o", html)
    check(r.returncode == 0 and r.stdout.strip() == html, f"report: exit {r.returncode}, stdout {r.stdout!r}")
    text = open(html).read() if os.path.exists(html) else ""
    check(text.lstrip().lower().startswith("<!doctype html") or text.lstrip().lower().startswith("<html"),
          f"report: not HTML: {text[:100]!r}")
    check("Late sender" in text and location in text, "report: the finding or its location is missing")
    check(re.search(r"""(src|href)=["']https?://""", text) is None, "report: loads something from the network")
    r = run("report", run_dir)
    check(r.returncode == 0 and os.path.isfile(os.path.join(run_dir, "report.html")), "report: default path")

    # rules: every id of the database, each once.
    ids = []
    for path in sorted(glob.glob(os.path.join(rules_dir, "*.json"))):
        with open(path) as f:
            ids += [rule["id"] for rule in json.load(f)["rules"]]
    r = run("rules")
    check(r.returncode == 0, f"rules: exit {r.returncode}: {r.stderr}")
    listed = [line.split()[0] for line in r.stdout.splitlines() if line and not line.startswith(" ")]
    check(sorted(listed) == sorted(ids), f"rules: listed {sorted(listed)}, the database has {sorted(ids)}")

    mine = os.path.join(work, "myrules")
    os.makedirs(mine)
    with open(os.path.join(mine, "site.json"), "w") as f:
        json.dump({"rules": [{"id": "many_calls", "title": "Many calls", "category": "communication", "scope": "site",
                              "condition": "calls > 1000000", "severity": "calls",
                              "diagnosis": "{location} is called {calls} times.", "evidence": ["calls"]}]}, f)
    r = run("rules", "--no-builtin", "--rules", mine)
    check(r.returncode == 0, f"rules --no-builtin: exit {r.returncode}: {r.stderr}")
    check(re.match(r"many_calls\s+communication\s+site\s+\S*site\.json\n\s+when calls > 1000000\n$", r.stdout) is not None,
          f"rules --no-builtin --rules: {r.stdout!r}")

    for args, message in [(["advise", os.path.join(work, "nothing")], "RUN_DIR"),
                          (["rules", "--rules", os.path.join(work, "nothing")], "--rules: expected a directory"),
                          (["report", run_dir, "-o", os.path.join(work, "no", "such", "dir.html")], "-o: cannot write")]:
        r = run(*args)
        check(r.returncode != 0 and message in r.stderr, f"{args}: exit {r.returncode}, stderr {r.stderr.strip()}")
finally:
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print("\n".join("FAIL: " + f for f in failures), file=sys.stderr)
    sys.exit(1)
print("ok: toru-tune run, advise, report, rules")
