#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Executed hybrid vs swap-only step time on the host-emulated device (docs/swap.md, "Reproduce,
# executed"): ResNet-50 at 32x32, batch 16, budget = persistent state + 6 MiB, on a V100 + NVLink2
# slowed down 5000 times (compute rate, memory bandwidth and link alike: the V100's ratios). Runs
# swap-only, hybrid, swap-only again (the noise floor), each 2 warm-up steps + ROUNDS timed steps,
# and prints one JSON line per run plus a table: measured median [min, max] next to the planner's
# prediction from the device description and from the per-op times measured at this batch.
#
#   scripts/bench-swap-hybrid.sh [BUILD_DIR] [ROUNDS]     # default: build 5; about 4 minutes idle
#
# Builds nothing (target swap_exec_bench). Takes /tmp/toru-bench.lock so that only one timed run
# happens at a time on a shared machine, and records the load average before and after.
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
bench=$build/train/swap_exec_bench
if [[ ! -x $bench ]]; then
  echo "bench-swap-hybrid: $bench not found (cmake --build $build --target swap_exec_bench)" >&2
  exit 2
fi
out=$(mktemp /tmp/bench-swap-hybrid.XXXXXX.jsonl)
cmd=("$bench" hybrid --model resnet50 --image 32 --batch 16 --headroom 6MiB --scale 5000 --steps "$rounds" --threads 1)
echo "command: ${cmd[*]}"
flock /tmp/toru-bench.lock bash -c 'echo "load before: $(uptime)"; "$@"; echo "load after:  $(uptime)"' _ "${cmd[@]}" |
  tee "$out"
python3 - "$out" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(f"{'run':<10} {'measured median [min, max] s':<30} {'planner (device) s':>18} {'planner (calibrated) s':>22} "
      f"{'meas/cal':>8} {'swapped MiB':>11} {'recomputed':>10} {'peak == planned':>15}")
for r in runs:
    print(f"{r['strategy']:<10} {r['measured_step_s_median']:7.3f} [{r['measured_step_s_min']:.3f}, "
          f"{r['measured_step_s_max']:.3f}]{'':<7} {r['planner_step_s_device']:18.3f} {r['planner_step_s_calibrated']:22.3f} "
          f"{r['measured_over_calibrated']:8.3f} {r['swapped_out_bytes'] / 2**20:11.1f} {r['ops_recomputed']:10d} "
          f"{str(r['measured_peak'] == r['planned_peak']):>15}")
if len(runs) == 3:
    s1, h, s2 = (r["measured_step_s_median"] for r in runs)
    noise = abs(s2 - s1) / s1
    print(f"hybrid gain measured: {100 * (s1 / h - 1):+.1f}% (swap-only run 1) / {100 * (s2 / h - 1):+.1f}% (run 2); "
          f"noise floor (swap-only twice): {100 * noise:.1f}%")
    print(f"hybrid gain predicted: device {100 * (runs[0]['planner_step_s_device'] / runs[1]['planner_step_s_device'] - 1):+.1f}%, "
          f"calibrated {100 * (runs[0]['planner_step_s_calibrated'] / runs[1]['planner_step_s_calibrated'] - 1):+.1f}%")
PY
