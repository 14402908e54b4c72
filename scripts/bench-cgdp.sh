#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CGDP against the allreduce engine on this machine's CPUs (one rank = one worker), with the cost
# model's prediction for both (--explain). Several rounds per configuration; each round runs
# allreduce, cgdp, then allreduce again (the noise floor: the same engine twice). Prints, per model,
# ranks and engine: median, min and max of the measured median step, the model's error (median and
# range over rounds), and the noise floor. Figures in docs/history/benchmarks-2026-12.md ("CGDP").
#   scripts/bench-cgdp.sh [BUILD_DIR] [STEPS] [ROUNDS]          # defaults: build 10 3
#   MODELS="fashion-cnn alexnet-64" RANKS="2 4" scripts/bench-cgdp.sh   # defaults shown
# Wrap it in `flock /tmp/toru-bench.lock` on a shared machine; the load is printed before and after.
set -uo pipefail
build=${1:-build}
steps=${2:-10}
rounds=${3:-3}
models=${MODELS:-fashion-cnn alexnet-64}
ranks=${RANKS:-2 4}
exe=$build/apps/toru-train/toru-train
mpi=(mpiexec --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
results=$(mktemp /tmp/bench-cgdp.XXXXXX.jsonl)
echo "load before: $(uptime)"
for name in $models; do
  case $name in
    fashion-cnn) args=(--model fashion-cnn --batch 64) ;;
    alexnet-64) args=(--model alexnet --data synthetic --image 64 --batch 16) ;;
    *) echo "unknown model $name (fashion-cnn, alexnet-64)" >&2; exit 2 ;;
  esac
  for n in $ranks; do
    for ((r = 1; r <= rounds; ++r)); do
      for run in allreduce cgdp allreduce-again; do
        engine=${run%-again}
        line=$("${mpi[@]}" -n "$n" "$exe" "${args[@]}" --steps "$steps" --timing-skip 3 --no-eval --threads 1 \
                 --engine "$engine" --explain --json 2>&1 | grep '"type":"summary"')
        python3 -c 'import json,sys
name,n,run,r,line=sys.argv[1:6]
j=json.loads(line) if line else {}
print(json.dumps({"model":name,"ranks":int(n),"run":run,"round":int(r),"summary":j}))' \
          "$name" "$n" "$run" "$r" "$line" >>"$results"
        echo "  $name np$n round $r $run: $(tail -1 "$results" | python3 -c 'import json,sys; j=json.load(sys.stdin)["summary"]; print("%.1f ms" % (1e3*j["step_s_median"]) if j else "FAILED")')"
      done
    done
  done
done
echo "load after: $(uptime)"
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r["model"], r["ranks"]) for r in rows}, key=lambda k: (k[0], k[1]))
print(f"{'model':<12} {'ranks':>5} {'engine':<10} {'median':>9} {'min':>9} {'max':>9} {'pred':>9} "
      f"{'err med':>8} {'err min':>8} {'err max':>8} {'noise':>7} {'helpers w/o core':>16}")
for model, n in keys:
    sel = [r for r in rows if r["model"] == model and r["ranks"] == n and r["summary"]]
    by_round = {}
    for r in sel: by_round.setdefault(r["round"], {})[r["run"]] = r["summary"]["step_s_median"]
    noise = [abs(v["allreduce"] - v["allreduce-again"]) / v["allreduce"] for v in by_round.values()
             if "allreduce" in v and "allreduce-again" in v]
    for engine in ("allreduce", "cgdp"):
        runs = [r["summary"] for r in sel if r["run"].startswith(engine)]
        if not runs:
            print(f"{model:<12} {n:>5} {engine:<10} FAILED"); continue
        t = [1e3 * s["step_s_median"] for s in runs]
        e = [100 * s["explain"]["prediction_error"] for s in runs]
        pred = [1e3 * s["explain"]["predicted_allreduce_s" if engine == "allreduce" else "predicted_cgdp_s"] for s in runs]
        hw = runs[0]["explain"].get("helpers_without_core", 0)
        print(f"{model:<12} {n:>5} {engine:<10} {statistics.median(t):8.1f}ms {min(t):8.1f}ms {max(t):8.1f}ms "
              f"{statistics.median(pred):8.1f}ms {statistics.median(e):+7.1f}% {min(e):+7.1f}% {max(e):+7.1f}% "
              f"{100 * statistics.median(noise) if noise else float('nan'):6.1f}% {100 * hw:15.0f}%")
print(f"(raw results: {sys.argv[1]}; noise = median over rounds of |allreduce - allreduce again| / allreduce)")
PY
