#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The end-to-end overhead of libtoru_tune_pmpi.so on real MPI applications from Debian packages
# (docs/tune.md, "Overhead"): the balanced controls of rootcause.sh, run without the shim (off) and
# with it in each of MODES. A difference of 2 % has to show on a loaded 2-core machine whose run
# times wander by more than that, so runs alternate: one round runs every mode once, in an order
# that rotates each round (slow spells and drift hit each mode alike, none always first), and a
# mode's overhead in a round is its time over that round's off time. The median of these ratios gets
# a distribution-free 95 % confidence interval (binomial order statistics); rounds go on until every
# interval's half-width is under TARGET. Times are wall clock around mpiexec: start-up, MPI_Finalize's
# analysis and the writing of profile and trace are all in.
set -uo pipefail
usage() {
  cat <<'EOF'
usage: tune/bench/overhead_apps.sh [--json FILE] [BUILD_DIR] [CASES...]
  BUILD_DIR  toru build tree holding tune/libtoru_tune_pmpi.so (default: build)
  CASES      lammps qe gromacs (default: all three)
  --json F   also write the results as JSON to F (or env JSON=F)
environment: MODES="profile trace" (profile: TORU_TUNE_TRACE=0; trace: OTF2 written too;
    floor: a second run without the shim, so its "overhead" is the noise floor of the same run)
  MIN_ROUNDS=6 MAX_ROUNDS=30 TARGET=0.01 (stop when every mode's CI half-width < TARGET)
  RANKS=2  STEPS= (LAMMPS and GROMACS steps, default 400 and the .mdp's 2000; QE runs its SCF to convergence)
needs: apt-get install lammps quantum-espresso gromacs (gmx_mpi: gromacs-openmpi on older Debian)
EOF
}
cmdline=$(printf ' %q' "$0" "$@")
json=${JSON:-}
args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --json) [ $# -ge 2 ] || { usage >&2; exit 2; }; json=$2; shift 2 ;;
    --json=*) json=${1#--json=}; shift ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]}"
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
shift || true
cases=("$@")
[ $# -eq 0 ] && cases=(lammps qe gromacs)
export MODES=${MODES:-profile trace} MIN_ROUNDS=${MIN_ROUNDS:-6} MAX_ROUNDS=${MAX_ROUNDS:-30} TARGET=${TARGET:-0.01}
export RANKS=${RANKS:-2}
steps=${STEPS:-}
for m in $MODES; do
  case $m in profile | trace | floor) ;; *) echo "unknown mode $m in MODES (profile, trace, floor)" >&2; exit 2 ;; esac
done
shim=$(realpath -e "$build/tune/libtoru_tune_pmpi.so" 2>/dev/null) ||
  { echo "no $build/tune/libtoru_tune_pmpi.so: build the target toru_tune_preload first" >&2; exit 2; }
need() {  # need PROGRAM PACKAGE: fail early, naming the package, rather than after minutes of other cases
  command -v "$1" > /dev/null || { echo "$1 not found: apt-get install $2" >&2; exit 2; }
}
for c in "${cases[@]}"; do
  case $c in
    lammps) need lmp lammps ;;
    qe) need pw.x quantum-espresso ;;
    gromacs) need gmx gromacs; need gmx_mpi "gromacs (gromacs-openmpi on older Debian)" ;;
    *) echo "unknown case $c (lammps, qe, gromacs)" >&2; exit 2 ;;
  esac
done
# One thread per rank, 2 ranks on 2 cores; GROMACS's output files are rewritten each run, not backed up
# (it refuses to run after 99 backups).
export OMP_NUM_THREADS=1 GMX_MAXBACKUP=-1
# shellcheck source-path=SCRIPTDIR source=apps_common.sh
source "$here/apps_common.sh"  # the Open MPI settings, root, qe_inputs, gmx_inputs
out=$(mktemp -d /tmp/toru-overhead-apps.XXXXXX)
results=$out/results.jsonl
trap 'rm -rf "$out"; exit 130' INT TERM  # an interrupted run leaves no run directories behind
status=0

