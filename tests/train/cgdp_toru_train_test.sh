#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-train --engine cgdp|cgdp-sum|auto end to end on 2 ranks (short MLP runs on Fashion-MNIST):
#  - cgdp and cgdp-sum end with the allreduce engine's weights, bit for bit (weights_digest), for
#    two chunkings; --tune runs the chunk search, writes the cache and a second run reads it;
#  - --explain prints the prediction next to the measurement;
#  - bad input (chunk size out of range, host memory too small, --device cuda without a GPU) is a
#    clear error on every rank;
#  - --checkpoint/--resume under cgdp and cgdp-sum equal the uninterrupted run bit for bit.
# Usage: cgdp_toru_train_test.sh TORU_TRAIN MPIEXEC [MPIEXEC FLAGS...]
set -uo pipefail
exe=$1
shift
mpi=("$@")
all_ranks=(env OMPI_MCA_orte_abort_on_non_zero_status=0 "${mpi[@]}")
work=$(mktemp -d "${TMPDIR:-/tmp}/toru-cgdp-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
common=(--model mlp --batch 32 --optimizer momentum --lr 0.05 --no-eval --json --seed 11 --steps 5 --threads 1)
digest() { grep '"type":"summary"' "$1" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["weights_digest"])'; }

"${mpi[@]}" -n 2 "$exe" "${common[@]}" --engine allreduce >"$work/a.jsonl" || fail "allreduce run"
a=$(digest "$work/a.jsonl")
for run in "cgdp --chunk-layers 1" "cgdp --chunks 2" "cgdp-sum --chunk-layers 2"; do
  # shellcheck disable=SC2086
  "${mpi[@]}" -n 2 "$exe" "${common[@]}" --engine $run >"$work/c.jsonl" || fail "--engine $run"
  c=$(digest "$work/c.jsonl")
  [[ -n $a && $c == "$a" ]] || fail "--engine $run: weights $c differ from the allreduce engine's $a"
  echo "ok: --engine $run == allreduce ($c)"
done

"${mpi[@]}" -n 2 "$exe" "${common[@]}" --engine cgdp --tune --tune-window 2 --tune-cache "$work/wisdom.json" \
  >"$work/t.jsonl" || fail "--tune"
[[ $(digest "$work/t.jsonl") == "$a" ]] || fail "--tune changed the training"
python3 -c "import json,sys; j=json.load(open('$work/wisdom.json'))['cgdp']; k=next(iter(j)); assert j[k]['chunk_layers']>=1, j" ||
  fail "no chunk cache written"
"${mpi[@]}" -n 2 "$exe" --model mlp --batch 32 --no-eval --steps 2 --engine cgdp --tune --tune-cache "$work/wisdom.json" \
  >"$work/t2.txt" || fail "--tune from the cache"
grep -q "from the cache" "$work/t2.txt" || fail "the second --tune run did not use the cache: $(head -3 "$work/t2.txt")"
echo "ok: --tune searched, cached, and reused"

"${mpi[@]}" -n 2 "$exe" --model mlp --batch 32 --no-eval --steps 6 --engine cgdp --chunk-layers 1 --explain \
  >"$work/e.txt" || fail "--explain"
grep -q "explain: predicted step: allreduce" "$work/e.txt" || fail "--explain printed no prediction"
grep -q "helper thread:" "$work/e.txt" || fail "--explain printed no helper binding"
echo "ok: --explain"

expect_error() {  # regex, args...
  local regex=$1
  shift
  "${all_ranks[@]}" -n 2 "$exe" --model mlp --batch 32 --no-eval --steps 2 "$@" >"$work/err.txt" 2>&1
  local n
  n=$(grep -cE "toru-train \(rank [01]\): error: .*$regex" "$work/err.txt")
  [[ $n == 2 ]] || fail "expected the error /$regex/ on both ranks, got: $(cat "$work/err.txt")"
  "${mpi[@]}" -n 2 "$exe" --model mlp --batch 32 --no-eval --steps 2 "$@" >/dev/null 2>&1 && fail "$* exited 0"
  echo "ok: $* -> $regex"
}
expect_error "chunk_layers: expected a chunk size in 1..2 layers" --engine cgdp --chunk-layers 7
expect_error "chunk sizes: expected sizes adding up to 2" --engine cgdp --chunks 1,1,1
expect_error "host memory too small: this node needs" --engine cgdp --host-memory 0.01
expect_error "device cuda --engine cgdp: (no CUDA device|.*CUDA backend was not built)" --engine cgdp --device cuda \
  --chunk-layers 1
expect_error "only --engine cgdp has a device path" --engine allreduce --device cuda
expect_error "device cuda: expected an explicit --chunk-layers" --engine cgdp --device cuda

# --checkpoint under CGDP: master weights and the helpers' optimizer state (Adam: two words per
# parameter, spread over both ranks' helpers) in the normal format; a run stopped at step 3 and
# resumed ends with the uninterrupted run's weights, bit for bit (and so does one resumed with the
# allreduce engine from CGDP's checkpoint: the format is the same).
ck=(--model mlp --batch 32 --optimizer adam --lr 0.01 --no-eval --json --seed 5 --threads 1 --chunk-layers 1)
for eng in cgdp cgdp-sum; do
  "${mpi[@]}" -n 2 "$exe" "${ck[@]}" --engine $eng --steps 6 --checkpoint "$work/ck-full-$eng" >"$work/k1.jsonl" ||
    fail "$eng --checkpoint"
  full=$(digest "$work/k1.jsonl")
  "${mpi[@]}" -n 2 "$exe" "${ck[@]}" --engine $eng --steps 3 --checkpoint "$work/ck-$eng" >/dev/null ||
    fail "$eng --checkpoint (3 steps)"
  "${mpi[@]}" -n 2 "$exe" "${ck[@]}" --engine $eng --steps 6 --checkpoint "$work/ck-$eng" --resume >"$work/k2.jsonl" ||
    fail "$eng --resume"
  resumed=$(digest "$work/k2.jsonl")
  [[ -n $full && $resumed == "$full" ]] || fail "$eng: resumed run ends with $resumed, uninterrupted with $full"
  echo "ok: $eng --checkpoint + --resume == uninterrupted ($full)"
done
"${mpi[@]}" -n 2 "$exe" "${ck[@]}" --engine allreduce --steps 6 --checkpoint "$work/ck-cgdp" --resume \
  >"$work/k3.jsonl" || fail "allreduce --resume from a CGDP checkpoint"
[[ $(digest "$work/k3.jsonl") == "$full" ]] || fail "allreduce resumed from CGDP's checkpoint differs"
echo "ok: allreduce resumes CGDP's checkpoint"
echo "all ok"
