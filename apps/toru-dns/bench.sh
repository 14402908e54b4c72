#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The toru-dns performance table of docs/history/benchmarks-2026-12.md: time per step (median over steps of the
# max over ranks) and its FFT / pointwise shares, toru's FFT against FFTW-MPI (--fft fftw-mpi) on
# the same solver, Taylor-Green at Re 1600.
#   apps/toru-dns/bench.sh [BUILD_DIR] [SIZES] [RANKS] [STEPS]
#   apps/toru-dns/bench.sh build "64 128" "1 2 4" 20
# Runs each configuration twice in alternating order (toru, FFTW-MPI, FFTW-MPI, toru) and reports
# the faster run of each: on a shared machine noise only ever adds time.
set -euo pipefail
build=${1:-build}
sizes=${2:-"64 128"}
ranks=${3:-"1 2 4"}
steps=${4:-20}
dns=$build/apps/toru-dns/toru-dns
out=$(mktemp -d /tmp/toru-dns-bench.XXXXXX)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

one() {  # n ranks fft -> time_per_step fft_share decomposition
  mpiexec -n "$2" --oversubscribe "${root[@]}" "$dns" --n "$1" --re 1600 --steps "$steps" --fft "$3" \
    --out "$out/run" --json --quiet |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["time_per_step"], j["fft_share"], j["decomposition"], "%dx%d" % tuple(j["grid"]))'
}
best() {  # the faster of two result lines
  awk '{ print }' <<<"$1
$2" | sort -g | head -1
}

echo "| n | ranks | toru layout | toru s/step | toru FFT share | FFTW-MPI s/step | FFTW-MPI FFT share | ratio toru/FFTW-MPI (step) | ratio (FFT time) |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in $sizes; do
  for p in $ranks; do
    t1=$(one "$n" "$p" toru)
    f1=$(one "$n" "$p" fftw-mpi)
    f2=$(one "$n" "$p" fftw-mpi)
    t2=$(one "$n" "$p" toru)
    t=$(best "$t1" "$t2")
    f=$(best "$f1" "$f2")
    read -r ts tf tl tg <<<"$t"
    read -r fs ff _ _ <<<"$f"
    awk -v n="$n" -v p="$p" -v tl="$tl $tg" -v ts="$ts" -v tf="$tf" -v fs="$fs" -v ff="$ff" 'BEGIN {
      printf "| %s^3 | %s | %s | %.4f | %.0f%% | %.4f | %.0f%% | **%.2f** | %.2f |\n",
             n, p, tl, ts, 100 * tf, fs, 100 * ff, ts / fs, (ts * tf) / (fs * ff) }'
  done
done
rm -rf "$out"
