#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# job_test.sh [checks] MODE SCRIPT [ARGS...]: runs a job script one way and checks how it ended.
#   MODE   local   bash SCRIPT (no batch system: the mpiexec fallback)
#          sbatch  sbatch --wait, then Slurm's record of the job (JobState, ExitCode)
#          submit  jobs/submit --wait (Slurm), which must print the job id and the output file
#          pbs     jobs/submit --pbs --wait (qsub of slurm-wlm-torque on the same Slurm)
#   checks --expect ok|fail     the job must succeed (default) / end with a non-zero state
#          --grep REGEX         the job's output must match (repeatable)
#          --json NAME          the job must have written valid JSON (or JSON lines) to $TORU_RESULTS/NAME-<id>.json
#          --slurm STATE_DIR    the local Slurm of tests/jobs/slurm-local.sh (modes other than local)
# Exit 77 (reported as skipped) when that Slurm could not start here, with the reason.
set -euo pipefail
expect=ok greps=() json="" state=""
while [[ $1 == --* ]]; do
  case $1 in
    --expect) expect=$2 ;;
    --grep) greps+=("$2") ;;
    --json) json=$2 ;;
    --slurm) state=$2 ;;
    *)
      echo "job_test.sh: unknown option $1" >&2
      exit 2
      ;;
  esac
  shift 2
done
mode=$1 script=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fail() {
  echo "FAIL: $*"
  exit 1
}

if [[ $mode != local ]]; then
  [[ -n $state ]] || fail "--slurm STATE_DIR is required for mode $mode"
  if [[ -f $state/skip-reason ]]; then
    echo "SKIPPED: local Slurm cannot start: $(cat "$state/skip-reason")"
    exit 77
  fi
  eval "$(bash "$here/slurm-local.sh" env "$state")"
fi

# Jobs run in a scratch folder of their own (their output files and results land there, so nothing
# of an earlier run can stand in for this one) and find the checkout through TORU_HOME, which sbatch
# and qsub -V pass on with the rest of the environment.
work=$(mktemp -d "${TMPDIR:-/tmp}/toru-job-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export TORU_HOME=$repo TORU_RESULTS=$work/results
rc=0 id="" out=""
case $mode in
  local)
    out=$work/job.out
    bash "$repo/$script" "$@" >"$out" 2>&1 || rc=$?
    id=$(sed -n 's/^toru job \(local-[^:]*\):.*/\1/p' "$out" | head -1)
    ;;
  sbatch)
    out=$work/job.out
    id=$(timeout 300 sbatch --parsable --wait --output="$out" "$repo/$script" "$@") || rc=$?
    id=${id%%;*}
    [[ -n $id ]] || fail "sbatch gave no job id (exit $rc)"
    # sbatch --wait polls every 2 s and MinJobAge=5 keeps the record: it is still there now.
    record=$(scontrol show job -o "$id" 2>&1) || fail "no Slurm record of job $id: $record"
    job_state=$(tr ' ' '\n' <<<"$record" | sed -n 's/^JobState=//p')
    exit_code=$(tr ' ' '\n' <<<"$record" | sed -n 's/^ExitCode=//p')
    echo "job $id: sbatch --wait exit $rc, JobState=$job_state ExitCode=$exit_code"
    if [[ $expect == ok ]]; then
      [[ $job_state == COMPLETED && $exit_code == 0:0 ]] || fail "job $id ended $job_state ($exit_code)"
    else
      [[ $job_state == FAILED && $exit_code != 0:0 ]] || fail "job $id ended $job_state ($exit_code), expected FAILED"
    fi
    ;;
  submit | pbs)
    flags=(--wait)
    [[ $mode == pbs ]] && flags+=(--pbs)
    reply=$(timeout 300 "$repo/jobs/submit" "${flags[@]}" "$repo/$script" "$@") || rc=$?
    echo "$reply"
    id=$(sed -n 's/^job: //p' <<<"$reply")
    out=$(sed -n 's/^output: //p' <<<"$reply")
    [[ $id =~ ^[0-9]+$ ]] || fail "jobs/submit printed no job id"
    [[ $out == /* ]] || fail "jobs/submit printed no output file"
    # Under PBS the output file is <#PBS -N name>.o<id> in the submit directory.
    if [[ $mode == pbs ]]; then
      name=$(sed -n 's/^#PBS  *-N  *//p' "$repo/$script" | head -1)
      [[ $out == "$work/$name.o$id" ]] || fail "output '$out', expected $work/$name.o$id"
    fi
    ;;
  *) fail "unknown mode $mode" ;;
esac

[[ -n $out && -f $out ]] || fail "the job left no output file ($out)"
echo "---- job output ($out)"
cat "$out"
echo "----"
if [[ $expect == ok ]]; then
  ((rc == 0)) || fail "the job failed (exit $rc)"
else
  ((rc != 0)) || fail "the job should have failed, but exit status is 0"
fi
for re in "${greps[@]}"; do
  grep -Eq -- "$re" "$out" || fail "the job's output does not match '$re'"
done
if [[ -n $json ]]; then
  result=$TORU_RESULTS/$json-$id.json
  # One JSON document, or JSON lines (toru-train: one object per step and epoch, then the summary).
  python3 -c '
import json, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError:
    d = [json.loads(line) for line in text.splitlines() if line.strip()]
assert d, "empty result"' "$result" ||
    fail "no valid JSON in $result"
  echo "ok: $result"
fi
echo "ok: $mode $script ($expect)"
