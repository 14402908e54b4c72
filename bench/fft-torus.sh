#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru's FFTs against FFTW-MPI on the emulated torus (../shared/testbeds/torus-netns.sh): one rank
# per network namespace, links shaped by tbf, the plans told the torus through TORU_TORUS. Runs
# toru-fft-bench once on the testbed (toru default, toru without overlap, FFTW-MPI, all on the same
# data) and once more with TORU_FFT_OVERLAP=force (the overlapped plan whatever the model says), then
# prints per row the times, toru's % of the FFT ceiling (k all-to-alls at the torus bound T_min,
# from `toru-fft-bench --simulate` on the same torus) and the speed-up over FFTW-MPI. Not a test.
#
#   bench/fft-torus.sh BUILD_DIR                 # brings the torus up, runs, tears it down
#
# Environment: TORUS_DIMS="2 2 4", RATE_X/RATE_Y/RATE_Z (default 20mbit/20mbit/10mbit: 1/10 of the
# testbed's default rates, so that the links and not the 2-core host are the limit),
# TORUS_PREFIX=f13t, FFT_TORUS_N3="128 64", FFT_TORUS_N1="4194304 1048576", FFT_TORUS_REPS=3,
# FFT_TORUS_WARMUP=1, FFT_TORUS_DECOMP=auto (or slab, pencil), FFT_TORUS_FORCED=1 (0: skip the
# forced-overlap run), FFT_TORUS_KEEP=1 (leave the namespaces up), FFT_TORUS_OUT=DIR (JSON kept there),
# FFT_TORUS_TRACE=1 (the default run records toru's per-chunk events, summarised by
# bench/fft-trace-summary.py), FFT_TORUS_VARIANTS="name:VAR=value ..." (one more run per entry with
# -x VAR=value, e.g. "direct:TORU_ALLTOALL_ALGORITHM=direct"; its toru times printed as rows),
# FFT_TORUS_ARGS (more toru-fft-bench arguments for every run, e.g. --measure).
# Every timed run holds /tmp/toru-bench.lock (flock), so that no other benchmark shares the host;
# do not wrap the script in that flock yourself: it would wait on itself.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -lt 1 ]] && exit 2 || exit 0
fi
build=$1
exe=$build/apps/toru-fft-bench/toru-fft-bench
[[ -x $exe ]] || { echo "fft-torus.sh: $exe: not found or not executable (build target toru-fft-bench)" >&2; exit 2; }
exe=$(realpath "$exe")
here=$(cd "$(dirname "$0")" && pwd)
testbed=${TORUS_NETNS:-$here/../../shared/testbeds/torus-netns.sh}
[[ -f $testbed ]] || { echo "fft-torus.sh: torus-netns.sh not found (set TORUS_NETNS)" >&2; exit 2; }

export TORUS_DIMS=${TORUS_DIMS:-"2 2 4"} TORUS_PREFIX=${TORUS_PREFIX:-f13t}
export RATE_X=${RATE_X:-20mbit} RATE_Y=${RATE_Y:-20mbit} RATE_Z=${RATE_Z:-10mbit}
export TORUS_IPERF=0 TORUS_MPI_TIMEOUT=${TORUS_MPI_TIMEOUT:-1500}
n3=${FFT_TORUS_N3:-"128 64"} n1=${FFT_TORUS_N1:-"4194304 1048576"}
reps=${FFT_TORUS_REPS:-3} warmup=${FFT_TORUS_WARMUP:-1} decomp=${FFT_TORUS_DECOMP:-auto}
out=${FFT_TORUS_OUT:-$(mktemp -d /tmp/fft-torus.XXXXXX)}
mkdir -p "$out"

# The torus spec toru reads: each axis with its link rate (tc's mbit = 10^6 bit/s = toru's Mb/s).
read -r -a dims <<<"$TORUS_DIMS"
rates=("$RATE_X" "$RATE_Y" "$RATE_Z")
spec=""
for i in 0 1 2; do
  r=${rates[$i]%mbit}
  spec+="${spec:+x}${dims[$i]}[bw=${r}Mb/s]"
done
echo "fft-torus.sh: torus $spec, $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"

