#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru's FFTs against FFTW-MPI, R rounds of toru-fft-bench (same data, same flags, same run), one
# table row per (transform, ranks, output order, planner flag): median, min and max over rounds of
# the ratio toru/FFTW-MPI (< 1: toru faster), the noise floor (the same toru plan timed twice in the
# same run: median over rounds of |t1/t2 - 1|), toru's ratio with overlap forced off, and the
# strategy toru's planner chose. Not a test.
#
#   bench/fft-compare.sh BUILD_DIR [ROUNDS]          # ROUNDS defaults to 5
#   bench/fft-compare.sh --quick BUILD_DIR           # 3 rounds, 128^3 and 2^22 only, 3 reps
#
# Environment (each a space-separated list; defaults = the full protocol of docs/history/benchmarks-2026-12.md):
#   FFT_COMPARE_N3="128 256"  FFT_COMPARE_N1="4194304 16777216"  FFT_COMPARE_RANKS="2 4"
#   FFT_COMPARE_ORDERS="natural transposed"  FFT_COMPARE_FLAGS="estimate measure"
#   FFT_COMPARE_REPS=5  FFT_COMPARE_WARMUP=1  FFT_COMPARE_EXE=path/to/toru-fft-bench
#   FFT_COMPARE_CANDIDATES=1: also time every candidate of toru's strategy table (toru-fft-bench
#   --candidates, a rotation of its own) and print the choice's ratio to the best of them
#   FFT_COMPARE_OUT=DIR: keep every round's toru-fft-bench JSON there (default: a temporary folder)
# Wrap timed runs on a shared machine in flock /tmp/toru-bench.lock.
set -euo pipefail
quick=0
if [[ ${1:-} == --quick ]]; then
  quick=1
  shift
fi
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -lt 1 ]] && exit 2 || exit 0
fi
build=$1
rounds=${2:-$((quick ? 3 : 5))}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "fft-compare.sh: ROUNDS: expected a positive integer, got '$rounds'" >&2; exit 2; }
exe=${FFT_COMPARE_EXE:-$build/apps/toru-fft-bench/toru-fft-bench}
[[ -x $exe ]] || { echo "fft-compare.sh: $exe: not found or not executable (build target toru-fft-bench)" >&2; exit 2; }
if ((quick)); then
  n3=${FFT_COMPARE_N3:-128} n1=${FFT_COMPARE_N1:-4194304} reps=${FFT_COMPARE_REPS:-3}
else
  n3=${FFT_COMPARE_N3:-"128 256"} n1=${FFT_COMPARE_N1:-"4194304 16777216"} reps=${FFT_COMPARE_REPS:-5}
fi
ranks_list=${FFT_COMPARE_RANKS:-"2 4"}
orders=${FFT_COMPARE_ORDERS:-"natural transposed"}
flags=${FFT_COMPARE_FLAGS:-"estimate measure"}
warmup=${FFT_COMPARE_WARMUP:-1}
candidates=${FFT_COMPARE_CANDIDATES:-0}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpiexec --oversubscribe --bind-to none)
if [[ -n ${FFT_COMPARE_OUT:-} ]]; then
  out=$FFT_COMPARE_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

echo "# fft-compare: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), rounds $rounds, reps $reps (+$warmup warm-up), $(mpiexec --version 2>/dev/null | head -1), btl_vader_single_copy_mechanism=$OMPI_MCA_btl_vader_single_copy_mechanism"
for ((r = 0; r < rounds; r++)); do
  for p in $ranks_list; do
    for o in $orders; do
      for f in $flags; do
        args=(--reps "$reps" --warmup "$warmup" --json)
        [[ $o == transposed ]] && args+=(--transposed)
        [[ $f == measure ]] && args+=(--measure)
        [[ $candidates == 1 ]] && args+=(--candidates)
        n3a=() n1a=()
        for n in $n3; do n3a+=(--n3 "$n"); done
        for n in $n1; do n1a+=(--n1 "$n"); done
        ((${#n3a[@]})) || n3a=(--n3 0)
        ((${#n1a[@]})) || n1a=(--n1 0)
        if ! "${mpi[@]}" -n "$p" "$exe" "${n3a[@]}" "${n1a[@]}" "${args[@]}" >"$out/r$r-p$p-$o-$f.json" 2>"$out/err"; then
          echo "fft-compare.sh: toru-fft-bench failed (round $r, $p ranks, $o, $f):" >&2
          cat "$out/err" >&2
          exit 1
        fi
      done
    done
  done
done
echo "# uptime after: $(uptime)"
python3 - "$out" <<'PY'
import glob, json, os, re, statistics as st, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    m = re.match(r"r(\d+)-p(\d+)-(\w+)-(\w+)\.json", os.path.basename(path))
    text = open(path).read()
    data = json.loads(text[text.index("["):])
    for row in data:
        what = f"3D {row['n']}" if row["kind"] == "3d" else f"1D 2^{int(row['points']).bit_length() - 1}" \
            if int(row["points"]) & (int(row["points"]) - 1) == 0 else f"1D {row['n']}"
        key = (row["kind"], row["points"], what, int(m.group(2)), m.group(3), m.group(4))
        rows.setdefault(key, []).append(row)
cand = any("ratio_to_best_candidate" in r for v in rows.values() for r in v)
print("| transform | ranks | order | flag | toru/FFTW-MPI median (min-max) | noise floor | no-overlap/FFTW-MPI | toru s | FFTW-MPI s | strategy |"
      + (" choice/best candidate median (max) | best candidate |" if cand else ""))
print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if cand else ""))
for key in sorted(rows, key=lambda k: (k[0] != "3d", k[1], k[3], k[4], k[5])):
    rs = [r for r in rows[key] if r.get("ratio") is not None]
    if not rs:
        continue
    ratio = [r["ratio"] for r in rs]
    off = [r["toru_no_overlap_median_s"] / r["fftw_mpi_median_s"] for r in rs]
    noise = [r["noise_floor"] for r in rs if r.get("noise_floor") is not None]
    strat = sorted({r.get("strategy", "?") for r in rs})
    print(f"| {key[2]} | {key[3]} | {key[4]} | {key[5]} | **{st.median(ratio):.2f}** ({min(ratio):.2f}-{max(ratio):.2f}) | "
          f"{(f'{st.median(noise):.3f}' if noise else 'n/a')} | {st.median(off):.2f} | "
          f"{st.median(r['toru_median_s'] for r in rs):.4f} | {st.median(r['fftw_mpi_median_s'] for r in rs):.4f} | {'; '.join(strat)} |"
          + (f" {st.median(r['ratio_to_best_candidate'] for r in rs):.3f} ({max(r['ratio_to_best_candidate'] for r in rs):.3f}) | "
             f"{'; '.join(sorted({r['best_candidate'] for r in rs}))} |" if cand else ""))
PY
