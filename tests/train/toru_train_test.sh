#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-train end to end on 2 ranks (short MLP runs on Fashion-MNIST):
#  - two runs with the same seed give bit-identical weights (the summary's weights_digest);
#  - a run checkpointed at step 3 and resumed to step 6 ends with the weights of an uninterrupted
#    6-step run, bit for bit;
#  - resuming with another rank count, model or seed is a clear error on every rank;
#  - a non-finite loss stops the run naming the step and the layer and keeps the last good checkpoint.
# Usage: toru_train_test.sh TORU_TRAIN MPIEXEC [MPIEXEC FLAGS...]
set -uo pipefail
exe=$1
shift
mpi=("$@")
# For the every-rank checks: let every rank finish and print its error when one exits non-zero
# (mpiexec then exits 0, so the status is checked in a second, ordinary run).
all_ranks=(env OMPI_MCA_orte_abort_on_non_zero_status=0 "${mpi[@]}")
work=$(mktemp -d "${TMPDIR:-/tmp}/toru-train-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
common=(--model mlp --batch 32 --optimizer momentum --lr 0.05 --no-eval --json --seed 11)
digest() { grep '"type":"summary"' "$1" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["weights_digest"])'; }

"${mpi[@]}" -n 2 "$exe" "${common[@]}" --steps 6 >"$work/a.jsonl" || fail "run a"
"${mpi[@]}" -n 2 "$exe" "${common[@]}" --steps 6 >"$work/b.jsonl" || fail "run b"
a=$(digest "$work/a.jsonl") b=$(digest "$work/b.jsonl")
[[ -n $a && $a == "$b" ]] || fail "two runs with the same seed differ: $a vs $b"
echo "ok: same seed, same weights ($a)"
[[ $(grep -c '"type":"step"' "$work/a.jsonl") == 6 ]] || fail "expected 6 step lines"

"${mpi[@]}" -n 2 "$exe" "${common[@]}" --steps 3 --checkpoint "$work/ckpt" >"$work/c1.jsonl" || fail "run c (first half)"
[[ -f $work/ckpt/checkpoint-3.toru && $(cat "$work/ckpt/latest") == checkpoint-3.toru ]] || fail "no checkpoint at step 3"
"${mpi[@]}" -n 2 "$exe" "${common[@]}" --steps 6 --checkpoint "$work/ckpt" --resume >"$work/c2.jsonl" || fail "run c (resumed)"
c=$(digest "$work/c2.jsonl")
[[ $c == "$a" ]] || fail "resumed run ends with other weights than the uninterrupted one: $c vs $a"
[[ $(grep -c '"type":"step"' "$work/c2.jsonl") == 3 ]] || fail "the resumed run should take 3 steps"
echo "ok: checkpoint at 3 + resume == uninterrupted ($c)"

# Mismatches: every rank reports the same error, usage exit status, nothing written.
before=$(ls "$work/ckpt")
"${mpi[@]}" -n 3 "$exe" --model mlp --batch 33 --optimizer momentum --no-eval --checkpoint "$work/ckpt" --resume --seed 11 \
  >/dev/null 2>&1
rc=$?
((rc == 2)) || fail "resume on 3 ranks should fail with the usage status 2, got $rc"
out=$("${all_ranks[@]}" -n 3 "$exe" --model mlp --batch 33 --optimizer momentum --no-eval --checkpoint "$work/ckpt" --resume --seed 11 2>&1)
# Every rank prints the error, but mpiexec may exit before it has forwarded every rank's stderr:
# at least one line, and no rank with another error.
only_error() { # <output> <regex>
  local lines
  lines=$(grep 'error:' <<<"$1")
  [[ -n $lines ]] && ! grep -Evq -- "$2" <<<"$lines"
}
only_error "$out" 'error: .*checkpoint-6.toru: checkpoint of rank count 2, this run has 3: cannot resume' ||
  fail "expected the rank-count error, got: $out"
out=$("${all_ranks[@]}" -n 2 "$exe" --model lenet5 --batch 32 --optimizer momentum --no-eval --checkpoint "$work/ckpt" --resume --seed 11 2>&1)
only_error "$out" 'error: .*checkpoint of model mlp, this run has lenet5' || fail "expected the model error, got: $out"
out=$("${mpi[@]}" -n 2 "$exe" --model mlp --batch 32 --optimizer momentum --no-eval --seed 12 --checkpoint "$work/ckpt" --resume 2>&1)
grep -q 'checkpoint of seed 11, this run has --seed 12' <<<"$out" || fail "expected the seed error, got: $out"
[[ $(ls "$work/ckpt") == "$before" ]] || fail "a refused resume changed the checkpoint folder"
echo "ok: mismatched resumes refused on every rank"

# AdamW, clipping, accumulation and label smoothing through the command line: every step reports
# the gradient norm before clipping; the run is deterministic.
opts=(--model mlp --batch 32 --optimizer adamw --lr 1e-3 --clip-grad-norm 0.5 --accumulate 2 --label-smoothing 0.1
  --no-eval --json --seed 11 --steps 4)
"${mpi[@]}" -n 2 "$exe" "${opts[@]}" >"$work/d1.jsonl" || fail "run d (adamw, clip, accumulate, smoothing)"
"${mpi[@]}" -n 2 "$exe" "${opts[@]}" >"$work/d2.jsonl" || fail "run d again"
[[ $(digest "$work/d1.jsonl") == $(digest "$work/d2.jsonl") ]] || fail "run d is not deterministic"
/usr/bin/python3 - "$work/d1.jsonl" <<'PY' || fail "grad_norm in the step lines"
import json, math, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l]
assert len(steps) == 4 and all(math.isfinite(s["grad_norm"]) and s["grad_norm"] > 0 for s in steps), steps
PY
echo "ok: adamw + --clip-grad-norm + --accumulate + --label-smoothing run, grad_norm reported"

# A diverging run: the loss becomes non-finite; the message names the step and the checkpoint kept.
out=$("${mpi[@]}" -n 2 "$exe" --model mlp --batch 32 --optimizer sgd --lr 1e12 --steps 20 --no-eval --quiet \
  --checkpoint "$work/nan" --checkpoint-every 1 2>&1)
rc=$?
((rc != 0)) || fail "a non-finite loss should fail the run: $out"
# The step, the layer (the first op whose output is not finite) and the checkpoint kept.
grep -Eq "error: step [0-9]+ \(epoch 0\): .*non-finite loss at step [0-9]+: op '[^']+' \([A-Za-z]+\) produced .*the last good checkpoint is .*checkpoint-[0-9]+\.toru" <<<"$out" ||
  fail "expected the step and the checkpoint in the message, got: $out"
step=$(grep -Eo 'error: step [0-9]+' <<<"$out" | head -1 | grep -Eo '[0-9]+')
[[ $(cat "$work/nan/latest") == "checkpoint-$step.toru" ]] || fail "latest should be the checkpoint of step $step"
echo "ok: non-finite loss at step $step stopped the run, checkpoint-$step.toru kept"
echo "all ok"
