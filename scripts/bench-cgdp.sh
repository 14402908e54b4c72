#!/usr/bin/env bash
# CGDP against the allreduce engine on this machine's CPUs (one rank = one worker), with the cost
# model's prediction for both (--explain). Short runs; figures in docs/benchmarks.md ("CGDP").
#   scripts/bench-cgdp.sh [BUILD_DIR] [STEPS]
set -uo pipefail
build=${1:-build}
steps=${2:-12}
exe=$build/apps/toru-train/toru-train
mpi=(mpiexec --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
echo "load: $(uptime)"
printf '%-12s %5s %-10s %8s %10s %10s %10s %8s\n' model ranks engine chunks measured pred_ar pred_cgdp error
for spec in "fashion-cnn:--model fashion-cnn --batch 64" "alexnet-64:--model alexnet --data synthetic --image 64 --batch 16"; do
  name=${spec%%:*}
  read -r -a args <<<"${spec#*:}"
  for n in 2 4; do
    for engine in allreduce cgdp; do
      out=$("${mpi[@]}" -n "$n" "$exe" "${args[@]}" --steps "$steps" --timing-skip 3 --no-eval --threads 1 \
              --engine "$engine" --explain --json 2>&1 | grep '"type":"summary"')
      python3 - "$name" "$n" "$engine" "$out" <<'PY'
import json, sys
name, n, engine, line = sys.argv[1:5]
if not line:
    print(f"{name:<12} {n:>5} {engine:<10} FAILED"); sys.exit()
j = json.loads(line); e = j["explain"]
print(f"{name:<12} {n:>5} {engine:<10} {j.get('chunks','-'):>8} {1e3*e['measured_s']:9.1f}ms {1e3*e['predicted_allreduce_s']:9.1f}ms "
      f"{1e3*e['predicted_cgdp_s']:9.1f}ms {100*e['prediction_error']:+7.1f}%")
PY
    done
  done
done
echo "load: $(uptime)"
