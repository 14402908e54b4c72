#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The tuner demonstrations of docs/history/benchmarks-2026-12.md (tune section): toru's FFT and toru-dns, each
# started from a deliberately bad configuration, against the exhaustive best.
#   tune/bench/demo.sh [BUILD_DIR] [RANKS]
set -euo pipefail
build=${1:-build}
ranks=${2:-4}
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
out=$(mktemp -d /tmp/toru-tune-demo.XXXXXX)
mpiexec -n "$ranks" --oversubscribe "${root[@]}" "$build/tune/tune_fft_demo" --n 64 --reps 5 \
  --start decomposition=pencil,overlap=true,chunks=8,algorithm=pairwise --wisdom "$out/fft.json"
mpiexec -n "$ranks" --oversubscribe "${root[@]}" "$build/apps/toru-dns/tune_dns_demo" --n 48 --reps 5 \
  --start backend=toru,decomposition=pencil,algorithm=pairwise,chunks=4 --wisdom "$out/dns.json"
rm -rf "$out"
