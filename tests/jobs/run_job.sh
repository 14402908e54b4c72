#!/usr/bin/env bash
# run_job.sh <job script> <name>: runs the job outside Slurm and checks its JSON result.
set -euo pipefail
script=$1 name=$2
rm -f "$TORU_RESULTS/$name"-local-*.json
bash "$script"
result=$(ls -t "$TORU_RESULTS/$name"-local-*.json | head -1)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d, "empty result"' "$result"
echo "ok: $result"
