#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-train --onnx end to end on 2 ranks, and the builders' large models at tiny synthetic sizes:
#  - a small CNN exported by PyTorch (tests/train/onnx_export.py cnn, training mode, dynamic batch)
#    trains 24 steps on Fashion-MNIST: JSON lines for every step and the summary, the mean loss of
#    the last 6 steps below that of the first 6; --export-onnx writes the trained model, which
#    onnx.checker accepts, with the source's initializer names and trained values;
#  - a tiny ViT exported the same way takes 3 steps on synthetic 3x32x32 data, finite losses;
#  - ONNX bad input on every rank, usage or runtime status, no checkpoint written: an op without an
#    importer rule (Sin), one the importer reads but the trainer has no kernel for (Erf), a shape
#    mismatch (the linear weight one input feature short), a missing file;
#  - with TORU_TRAIN_BIG_MODELS=1 only (minutes: 25-138 M parameters to initialise and reduce):
#    vgg16 (32x32), alexnet (64x64) and resnet50 (32x32) take 2 steps on synthetic data, finite loss.
# Usage: toru_train_onnx_test.sh TORU_TRAIN ONNX_EXPORT_PY MPIEXEC [MPIEXEC FLAGS...]
set -uo pipefail
exe=$1
export_py=$2
shift 2
mpi=("$@")
all_ranks=(env OMPI_MCA_orte_abort_on_non_zero_status=0 "${mpi[@]}")
work=$(mktemp -d "${TMPDIR:-/tmp}/toru-train-onnx-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
/usr/bin/python3 "$export_py" "$work" 4 28 cli >/dev/null 2>&1 || fail "onnx_export.py cli"

"${mpi[@]}" -n 2 "$exe" --onnx "$work/cnn.onnx" --batch 32 --steps 24 --optimizer adam --lr 3e-3 --no-eval --json \
  --seed 5 --export-onnx "$work/trained.onnx" >"$work/cnn.jsonl" || fail "training the exported CNN"
/usr/bin/python3 - "$work/cnn.jsonl" <<'PY' || fail "JSON output of the ONNX run"
import json, math, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
steps = [l for l in lines if l["type"] == "step"]
summary = [l for l in lines if l["type"] == "summary"]
assert len(steps) == 24, len(steps)
assert len(summary) == 1 and summary[0]["model"] == "cnn.onnx", summary
for s in steps:
    assert math.isfinite(s["loss"]) and 0 <= s["accuracy"] <= 1 and s["images_per_s"] > 0, s
    for k in ("forward", "backward", "comm_wait", "update", "total"):
        assert s["time"][k] >= 0, (k, s)
first = sum(s["loss"] for s in steps[:6]) / 6
last = sum(s["loss"] for s in steps[-6:]) / 6
assert last < first, (first, last)
assert summary[0]["onnx_export"].endswith("trained.onnx"), summary
print(f"ok: loss {first:.3f} -> {last:.3f}")
PY
/usr/bin/python3 - "$work/cnn.onnx" "$work/trained.onnx" <<'PY' || fail "the --export-onnx file"
import sys
import numpy as np
import onnx
from onnx import numpy_helper
src, out = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
onnx.checker.check_model(out, full_check=True)
a = {t.name: numpy_helper.to_array(t) for t in src.graph.initializer}
b = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
assert a.keys() == b.keys(), a.keys() ^ b.keys()
assert len(src.graph.node) == len(out.graph.node)
changed = [n for n in a if not np.array_equal(a[n], b[n])]
assert "conv1.weight" in changed and "bn1.running_var" in changed, changed
print(f"ok: exported ONNX passes onnx.checker, {len(changed)} of {len(a)} initializers trained")
PY
echo "ok: --onnx trains the exported CNN, --export-onnx writes it"

# A tiny torchvision ViT (transformer ops on the CPU backend), rebatched to 4 per rank: 3 steps on
# synthetic data, finite losses.
"${mpi[@]}" -n 2 "$exe" --onnx "$work/vit.onnx" --data synthetic --image 32 --batch 8 --steps 3 --no-eval --json \
  >"$work/vit.jsonl" || fail "training the exported ViT"
/usr/bin/python3 -c "
import json, math, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '\"type\":\"step\"' in l]
assert len(s) == 3 and all(math.isfinite(x['loss']) for x in s), s" "$work/vit.jsonl" || fail "ViT: steps"
echo "ok: --onnx trains the exported ViT"

# Bad ONNX input: the same error on every rank (at least one forwarded, none other), the status,
# and no checkpoint folder content.
only_error() { # <output> <regex>
  local lines
  lines=$(grep 'error:' <<<"$1")
  [[ -n $lines ]] && ! grep -Evq -- "$2" <<<"$lines"
}
bad() { # <name> <status> <regex> <onnx file>
  local out rc
  "${mpi[@]}" -n 2 "$exe" --onnx "$4" --batch 8 --steps 2 --no-eval --checkpoint "$work/ckpt-$1" >/dev/null 2>&1
  rc=$?
  ((rc == $2)) || fail "$1: expected exit status $2, got $rc"
  out=$("${all_ranks[@]}" -n 2 "$exe" --onnx "$4" --batch 8 --steps 2 --no-eval --checkpoint "$work/ckpt-$1" 2>&1)
  only_error "$out" "toru-train \\(rank [01]\\): error: $3" || fail "$1: expected '$3' on every rank, got: $out"
  [[ -z $(ls -A "$work/ckpt-$1" 2>/dev/null) ]] || fail "$1: something was written to the checkpoint folder"
  echo "ok: $1"
}
bad unknown_op 1 "onnx model '$work/unknown-op.onnx': unsupported op types Sin; supported: " "$work/unknown-op.onnx"
bad trainer_op 1 "op '/Erf': type 'erf' is not supported by the CPU backend" "$work/trainer-op.onnx"
bad shape_mismatch 2 "op '/fc/Gemm' \\(linear\\): weight \\[10,15\\] does not match 16 input features" \
  "$work/bad-shape.onnx"
bad missing_file 1 "onnx file '$work/nosuch.onnx': expected a readable file" "$work/nosuch.onnx"

[[ ${TORU_TRAIN_BIG_MODELS:-0} == 1 ]] && big=(vgg16:32 alexnet:64 resnet50:32) || big=()
for spec in "${big[@]}"; do
  IFS=: read -r model image <<<"$spec"
  "${mpi[@]}" -n 2 "$exe" --model "$model" --data synthetic --image "$image" --batch 4 --steps 2 --synthetic-samples 8 \
    --no-eval --json --lr 0.01 >"$work/$model.jsonl" || fail "$model at ${image}x$image"
  /usr/bin/python3 -c "
import json, math, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '\"type\":\"step\"' in l]
assert len(s) == 2 and all(math.isfinite(x['loss']) for x in s), s" "$work/$model.jsonl" || fail "$model: steps"
  echo "ok: $model ${image}x$image trains"
done
echo "all ok"
