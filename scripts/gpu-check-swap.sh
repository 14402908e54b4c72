#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Device check of the swap-plan executor on a GPU and of the planner's "pytorch" memory profile, for
# a machine with a GPU (docs/swap.md, "CUDA executor"). Builds nothing: run it in a build tree
# configured with the CUDA toolkit and cuDNN and built (targets train_swap_exec_gpu_test, toru-plan,
# and toru-train if present). About 5 minutes.
#
#   scripts/gpu-check-swap.sh [BUILD_DIR] [BATCHES]     # default: build "16 32 64"
#
# Checks:
#  1. train_swap_exec_gpu_test: swap / recompute / hybrid plans of fashion-cnn and ResNet-18 on the
#     GPU, bit-identical to the same model without a plan, pool high-water mark == planner's peak,
#     too-small budgets refused (a skipped test counts as a failure here);
#  2. toru-train --device cuda --strategy swap (when toru-train has --device): a short run whose
#     summary says measured peak == planned peak;
#  3. the planner's "pytorch" profile (toru-plan --profile pytorch --strategy none) against PyTorch's
#     own peak (scripts/torch-cuda-peak.py: max_memory_allocated, max_memory_reserved, memory outside
#     the allocator) for torchvision ResNet-50 at 224x224 and each batch; prints the table and flags
#     a difference above 10% of PyTorch's reserved + outside-allocator bytes.
# Exit status 0 only when every check passed. Logs under /tmp/gpu-check-swap.*.
set -u
build=${1:-build}
batches=${2:-"16 32 64"}
log=$(mktemp -d /tmp/gpu-check-swap.XXXXXX)
status=0
declare -a summary
note() { summary+=("$1"); }
find_bin() { find "$build" -type f -name "$1" -perm -u+x 2>/dev/null | head -n1; }

if [[ ! -d $build ]]; then
  echo "gpu-check-swap: build directory '$build' not found (configure and build first)" >&2
  exit 2
fi
echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$log/device.txt"

echo "== 1. executor on the GPU"
t=$(find_bin train_swap_exec_gpu_test)
if [[ -z $t ]]; then
  note "1 executor test: NOT BUILT (cmake --build $build --target train_swap_exec_gpu_test)"
  status=1
else
  timeout 300 "$t" 2>&1 | tee "$log/executor.txt"
  rc=${PIPESTATUS[0]}
  if [[ $rc -ne 0 ]]; then
    note "1 executor test: FAILED (rc $rc, $log/executor.txt)"
    status=1
  elif grep -q "SKIPPED" "$log/executor.txt"; then
    note "1 executor test: SKIPPED (no device seen; see $log/executor.txt)"
    status=1
  else
    note "1 executor test: passed (bit-identical, peak == planned)"
  fi
fi

echo "== 2. toru-train --device cuda --strategy swap"
tr=$(find_bin toru-train)
if [[ -z $tr ]] || ! "$tr" --help 2>/dev/null | grep -q -- "--device"; then
  note "2 toru-train --device cuda: not run (toru-train not built or without --device)"
else
  timeout 300 "$tr" --model resnet18 --image 32 --data synthetic --batch 16 --steps 5 --device cuda \
    --memory-budget 160MiB --strategy swap --json >"$log/toru-train.json" 2>"$log/toru-train.err"
  rc=$?
  if [[ $rc -ne 0 ]]; then
    note "2 toru-train --device cuda: FAILED (rc $rc: $(tail -n1 "$log/toru-train.err"))"
    status=1
  elif python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['swap_plan']; sys.exit(p['measured_peak_bytes'] != p['planned_peak_bytes'])" "$log/toru-train.json"; then
    note "2 toru-train --device cuda: passed (measured peak == planned)"
  else
    note "2 toru-train --device cuda: FAILED (measured peak != planned, $log/toru-train.json)"
    status=1
  fi
fi

echo "== 3. pytorch profile against torch.cuda (ResNet-50 224x224, batches $batches)"
plan=$(find_bin toru-plan)
here=$(cd "$(dirname "$0")" && pwd)
if [[ -z $plan ]]; then
  note "3 pytorch profile: NOT BUILT (toru-plan)"
  status=1
elif ! timeout 400 /usr/bin/python3 "$here/torch-cuda-peak.py" resnet50 224 $batches >"$log/torch.jsonl" 2>"$log/torch.err"; then
  note "3 pytorch profile: FAILED to measure PyTorch ($log/torch.err: $(tail -n1 "$log/torch.err"))"
  status=1
else
  for b in $batches; do
    "$plan" --model resnet50 --image 224 --batch "$b" --device h200-pcie5 --profile pytorch --strategy none --json \
      >"$log/plan-$b.json" 2>>"$log/plan.err"
  done
  if python3 - "$log" $batches <<'PY'
import json, sys
log, batches = sys.argv[1], sys.argv[2:]
torch = {r["batch"]: r for r in (json.loads(l) for l in open(f"{log}/torch.jsonl"))}
bad = 0
gib = 2**30
print(f"{'batch':>5} {'toru plan GiB':>13} {'torch alloc':>11} {'reserved':>9} {'outside':>8} {'torch total':>11} {'diff':>7}")
for b in batches:
    t = torch[int(b)]
    p = json.load(open(f"{log}/plan-{b}.json"))["peak_bytes"]
    total = t["max_reserved"] + t["outside_allocator"]
    d = p / total - 1
    bad += abs(d) > 0.10
    print(f"{b:>5} {p / gib:13.3f} {t['max_allocated'] / gib:11.3f} {t['max_reserved'] / gib:9.3f} "
          f"{t['outside_allocator'] / gib:8.3f} {total / gib:11.3f} {100 * d:+6.1f}%")
sys.exit(1 if bad else 0)
PY
  then
    note "3 pytorch profile: within 10% of torch's reserved + outside-allocator bytes at every batch"
  else
    note "3 pytorch profile: DIFFERS by more than 10% somewhere (table above; adjust the profile's constants)"
    status=1
  fi
fi

echo "== summary (logs: $log)"
printf '  %s\n' "${summary[@]}"
exit $status
