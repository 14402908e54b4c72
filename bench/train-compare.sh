#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-train against PyTorch 1.13 on the CPU (same model, batch, optimizer, threads; synthetic data),
# and 2-rank toru-train against 2-rank PyTorch DistributedDataParallel (gloo). Not a test.
#   bench/train-compare.sh BUILD_DIR [ROUNDS] [STEPS]
# Prints one table row per case: median step time of each over ROUNDS rounds (each round's figure is
# itself the median over STEPS steps after 3 warm-up steps), the range over rounds, and the ratio
# toru/PyTorch (< 1: toru faster). Both run STEPS + 3 steps and time the last STEPS.
# Noise floor: each round also times the same toru run a second time; the "noise" column is the
# median over rounds of |t2 - t1| / t1 (a ratio closer to 1 than that says nothing).
# Cases: TORU_TRAIN_CASES="model:batch:ranks[:image[:threads]] ..." (image default 224, fashion-cnn 28;
# threads per rank, default 1, the same for both).
# Models vit_* (torchvision, 10 classes, dropout 0) and encoder (train_torch.py's 4-layer
# TransformerEncoder; "image" is its sequence length, default 128) are exported by train_torch.py
# --export to ONNX once and trained by toru-train --onnx, PyTorch training the same module.
# Peak memory: VmHWM (max RSS) of the toru-train process (GNU time, largest rank) and of PyTorch's
# (getrusage, rank 0), MiB, of the last round.
set -euo pipefail
build=${1:?usage: train-compare.sh BUILD_DIR [ROUNDS] [STEPS]}
rounds=${2:-3}
steps=${3:-20}
exe=$build/apps/toru-train/toru-train
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpiexec --oversubscribe --bind-to none)
field() { python3 -c "import json,sys; print([json.loads(l) for l in sys.stdin if l.strip()][-1]['$1'])"; }
stats() { python3 -c "import sys,statistics as s; v=[float(x) for x in sys.argv[1:]]; print(f'{s.median(v):.4f} {min(v):.4f} {max(v):.4f}')" "$@"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/train-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

case_row() { # model batch ranks optimizer image threads
  local model=$1 batch=$2 ranks=$3 opt=$4 image=$5 threads=$6 total=$((steps + 3))
  local t=() p=() n=() data=(--data synthetic --image "$image") net=(--model "$model") tmem=0 pmem=0
  local pyx=(--image "$image")
  [[ $model == fashion-cnn ]] && data=(--data synthetic --image 28)
  [[ $model == encoder ]] && pyx=(--seq "$image") && data=(--data synthetic)
  if [[ $model == vit* || $model == encoder ]]; then
    /usr/bin/python3 "$here/train_torch.py" --model "$model" "${pyx[@]}" --export "$work/$model-$image.onnx" >/dev/null 2>&1
    net=(--onnx "$work/$model-$image.onnx")
  fi
  toru_once() {
    rm -f "$work/time"
    "${mpi[@]}" -n "$ranks" /usr/bin/time -a -o "$work/time" -f '%M' "$exe" "${net[@]}" "${data[@]}" --batch "$batch" \
      --steps "$total" --timing-skip 3 --optimizer "$opt" --lr 0.01 --threads "$threads" --no-eval --json \
      --synthetic-samples $((batch * total)) | field step_s_median
  }
  for ((r = 0; r < rounds; r++)); do
    local t1 t2
    t1=$(toru_once)
    t2=$(toru_once)
    tmem=$(sort -n "$work/time" | tail -1)
    t+=("$t1")
    n+=("$(python3 -c "print(abs($t2 - $t1) / $t1)")")
    if ((ranks == 1)); then
      /usr/bin/python3 "$here/train_torch.py" --model "$model" --batch "$batch" --steps "$total" --skip 3 --threads "$threads" \
        --optimizer "$opt" "${pyx[@]}" >"$work/py"
      p+=("$(field step_s_median <"$work/py")")
      pmem=$(field peak_rss_kib <"$work/py")
    else
      local out
      out=$(mktemp)
      for ((k = 1; k < ranks; k++)); do
        /usr/bin/python3 "$here/train_torch.py" --model "$model" --batch "$batch" --steps "$total" --skip 3 --threads "$threads" \
          --optimizer "$opt" "${pyx[@]}" --ddp-rank $k --ddp-size "$ranks" >/dev/null &
      done
      /usr/bin/python3 "$here/train_torch.py" --model "$model" --batch "$batch" --steps "$total" --skip 3 --threads "$threads" \
        --optimizer "$opt" "${pyx[@]}" --ddp-rank 0 --ddp-size "$ranks" >"$out"
      wait
      p+=("$(field step_s_median <"$out")")
      pmem=$(field peak_rss_kib <"$out")
      rm -f "$out"
    fi
  done
  read -r tm tlo thi <<<"$(stats "${t[@]}")"
  read -r pm plo phi <<<"$(stats "${p[@]}")"
  read -r nm _ _ <<<"$(stats "${n[@]}")"
  python3 -c "
tm,pm,b=$tm,$pm,$batch
label = 'seq $image' if '$model' == 'encoder' else '${image}²'
print(f'| $model {label} | $batch | $ranks | $threads | $opt | {tm*1e3:.1f} ({$tlo*1e3:.1f}-{$thi*1e3:.1f}) | {b/tm:.1f} | {pm*1e3:.1f} ({$plo*1e3:.1f}-{$phi*1e3:.1f}) | {b/pm:.1f} | **{tm/pm:.2f}** | {$nm*100:.1f} % | {$tmem/1024:.0f} | {$pmem/1024:.0f} |')"
}

blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), rounds $rounds, steps $steps, PyTorch's BLAS $blas"
if [[ $blas == */blas/libblas.so.3* ]]; then
  echo "train-compare: warning: PyTorch runs on Debian's reference BLAS (10x slower Linear/MatMul): install libopenblas0-pthread (scripts/install-deps.sh)" >&2
fi
echo "| model | global batch | ranks | threads/rank | optimizer | toru ms/step (range) | toru img/s | PyTorch ms/step (range) | PyTorch img/s | toru/PyTorch | noise | toru peak MiB | PyTorch peak MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in ${TORU_TRAIN_CASES:-"fashion-cnn:64:1" "fashion-cnn:256:1" "fashion-cnn:64:2" "fashion-cnn:256:2" "resnet18:8:1" "resnet50:8:1" "resnet18:8:2" "vit_b_16:8:1:224" "encoder:16:1:128"}; do
  IFS=: read -r model batch ranks image threads <<<"$spec"
  [[ $model == fashion-cnn ]] && image=28
  case_row "$model" "$batch" "$ranks" sgd "${image:-224}" "${threads:-1}"
done