# measure CASE WORKDIR -- COMMAND...: the rounds of one case; its result is appended to $results.
measure() {
  local name=$1 dir=$2
  shift 3
  python3 - "$name" "$dir" "$out" "$shim" "$results" "${root[@]}" -- "$@" <<'PY' || status=1
import json, math, os, shutil, statistics, subprocess, sys, time
name, work, out, shim, results, *rest = sys.argv[1:]
root, app = rest[:rest.index("--")], rest[rest.index("--") + 1:]
modes = os.environ["MODES"].split()
min_rounds, max_rounds, target = int(os.environ["MIN_ROUNDS"]), int(os.environ["MAX_ROUNDS"]), float(os.environ["TARGET"])
log = os.path.join(out, name + ".log")

def run(mode, tag):  # seconds, end to end; exits on a failed run or a profiled run without its files
    cmd, rundir = ["mpiexec", "-n", os.environ["RANKS"], "--oversubscribe", *root], None
    if mode not in ("off", "floor"):
        rundir = os.path.join(out, f"{name}-{mode}-{tag}")
        cmd += ["-x", "LD_PRELOAD=" + shim, "-x", "TORU_TUNE_DIR=" + rundir, "-x", "TORU_TUNE_TRACE=" + str(int(mode == "trace"))]
    with open(log, "wb") as f:
        t0 = time.perf_counter()
        rc = subprocess.run(cmd + app, cwd=work, stdout=f, stderr=subprocess.STDOUT).returncode
        t = time.perf_counter() - t0
    want = [] if rundir is None else ["profile.json"] + (["trace/traces.otf2"] if mode == "trace" else [])
    missing = [w for w in want if not os.path.exists(os.path.join(rundir, w))]
    if rc or missing:  # a run that failed or wrote nothing is not a fast run: stop, keep the evidence
        sys.exit(f"FAIL {name} {mode} run {tag}: " + (f"exit {rc}" if rc else f"no {', '.join(missing)} in {rundir}") + f"; log {log}")
    if rundir:
        shutil.rmtree(rundir)  # checked; MAX_ROUNDS runs' traces would fill /tmp
    return t

def ci(x):  # sorted ratios -> (lo, hi, coverage): [x(k), x(n+1-k)] covers the median with 1 - 2 P(B < k), B ~ Bin(n, 1/2)
    n, k, cover = len(x), 1, 1 - 2 / 2 ** len(x)  # under 6 rounds nothing reaches 95 %: the range, and its coverage
    for j in range(2, n // 2 + 1):
        c = 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2 ** n
        if c < 0.95:
            break
        k, cover = j, c
    return x[k - 1], x[n - k], cover

order = ["off"] + modes
print(f"{name}: warm-up round, not counted (the first runs read the binaries and the shim from disk)", file=sys.stderr, flush=True)
for m in order:
    run(m, "warmup")
times = {m: [] for m in order}
while True:
    r = len(times["off"])
    for m in order[r % len(order):] + order[:r % len(order)]:
        times[m].append(run(m, r))
    stats = {}
    for m in modes:
        ratios = [t / o - 1 for t, o in zip(times[m], times["off"])]
        lo, hi, cover = ci(sorted(ratios))
        stats[m] = dict(overhead=ratios, median=statistics.median(ratios), ci=[lo, hi], coverage=cover, half_width=(hi - lo) / 2,
                        median_s=statistics.median(times[m]), min_s=min(times[m]), times=times[m])
    # the floor only reports the noise: whether the shim's overhead is resolved decides the stop
    done = all(s["coverage"] >= 0.95 and s["half_width"] < target for m, s in stats.items() if m != "floor")
    print(f"{name} round {r + 1}: off {times['off'][-1]:.2f} s, " + ", ".join(
        f"{m} {times[m][-1]:.2f} s, median {100 * s['median']:+.2f}% " + (f"±{100 * s['half_width']:.2f}%" if s["coverage"] >= 0.95 else "(no 95% CI yet)")
        for m, s in stats.items()),
        file=sys.stderr, flush=True)
    if (r + 1 >= min_rounds and done) or r + 1 >= max_rounds:
        break
res = dict(case=name, command=app, rounds=r + 1, target_reached=done,
           off=dict(median_s=statistics.median(times["off"]), min_s=min(times["off"]), times=times["off"]), modes=stats)
with open(results, "a") as f:
    f.write(json.dumps(res) + "\n")
PY
}

echo "inputs and logs: $out" >&2
for c in "${cases[@]}"; do
  case $c in
    lammps)  # LJ, 32,000 atoms (LAMMPS's bench/in.lj system, from rootcause.sh's input with a 20^3-cell box)
      mkdir -p "$out/lmp"
      measure lammps "$out/lmp" -- lmp -in "$apps_inputs/lammps_melt.in" -var ny 20 -var nz 20 -var steps "${steps:-400}" \
        -log none -screen none ;;
    qe)  # pw.x, bulk Si, 4 k-points in 2 pools: rootcause.sh's control
      qe_inputs "$out/qe"
      measure qe "$out/qe" -- pw.x -nk "$RANKS" -in "$apps_inputs/qe_si_k4.in" ;;
    gromacs)  # SPC/E water filling the box, cut in 2 along x: rootcause.sh's control
      gmx_inputs "$out/gmx" full || { echo "FAIL gromacs: preparing the inputs, see $out/gmx/prepare.log" >&2; status=1; continue; }
      nsteps=()
      [ -n "$steps" ] && nsteps=(-nsteps "$steps")
      measure gromacs "$out/gmx" -- gmx_mpi -quiet mdrun -s full.tpr -deffnm full "${nsteps[@]}" \
        -dd "$RANKS" 1 1 -dlb no -ntomp 1 -nb cpu -pin off ;;
  esac
