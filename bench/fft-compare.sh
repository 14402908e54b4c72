#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru's FFTs against FFTW-MPI, R rounds of toru-fft-bench (same data, same flags, same run), one
# table row per (transform, ranks, output order, planner flag): median, min and max over rounds of
# the ratio toru/FFTW-MPI (< 1: toru faster), the noise floor (the same toru plan timed twice in the
# same run: median over rounds of |t1/t2 - 1|), toru's ratio with overlap forced off, and the
# strategy toru's planner chose. Every peer's figure comes from the same round, as a ratio toru/peer:
# FFTW-MPI under ESTIMATE and MEASURE (FFT_COMPARE_FLAGS); the shared-memory limit (FFTW's threaded
# transform, toru-fft-bench --peers fftw-threads, threads = ranks; toru/limit, both plan times);
# mpi4py-fft (bench/fft_mpi4py.py under /usr/bin/python3, 3D c2c and r2c, natural order); heFFTe's
# speed3d_c2c (3D c2c, natural order) when HEFFTE_DIR names its source tree or install. Not a test.
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
#   FFT_COMPARE_MPI4PY=0: skip mpi4py-fft
#   HEFFTE_DIR=DIR: heFFTe's source tree (speed3d_c2c built once, FFTW backend, into
#   ${XDG_CACHE_HOME:-~/.cache}/toru-heffte) or an install/build tree holding speed3d_c2c
# Wrap timed runs on a shared machine in flock /tmp/toru-bench.lock.
set -euo pipefail
quick=0
if [[ ${1:-} == --quick ]]; then
  quick=1
  shift
fi
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
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

# heFFTe: no Debian package and nothing to download, so only from a tree the user has.
heffte=""
if [[ -z ${HEFFTE_DIR:-} ]]; then
  echo "heFFTe: skipped (HEFFTE_DIR not set)"
elif heffte=$(find "$HEFFTE_DIR" -name speed3d_c2c -type f -perm -u+x 2>/dev/null | head -1) && [[ -n $heffte ]]; then
  echo "heFFTe: $heffte"
elif [[ -f $HEFFTE_DIR/CMakeLists.txt ]]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/toru-heffte
  echo "heFFTe: building speed3d_c2c from $HEFFTE_DIR into $cache (once)"
  nice -n 19 cmake -S "$HEFFTE_DIR" -B "$cache" -DCMAKE_BUILD_TYPE=Release -DHeffte_ENABLE_FFTW=ON >"$cache.log" 2>&1 &&
    nice -n 19 cmake --build "$cache" --target speed3d_c2c --parallel 2 >>"$cache.log" 2>&1 ||
    { echo "fft-compare.sh: building heFFTe's speed3d_c2c failed, see $cache.log" >&2; exit 1; }
  heffte=$(find "$cache" -name speed3d_c2c -type f -perm -u+x | head -1)
else
  echo "fft-compare.sh: HEFFTE_DIR=$HEFFTE_DIR: neither heFFTe's source tree nor a tree with speed3d_c2c" >&2
  exit 2
fi
mpi4py=${FFT_COMPARE_MPI4PY:-1}
if [[ $mpi4py == 1 ]] && ! /usr/bin/python3 -c 'import mpi4py_fft' 2>/dev/null; then
  echo "mpi4py-fft: skipped (install python3-mpi4py-fft)"
  mpi4py=0
fi
here=$(cd "$(dirname "$0")" && pwd)

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
    # The peers, natural order only (their output order), in the same round.
    for f in $flags; do
      if [[ $mpi4py == 1 && -n $n3 ]]; then
        m=(--reps "$reps" --warmup "$warmup")
        [[ $f == measure ]] && m+=(--measure)
        "${mpi[@]}" -n "$p" /usr/bin/python3 "$here/fft_mpi4py.py" --n3 $n3 "${m[@]}" >"$out/mpi4py-r$r-p$p-$f.json" 2>"$out/err" ||
          { echo "fft-compare.sh: mpi4py-fft failed (round $r, $p ranks, $f):" >&2; cat "$out/err" >&2; exit 1; }
      fi
    done
    if [[ -n $heffte ]]; then
      for n in $n3; do
        "${mpi[@]}" -n "$p" "$heffte" fftw double "$n" "$n" "$n" >"$out/heffte-r$r-p$p-$n.txt" 2>&1 ||
          { echo "fft-compare.sh: heFFTe failed (round $r, $p ranks, $n):" >&2; cat "$out/heffte-r$r-p$p-$n.txt" >&2; exit 1; }
      done
    fi
  done