cleanup() { [[ ${FFT_TORUS_KEEP:-0} == 1 ]] || bash "$testbed" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
bash "$testbed" up >/dev/null

args=(--n3 $n3 --n1 $n1 --reps "$reps" --warmup "$warmup" --decomposition "$decomp" --json ${FFT_TORUS_ARGS:-})
"$exe" --simulate --torus "$spec" --n3 $n3 --n1 $n1 --json >"$out/simulate.json"
run() {  # run NAME [mpirun options] [-- extra toru-fft-bench arguments]
  local name=$1
  shift
  local mpi=() extra=()
  while (($#)); do
    [[ $1 == -- ]] && { shift; extra=("$@"); break; }
    mpi+=("$1")
    shift
  done
  echo "fft-torus.sh: $name: start $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  flock /tmp/toru-bench.lock bash "$testbed" run -x TORU_TORUS="$spec" "${mpi[@]}" "$exe" "${args[@]}" "${extra[@]}" \
    >"$out/$name.raw"
  echo "fft-torus.sh: $name: end $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  # mpirun's and the testbed's own lines around the JSON array.
  sed -n '/^\[/,/^\]/p' "$out/$name.raw" >"$out/$name.json"
}
if [[ ${FFT_TORUS_TRACE:-0} == 1 ]]; then
  mkdir -p "$out/trace"
  run default -- --trace "$out/trace"
else
  run default
fi
[[ ${FFT_TORUS_FORCED:-1} == 1 ]] && run forced -x TORU_FFT_OVERLAP=force
for v in ${FFT_TORUS_VARIANTS:-}; do
  run "variant-${v%%:*}" -x "${v#*:}"
done

python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
sim = {(r["kind"], round(r["n"])): r for r in json.load(open(os.path.join(out, "simulate.json")))}
forced = {}
if os.path.exists(os.path.join(out, "forced.json")):
    forced = {(r["kind"], str(r["n"])): r for r in json.load(open(os.path.join(out, "forced.json")))}
def label(r):
    if r["kind"] != "1d":
        return f"3D {r['n']} {r.get('decomposition', '')}"
    p = round(r["points"])
    return f"1D 2^{p.bit_length() - 1}" if p & (p - 1) == 0 else f"1D {p}"
print(f"{'transform':<16} {'toru':>8} {'no ovl':>8} {'forced':>8} {'FFTW-MPI':>9} {'% ceil':>7} {'x FFTW':>7} {'noise':>6} "
      f"{'% ceil, not after FFTW-MPI (calls)':>34}  strategy")
for r in json.load(open(os.path.join(out, "default.json"))):
    key, k = (("1d", round(r["points"])), 3) if r["kind"] == "1d" else (("3d-slab", round(r["points"])), 2)
    name = label(r)
    # Pencils exchange in rows and columns of the grid, not over the whole torus: no slab ceiling.
    s = sim.get(key) if r.get("decomposition", "slab") == "slab" else None
    ceiling = k * s["alltoall_bound_s"] if s else float("nan")
    f = forced.get((r["kind"], str(r["n"])))
    ft = f"{f['toru_median_s']:8.3f}" if f else f"{'-':>8}"
    alone = r.get("toru_not_after_fftw_median_s")
    na = (f"{100 * ceiling / alone:6.1f}% ({r['toru_not_after_fftw_calls']} of {r['toru_calls']})"
          if alone else "-")
    print(f"{name:<16} {r['toru_median_s']:8.3f} {r['toru_no_overlap_median_s']:8.3f} {ft} "
          f"{r['fftw_mpi_median_s']:9.3f} {100 * ceiling / r['toru_median_s']:6.1f}% "
          f"{r['fftw_mpi_median_s'] / r['toru_median_s']:6.2f}x {100 * r.get('noise_floor', float('nan')):5.1f}% "
          f"{na:>34}  {r['strategy']}"
          + (f" | forced: {f['strategy']}" if f else ""))
for name in sorted(os.listdir(out)):
    if not (name.startswith("variant-") and name.endswith(".json")):
        continue
    for r in json.load(open(os.path.join(out, name))):
        print(f"{label(r):<16} {name[8:-5]}: toru {r['toru_median_s']:.3f} s ({r['strategy']}), no overlap "
              f"{r['toru_no_overlap_median_s']:.3f} s ({r['no_overlap_strategy']}), FFTW-MPI {r['fftw_mpi_median_s']:.3f} s")
print(f"(JSON in {out}; % ceil = k all-to-alls at T_min / toru's median, k = 3 for 1D, 2 for slabs; none for pencils;"
      " noise = the same toru plan timed twice in the run; not after FFTW-MPI: the median of that plan's calls,"
      " both timings, that did not follow FFTW-MPI's, whose MPI_Alltoall leaves the TCP connections lossy)")
EOF
if [[ ${FFT_TORUS_TRACE:-0} == 1 ]]; then
  for p in $n3; do [[ $p == 0 ]] || python3 "$here/fft-trace-summary.py" "$out/trace" --points $((p * p * p)) || true; done
  for p in $n1; do [[ $p == 0 ]] || python3 "$here/fft-trace-summary.py" "$out/trace" --points "$p" || true; done
fi
