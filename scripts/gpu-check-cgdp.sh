#!/usr/bin/env bash
# One-shot device check of the CGDP engine (train/src/cgdp_*.cpp) for a machine with a GPU, under
# 10 minutes. One command:
#
#   scripts/gpu-check-cgdp.sh [--build] [BUILD_DIR]     # default BUILD_DIR: build
#
# --build configures BUILD_DIR (Release, CUDA + cuDNN found automatically) if it is not, and builds
# the three targets it needs (toru-train, train_cgdp_test, train_cgdp_device_gpu_test) with -j$(nproc).
# Parts: (1) the device; (2) train_cgdp_device_gpu_test at 1 and 2 ranks: the device path (D2H into
# pinned window memory on a copy stream, host sum + update, H2D on a second stream, per-chunk events)
# against a serial host loop bitwise and the CPU engine to tolerance: must PASS, a skip is a failure
# here; (3) train_cgdp_test at 1 and 4 ranks (host engine); (4) toru-train --device cuda --engine
# cgdp against --device cpu (allreduce and cgdp) on fashion-cnn, median step times; (5) CGDP against
# the allreduce engine on the CPUs at 2 and 4 ranks with --explain (the cost model's error).
# Exit 0 only when every part ran as expected; logs in a printed directory.
set -u
do_build=0
if [[ ${1:-} == --build ]]; then
  do_build=1
  shift
fi
build=${1:-build}
log_dir=$(mktemp -d /tmp/gpu-check-cgdp.XXXXXX)
declare -a summary
status=0
note() { summary+=("$1"); }
mpirun=(mpiexec --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "== device"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log_dir/device.txt"
else
  echo "no nvidia-smi: the device parts will fail" | tee "$log_dir/device.txt"
fi

if ((do_build)); then
  echo "== build ($build)"
  [[ -f $build/CMakeCache.txt ]] ||
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORU_BUILD_EXAMPLES=OFF >"$log_dir/configure.txt" 2>&1 ||
    { echo "configure failed: $log_dir/configure.txt" >&2; exit 2; }
  cmake --build "$build" -j"$(nproc)" --target toru-train train_cgdp_test train_cgdp_device_gpu_test \
    >"$log_dir/build.txt" 2>&1 || { echo "build failed: $(tail -20 "$log_dir/build.txt")" >&2; exit 2; }
fi

find_bin() { find "$build" -type f -name "$1" -perm -u+x 2>/dev/null | head -n1; }
train=$(find_bin toru-train)
test_bin=$(find_bin train_cgdp_test)
gpu_bin=$(find_bin train_cgdp_device_gpu_test)
if [[ -z $train || -z $test_bin || -z $gpu_bin ]]; then
  echo "gpu-check-cgdp: build toru-train, train_cgdp_test and train_cgdp_device_gpu_test in '$build' first" \
    "(or pass --build; train_cgdp_device_gpu_test exists only when CUDA and cuDNN were found)" >&2
  exit 2
fi

echo "== train_cgdp_device_gpu_test (device path)"
for n in 1 2; do
  log="$log_dir/gpu_test_np$n.txt"
  timeout 180 "${mpirun[@]}" -n $n "$gpu_bin" >"$log" 2>&1
  rc=$?
  if grep -q "SKIPPED" "$log"; then
    note "train_cgdp_device_gpu_test np$n: SKIPPED (no device seen; log $log)"
    status=1
  elif ((rc == 0)); then
    note "train_cgdp_device_gpu_test np$n: passed"
  else
    note "train_cgdp_device_gpu_test np$n: FAILED rc=$rc (log $log)"
    status=1
  fi
done

echo "== train_cgdp_test (host engine)"
for n in 1 4; do
  if timeout 150 "${mpirun[@]}" -n $n "$test_bin" >"$log_dir/test_np$n.txt" 2>&1; then
    note "train_cgdp_test np$n: passed"
  else
    note "train_cgdp_test np$n: FAILED (log $log_dir/test_np$n.txt)"
    status=1
  fi
done

median_of() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if "\"summary\"" in l: j=json.loads(l); print(f"{1e3*j[\"step_s_median\"]:.2f} ms (min {1e3*j[\"step_s_min\"]:.2f}, max {1e3*j[\"step_s_max\"]:.2f})")' "$1"; }

echo "== toru-train: --device cuda --engine cgdp against the CPU engines (fashion-cnn, 30 steps)"
args=(--model fashion-cnn --data synthetic --image 28 --batch 64 --steps 30 --no-eval --json --seed 3)
for n in 1 2; do
  for run in "cuda cgdp" "cpu cgdp" "cpu allreduce"; do
    read -r dev eng <<<"$run"
    out="$log_dir/train-$dev-$eng-np$n.jsonl"
    if timeout 150 "${mpirun[@]}" -n $n "$train" "${args[@]}" --device "$dev" --engine "$eng" --chunk-layers 2 \
         >"$out" 2>&1; then
      note "fashion-cnn np$n --device $dev --engine $eng: step $(median_of "$out")"
    else
      note "fashion-cnn np$n --device $dev --engine $eng: FAILED (log $out)"
      status=1
    fi
  done
done

echo "== CGDP vs allreduce on this machine's CPUs (--explain)"
for model in fashion-cnn vgg-small; do
  case $model in
    fashion-cnn) margs=(--model fashion-cnn --data synthetic --image 28 --batch 64) ;;
    vgg-small) margs=(--model vgg16 --data synthetic --image 32 --batch 16) ;;
  esac
  for n in 2 4; do
    for engine in allreduce cgdp; do
      out="$log_dir/$model-$engine-np$n.txt"
      if timeout 120 "${mpirun[@]}" -n $n "$train" "${margs[@]}" --steps 15 --no-eval --threads 2 --engine $engine \
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
