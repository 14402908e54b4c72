#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fft_bench_trace_np4: runs "$@" (toru-fft-bench --trace DIR on 4 ranks, a torus described and the
# indirect algorithm forced), then checks that every rank's trace holds the transform marks, the
# indirect algorithm's per-chunk phase marks and local FFT scopes that bench/fft-trace-summary.py reads.
dir=$1
shift
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$@" --trace "$dir" || exit 1
for r in 0 1 2 3; do
  f=$dir/trace.$r.csv
  for want in '^t_ns,thread,kind,name,detail,bytes,value$' ',mark,bench.transform,3d,4096,' \
    ',mark,comm.alltoall.a_done,' ',mark,comm.alltoall.b_done,' ',begin,fft.local_fft,'; do
    grep -q -- "$want" "$f" || { echo "$f: no line matching '$want'"; exit 1; }
  done
done
echo "traces of 4 ranks complete"
