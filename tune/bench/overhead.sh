#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The overhead of libtoru_tune_pmpi.so on toru-dns and toru-fft-bench (docs/history/benchmarks-2026-12.md, tune section):
# each program run off, with profiling (TORU_TUNE_TRACE=0) and with tracing (OTF2 written at
# MPI_Finalize), in rotating order, ROUNDS times; the figure of each mode is its fastest run
# (on a shared machine noise only adds time). Time = the program's own measure: toru-dns's median
# time per step, toru-fft-bench's median toru 3D transform (max over ranks).
#   tune/bench/overhead.sh [BUILD_DIR] [RANKS] [ROUNDS]
set -euo pipefail
build=${1:-build}
ranks=${2:-4}
rounds=${3:-3}
lib=$(realpath "$build/tune/libtoru_tune_pmpi.so")
dns=$build/apps/toru-dns/toru-dns
fftb=$build/apps/toru-fft-bench/toru-fft-bench
out=$(mktemp -d /tmp/toru-tune-overhead.XXXXXX)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

run() {  # mode program -> seconds
  local mode=$1 prog=$2 env=()
  case $mode in
    off) env=() ;;
    profile) env=(-x LD_PRELOAD="$lib" -x TORU_TUNE_DIR="$out/$prog-profile" -x TORU_TUNE_TRACE=0) ;;
    trace) env=(-x LD_PRELOAD="$lib" -x TORU_TUNE_DIR="$out/$prog-trace" -x TORU_TUNE_TRACE=1) ;;
  esac
  case $prog in
    dns) mpiexec -n "$ranks" --oversubscribe "${root[@]}" "${env[@]}" "$dns" --n 64 --re 1600 --steps 20 \
           --out "$out/dns-$mode" --json --quiet 2>/dev/null |
           python3 -c 'import json,sys; print(json.load(sys.stdin)["time_per_step"])' ;;
    fft) mpiexec -n "$ranks" --oversubscribe "${root[@]}" "${env[@]}" "$fftb" --n3 64 --n1 65536 --reps 15 --json \
           2>/dev/null |
           python3 -c 'import json,sys; j=json.load(sys.stdin); r=j["results"] if isinstance(j,dict) else j; print([x for x in r if x["kind"]=="3d"][0]["toru_median_s"])' ;;
  esac
}

for prog in dns fft; do
  declare -A best=()
  for r in $(seq "$rounds"); do
    for mode in off profile trace; do
      t=$(run $mode $prog)
      if [ -z "${best[$mode]:-}" ] || python3 -c "import sys; sys.exit(0 if $t < ${best[$mode]} else 1)"; then best[$mode]=$t; fi
    done
  done
  python3 - "$prog" "${best[off]}" "${best[profile]}" "${best[trace]}" <<'PY'
import sys
prog, off, prof, tr = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {prog} | {off*1e3:.2f} ms | {prof*1e3:.2f} ms | {100*(prof/off-1):+.1f}% | {tr*1e3:.2f} ms | {100*(tr/off-1):+.1f}% |")
PY
  unset best
done
rm -rf "$out"