done
echo "# uptime after: $(uptime)"
python3 - "$out" <<'PY'
import glob, json, os, re, statistics as st, sys
rows = {}
# peers[(kind, n, ranks, flag, round)] = {peer: median s}; heFFTe has no flag (its own planner).
peers = {}
for path in glob.glob(os.path.join(sys.argv[1], "mpi4py-*.json")):
    m = re.match(r"mpi4py-r(\d+)-p(\d+)-(\w+)\.json", os.path.basename(path))
    for row in json.loads(open(path).read().strip().splitlines()[-1]):
        peers.setdefault((row["kind"], row["n"], int(m.group(2)), m.group(3), int(m.group(1))), {})["mpi4py-fft"] = row["median_s"]
for path in glob.glob(os.path.join(sys.argv[1], "heffte-*.txt")):
    m = re.match(r"heffte-r(\d+)-p(\d+)-(\d+)\.txt", os.path.basename(path))
    t = re.search(r"Time per run:\s*([0-9.eE+-]+)", open(path).read())
    if t:
        n = m.group(3)
        for f in ("estimate", "measure"):
            peers.setdefault(("3d", f"{n}x{n}x{n}", int(m.group(2)), f, int(m.group(1))), {})["heFFTe"] = float(t.group(1))
for path in sorted(glob.glob(os.path.join(sys.argv[1], "r*.json"))):
    m = re.match(r"r(\d+)-p(\d+)-(\w+)-(\w+)\.json", os.path.basename(path))
    text = open(path).read()
    data = json.loads(text[text.index("["):])
    for row in data:
        what = f"3D {row['n']}" if row["kind"] == "3d" else f"3D r2c {row['n']}" if row["kind"] == "3d-r2c" else f"1D 2^{int(row['points']).bit_length() - 1}" \
            if int(row["points"]) & (int(row["points"]) - 1) == 0 else f"1D {row['n']}"
        key = (row["kind"], row["points"], what, int(m.group(2)), m.group(3), m.group(4))
        row["_peers"] = peers.get((row["kind"], row["n"], int(m.group(2)), m.group(4), int(m.group(1))), {}) \
            if m.group(3) == "natural" else {}
        rows.setdefault(key, []).append(row)
cand = any("ratio_to_best_candidate" in r for v in rows.values() for r in v)
def med_range(v):
    return f"**{st.median(v):.2f}** ({min(v):.2f}-{max(v):.2f})" if v else "n/a"
print("| transform | ranks | order | flag | toru/FFTW-MPI median (min-max) | noise floor | no-overlap/FFTW-MPI | toru s | FFTW-MPI s | strategy |"
      + (" choice/best candidate median (max) | best candidate |" if cand else ""))
print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if cand else ""))
table2 = []
for key in sorted(rows, key=lambda k: (k[0] != "3d", k[1], k[3], k[4], k[5])):
    lim = [r for r in rows[key] if r.get("ratio_to_limit") is not None]
    if lim:
        peer_names = sorted({p for r in rows[key] for p in r["_peers"]})
        peer_cols = "; ".join(f"{p} {med_range([r['toru_median_s'] / r['_peers'][p] for r in rows[key] if p in r['_peers']])}"
                              for p in peer_names) or "-"
        shared = [r["shared_out_ratio_to_limit"] for r in lim if r.get("shared_out_ratio_to_limit") is not None]
        table2.append(f"| {key[2]} | {key[3]} | {key[4]} | {key[5]} | {med_range([r['ratio_to_limit'] for r in lim])} | "
                      f"{med_range(shared)} | "
                      f"{st.median(r['limit_median_s'] for r in lim):.4f} | {st.median(r['toru_plan_s'] for r in lim):.2f} | "
                      f"{st.median(r['limit_plan_s'] for r in lim):.2f} | {peer_cols} |")
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
if table2:
    print()
    print("| transform | ranks | order | flag | toru/limit median (min-max) | toru into shared_out()/limit | limit s (FFTW threads = ranks) | toru plan s | limit plan s | toru/peer median (min-max) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(table2))
PY
