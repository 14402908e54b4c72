#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Device check of the trainer's CUDA backend (train/src/cuda/), for a machine with a GPU. Builds
# nothing: run it in a build tree configured with the CUDA toolkit and cuDNN and already built
# (targets train_cuda_gpu_test and, if present, toru-train).
#
#   scripts/gpu-check-train.sh [BUILD_DIR]      # default: build
#
# Runs (1) the GPU tests (CUDA backend against the CPU backend for every layer, dropout, a ResNet
# block, a Fashion-MNIST CNN training step, determinism, device memory capacity/high-water), (2) the
# no-device error test, (3) a short toru-train run on the CUDA backend when the program has a
# --backend option, and prints a summary. Exit status 0 only when every part that ran passed and
# the GPU tests really ran (a skipped GPU test counts as a failure here: this script is for a GPU).
set -u
build=${1:-build}
log_dir=$(mktemp -d /tmp/gpu-check-train.XXXXXX)
declare -a summary
status=0

note() { summary+=("$1"); }

if [[ ! -d $build ]]; then
  echo "gpu-check-train: build directory '$build' not found (configure and build first)" >&2
  exit 2
fi

echo "== device"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log_dir/device.txt"
else
  echo "nvidia-smi not found" | tee "$log_dir/device.txt"
fi

gpu_test=$(find "$build" -type f -name train_cuda_gpu_test -perm -u+x 2>/dev/null | head -n1)
if [[ -z $gpu_test ]]; then
  echo "gpu-check-train: train_cuda_gpu_test is not built in '$build' (needs CUDA + cuDNN at configure time;" \
       "build it with: cmake --build $build --target train_cuda_gpu_test)" >&2
  exit 2
fi

echo "== GPU tests: $gpu_test"
"$gpu_test" --gtest_filter=-cuda_backend_no_device.* 2>&1 | tee "$log_dir/gpu_test.txt"
rc=${PIPESTATUS[0]}
passed=$(grep -c '^\[       OK \]' "$log_dir/gpu_test.txt")
failed=$(grep -c '^\[  FAILED  \] [a-z_]*\.[a-z_]* (' "$log_dir/gpu_test.txt")
skipped=$(grep -c '^\[  SKIPPED \] [a-z_]*\.[a-z_]* (' "$log_dir/gpu_test.txt")
if [[ $rc -ne 0 || $failed -ne 0 ]]; then
  note "GPU tests: FAILED ($passed passed, $failed failed, $skipped skipped; log $log_dir/gpu_test.txt)"
  status=1
elif [[ $skipped -ne 0 || $passed -eq 0 ]]; then
  note "GPU tests: SKIPPED ($skipped skipped: no usable device?) — nothing was checked"
  status=1
else
  note "GPU tests: passed ($passed tests)"
fi

echo "== no-device error test (devices hidden)"
if CUDA_VISIBLE_DEVICES= "$gpu_test" --gtest_filter=cuda_backend_no_device.* >"$log_dir/nodevice.txt" 2>&1; then
  note "no-device test: passed"
else
  note "no-device test: FAILED (log $log_dir/nodevice.txt)"
  status=1
fi

echo "== toru-train on the CUDA backend"
train=$(find "$build" -type f -name toru-train -perm -u+x 2>/dev/null | head -n1)
if [[ -z $train ]]; then
  note "toru-train: not built, skipped"
elif ! "$train" --help 2>&1 | grep -q -- '--backend'; then
  note "toru-train: has no --backend option, skipped"
else
  if timeout 300 "$train" --model fashion-cnn --data synthetic --image 28 --batch 64 --steps 20 --no-eval --backend cuda --json \
      >"$log_dir/toru-train.jsonl" 2>"$log_dir/toru-train.err"; then
    last=$(tail -n1 "$log_dir/toru-train.jsonl")
    note "toru-train --backend cuda: ran 20 steps; last line: $last"
  else
    note "toru-train --backend cuda: FAILED ($(tail -n3 "$log_dir/toru-train.err" | tr '\n' ' '))"
    status=1
  fi
fi

echo
echo "== summary (logs in $log_dir)"
printf '  %s\n' "${summary[@]}"
exit $status
