#!/usr/bin/env bash
# One-shot device check of the CGDP engine (train/src/cgdp_*.cpp) for a machine with a GPU, under
# 10 minutes. Builds nothing: run it in a build tree configured with CUDA + cuDNN and built
# (targets toru-train, train_cgdp_test).
#
#   scripts/gpu-check-cgdp.sh [BUILD_DIR]      # default: build
#
# Parts: (1) the device; (2) train_cgdp_test at 1 and 4 ranks (host engine: must pass anywhere);
# (3) toru-train --engine cgdp on the CUDA backend: today the engine has no device path (D2H/H2D
# through pinned buffers and streams), so the expected outcome is the clean "no device path" error
# on every rank, and the script says which it got; (4) CGDP against the allreduce engine on this
# machine's CPUs at 2 and 4 ranks (fashion-cnn and vgg-style at small input) with --explain, the
# cost model's prediction error for both engines. Exit 0 only when every part ran as expected.
set -u
build=${1:-build}
log_dir=$(mktemp -d /tmp/gpu-check-cgdp.XXXXXX)
declare -a summary
status=0
note() { summary+=("$1"); }
mpirun=(mpiexec --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "== device"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
  tee "$log_dir/device.txt"

find_bin() { find "$build" -type f -name "$1" -perm -u+x 2>/dev/null | head -n1; }
train=$(find_bin toru-train)
test_bin=$(find_bin train_cgdp_test)
if [[ -z $train || -z $test_bin ]]; then
  echo "gpu-check-cgdp: build toru-train and train_cgdp_test in '$build' first" >&2
  exit 2
fi

echo "== train_cgdp_test"
for n in 1 4; do
  if timeout 120 "${mpirun[@]}" -n $n "$test_bin" >"$log_dir/test_np$n.txt" 2>&1; then
    note "train_cgdp_test np$n: passed"
  else
    note "train_cgdp_test np$n: FAILED (log $log_dir/test_np$n.txt)"
    status=1
  fi
done

echo "== toru-train --engine cgdp on the CUDA backend"
if "$train" --help 2>&1 | grep -q -- '--backend'; then
  timeout 120 "${mpirun[@]}" -n 1 "$train" --model fashion-cnn --data synthetic --image 28 --batch 64 --steps 10 \
    --no-eval --backend cuda --engine cgdp >"$log_dir/cuda.txt" 2>&1
  if grep -q "no device path" "$log_dir/cuda.txt"; then
    note "cgdp on CUDA: refused cleanly (no device path yet), as expected"
  elif grep -q '"type":"summary"\|^done:' "$log_dir/cuda.txt"; then
    note "cgdp on CUDA: ran (a device path exists now): $(grep '^done:' "$log_dir/cuda.txt")"
  else
    note "cgdp on CUDA: unexpected outcome (log $log_dir/cuda.txt)"
    status=1
  fi
else
  note "cgdp on CUDA: toru-train has no --backend option, skipped"
fi

echo "== CGDP vs allreduce on this machine's CPUs (--explain)"
for model in fashion-cnn vgg-small; do
  case $model in
    fashion-cnn) args=(--model fashion-cnn --data synthetic --image 28 --batch 64) ;;
    vgg-small) args=(--model vgg16 --data synthetic --image 32 --batch 16) ;;
  esac
  for n in 2 4; do
    for engine in allreduce cgdp; do
      out="$log_dir/$model-$engine-np$n.txt"
      if timeout 150 "${mpirun[@]}" -n $n "$train" "${args[@]}" --steps 20 --no-eval --threads 2 --engine $engine \
           --chunk-layers 2 --explain >"$out" 2>&1; then
        note "$model np$n $engine: $(grep -o 'measured ([a-z-]*): [0-9.]* ms, error [-+0-9.]*%' "$out")"
      else
        note "$model np$n $engine: FAILED (log $out)"
        status=1
      fi
    done
  done
done

echo
echo "== summary (logs in $log_dir)"
printf '  %s\n' "${summary[@]}"
exit $status
