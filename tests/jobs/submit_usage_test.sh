#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# jobs/submit rejects bad input with exit status 2 and a message naming the argument, before it
# submits anything; --help describes it.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
submit=$repo/jobs/submit
status=0
check() { # expected-message args...
  local want=$1 out rc=0
  shift
  out=$("$submit" "$@" 2>&1) || rc=$?
  if [[ $rc -ne 2 || $out != *"$want"* ]]; then
    echo "FAIL: jobs/submit $*: exit $rc, output: $out (expected exit 2 and '$want')"
    status=1
  fi
}
check "submit: --ranks: expected a positive integer, got '0'" --ranks 0 "$repo/jobs/slurm/topo.sbatch"
check "submit: --time: expected" --time soon "$repo/jobs/slurm/topo.sbatch"
check "submit: SCRIPT: 'no-such-script' does not exist" no-such-script
check "submit: SCRIPT: expected a job script" --wait
check "submit: unknown option '--bogus'" --bogus "$repo/jobs/slurm/topo.sbatch"
check "submit: -n: expected a value" -n
"$submit" --help | grep -q '^usage: jobs/submit' || { echo "FAIL: --help"; status=1; }
((status == 0)) && echo "ok: jobs/submit usage errors"
exit $status