done

# The table, the command that made it, and the JSON.
knobs="MODES='$MODES' MIN_ROUNDS=$MIN_ROUNDS MAX_ROUNDS=$MAX_ROUNDS TARGET=$TARGET RANKS=$RANKS${steps:+ STEPS=$steps}"
[ -s "$results" ] && python3 - "$results" "$knobs$cmdline" "$json" <<'PY'
import json, os, platform, sys, time
results, command, out = sys.argv[1:]
cases = [json.loads(l) for l in open(results)]
pct = lambda x: f"{100 * x:+.2f}%"
print("| case | mode | rounds | off median s | on median s | overhead median | 95% CI | off min s | on min s |")
print("|---|---|---|---|---|---|---|---|---|")
for c in cases:
    for m, s in c["modes"].items():
        note = "" if s["coverage"] >= 0.95 else f" (covers {100 * s['coverage']:.0f}% only)"
        print(f"| {c['case']} | {m} | {c['rounds']} | {c['off']['median_s']:.3f} | {s['median_s']:.3f} | {pct(s['median'])} | "
              f"[{pct(s['ci'][0])}, {pct(s['ci'][1])}] ±{100 * s['half_width']:.2f}%{note} | {c['off']['min_s']:.3f} | {s['min_s']:.3f} |")
target = float(os.environ["TARGET"])
missed = [f"{c['case']} ({c['rounds']} rounds)" for c in cases if not c["target_reached"]]
if missed:
    print(f"\ntarget ±{100 * target:.2f}% not reached: {', '.join(missed)}")
print(f"\ncommand: {command}\n({platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M %Z')}, load {os.getloadavg()[0]:.2f})")
if out:
    json.dump(dict(command=command, ranks=int(os.environ["RANKS"]), target=target, cases=cases), open(out, "w"), indent=1)
PY
if [ $status = 0 ]; then rm -rf "$out"; else echo "failed; inputs and logs kept in $out" >&2; fi
exit $status
