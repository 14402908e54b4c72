#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-train --memory-budget on 2 ranks (fashion-cnn, 3 steps, Fashion-MNIST): swap and recompute
# plans executed on the emulated device end with the default schedule's weights (weights_digest),
# the measured peak equals the planned one, the plan swaps / recomputes, --timeline writes an SVG,
# and a budget below the leanest plan is refused before training with what it needs.
# Usage: toru_train_swap_test.sh TORU_TRAIN MPIEXEC [MPIEXEC FLAGS...]
set -uo pipefail
exe=$1
shift
mpi=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/toru-train-swap-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
common=(--model fashion-cnn --batch 32 --steps 3 --no-eval --json --seed 5 --threads 1)
summary() { grep '"type":"summary"' "$1"; }
field() { summary "$1" | python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print(eval('j$2'))"; }

"${mpi[@]}" -n 2 "$exe" "${common[@]}" >"$work/ref.jsonl" || fail "default run"
ref=$(field "$work/ref.jsonl" '["weights_digest"]')
for st in swap recompute; do
  "${mpi[@]}" -n 2 "$exe" "${common[@]}" --memory-budget 10MiB --strategy $st --link-bandwidth 1GB/s \
    --timeline "$work/$st.svg" >"$work/$st.jsonl" || fail "$st run"
  d=$(field "$work/$st.jsonl" '["weights_digest"]')
  [[ $d == "$ref" ]] || fail "$st: weights $d differ from the default schedule's $ref"
  planned=$(field "$work/$st.jsonl" '["swap_plan"]["planned_peak_bytes"]')
  measured=$(field "$work/$st.jsonl" '["swap_plan"]["measured_peak_bytes"]')
  [[ $planned == "$measured" ]] || fail "$st: measured peak $measured != planned $planned"
  [[ $st != swap || $(field "$work/$st.jsonl" '["swap_plan"]["swapped_out_bytes"]') -gt 0 ]] || fail "swap plan swaps nothing"
  [[ $st != recompute || $(field "$work/$st.jsonl" '["swap_plan"]["ops_recomputed"]') -gt 0 ]] || fail "recompute plan recomputes nothing"
  grep -q '</svg>' "$work/$st.svg" || fail "$st: no timeline"
  echo "ok: $st plan, same weights ($d), peak $measured"
done

out=$("${mpi[@]}" -n 2 "$exe" "${common[@]}" --memory-budget 7MiB --strategy hybrid 2>&1) && fail "7MiB accepted"
grep -q "too small.*needs" <<<"$out" || fail "expected a 'too small ... needs' message, got: $out"
grep -q '"type":"step"' <<<"$out" && fail "a refused budget trained"
echo "ok: 7MiB refused before training"
