#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The PBS/Torque paths of jobs/submit and jobs/lib/job.sh without a PBS server: a fake qsub and qstat
# first on PATH record what they were given and answer as Torque does; the job scripts then run as
# PBS would start them (PBS_* variables set, from another directory).
# Usage: pbs_test.sh BUILD_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/toru-pbs-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
expect_line() { # file line: the file holds this exact line
  grep -qxF -- "$2" "$1" || fail "expected the line '$2' in $1:$(printf '\n'; cat "$1")"
}

# ---- jobs/submit through the fake qsub/qstat ----
mkdir -p "$work/bin"
cat >"$work/bin/qsub" <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$FAKE_PBS/qsub.args"
printf '%s\n' "${TORU_JOB_ARGS-(unset)}" >"$FAKE_PBS/qsub.job_args"
[[ -n ${FAKE_QSUB_FAIL:-} ]] && { echo "qsub: Unauthorized Request" >&2; exit 38; }
echo "987654.pbs-head"
SH
cat >"$work/bin/qstat" <<'SH'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_PBS/qstat.calls"
echo "Job Id: 987654.pbs-head"
echo "    job_state = C"
echo "    Output_Path = pbs-head:/scratch/out/toru-topo.o987654"
[[ $1 == -fx ]] && echo "    exit_status = ${FAKE_EXIT_STATUS:-0}"
exit 0
SH
chmod +x "$work/bin/qsub" "$work/bin/qstat"
export FAKE_PBS=$work
fake_path="$work/bin:$PATH"

out=$(cd "$work" && PATH=$fake_path "$repo/jobs/submit" --pbs -n 3 -t 00:10:00 "$repo/jobs/pbs/topo.pbs" \
  --alltoall-bytes 1MiB --map XY 2>&1) || fail "submit --pbs: exit $?: $out"
printf '%s\n' -V -j oe -N toru-topo -l nodes=1:ppn=3 -l walltime=00:10:00 "$repo/jobs/pbs/topo.pbs" >"$work/want.args"
diff -u "$work/want.args" "$work/qsub.args" || fail "qsub's arguments"
expect_line "$work/qsub.job_args" "--alltoall-bytes 1MiB --map XY"
[[ $out == *$'job: 987654.pbs-head\noutput: /scratch/out/toru-topo.o987654'* ]] ||
  fail "submit's reply with qstat's Output_Path: $out"

# qstat that knows nothing of the job: the output file is <#PBS -N name>.o<numeric id> in the submit
# directory; no arguments means no TORU_JOB_ARGS; -X passes through.
mkdir -p "$work/noqstat"
cp "$work/bin/qsub" "$work/noqstat/qsub"
printf '#!/bin/sh\necho "qstat: Unknown Job Id $2" >&2\nexit 153\n' >"$work/noqstat/qstat"
chmod +x "$work/noqstat/qstat"
out=$(cd "$work" && PATH="$work/noqstat:$PATH" "$repo/jobs/submit" --pbs -X -q -X debug "$repo/jobs/pbs/fft-bench.pbs" 2>&1) ||
  fail "submit without qstat's answer: exit $?: $out"
name=$(sed -n 's/^#PBS  *-N  *//p' "$repo/jobs/pbs/fft-bench.pbs")
[[ -n $name ]] || fail "jobs/pbs/fft-bench.pbs names no job (#PBS -N)"
[[ $out == *"output: $work/$name.o987654"* ]] || fail "output path without qstat: $out"
printf '%s\n' -V -j oe -N "$name" -q debug "$repo/jobs/pbs/fft-bench.pbs" >"$work/want.args"
diff -u "$work/want.args" "$work/qsub.args" || fail "qsub's arguments with -X"
expect_line "$work/qsub.job_args" "(unset)"

# --wait: qstat until state C, then the job's exit status is submit's.
rm -f "$work/qstat.calls"
out=$(cd "$work" && PATH=$fake_path FAKE_EXIT_STATUS=3 "$repo/jobs/submit" --pbs --wait "$repo/jobs/pbs/topo.pbs" 2>&1)
rc=$?
((rc == 3)) || fail "submit --wait of a job that exited 3: exit $rc: $out"
[[ $out == *"job 987654.pbs-head failed (exit 3)"* ]] || fail "submit --wait's message: $out"
grep -q -- '-fx 987654.pbs-head' "$work/qstat.calls" || fail "qstat -fx was not asked: $(cat "$work/qstat.calls")"

# A refused submission: submit fails with qsub's words.
out=$(cd "$work" && PATH=$fake_path FAKE_QSUB_FAIL=1 "$repo/jobs/submit" --pbs "$repo/jobs/pbs/topo.pbs" 2>&1)
rc=$?
((rc == 1)) || fail "submit after qsub failed: exit $rc: $out"
[[ $out == *"qsub failed (exit 38)"*"Unauthorized Request"* ]] || fail "qsub's failure message: $out"

# ---- jobs/lib/job.sh as PBS starts a job: in $HOME, with PBS_* set ----
run_as_pbs() { # ranks-variables... -- then the job runs topo.pbs from / with a relative TORU_RESULTS
  (cd / && env -u SLURM_JOB_ID -u SLURM_NTASKS -u TORU_RANKS PBS_JOBID=4242.pbs-head PBS_O_WORKDIR="$work/submitdir" \
    TORU_BUILD="$build" TORU_RESULTS=results TORU_TOPO_ARGS="--alltoall-bytes 1KiB" "$@" \
    bash "$repo/jobs/pbs/topo.pbs")
}
mkdir -p "$work/submitdir"
out=$(run_as_pbs PBS_NP=2 2>&1) || fail "topo.pbs with PBS_NP=2: exit $?: $out"
[[ $out == *"toru job 4242: toru-topo --alltoall-bytes 1KiB on 2 rank(s); results in results/topo-4242.json"* ]] ||
  fail "job.sh's PBS id, PBS_NP ranks: $out"
json=$work/submitdir/results/topo-4242.json
[[ -s $json ]] || fail "no results in the submit directory (PBS_O_WORKDIR): $(ls -R "$work/submitdir")"
/usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["ranks"] == 2, j["ranks"]' "$json" ||
  fail "the JSON of a 2-rank job: $(head -c 400 "$json")"

printf 'node1\nnode1\nnode1\n' >"$work/nodefile"
out=$(run_as_pbs PBS_NODEFILE="$work/nodefile" 2>&1) || fail "topo.pbs with a 3-line PBS_NODEFILE: exit $?: $out"
[[ $out == *"on 3 rank(s)"* ]] || fail "ranks from PBS_NODEFILE: $out"

((status == 0)) && echo "ok: jobs/submit and job.sh under (fake) PBS"
exit $status
