# SPDX-License-Identifier: BSD-3-Clause
# Sourced by every job script, Slurm (jobs/slurm/*.sbatch) and PBS (jobs/pbs/*.pbs) alike: finds the
# toru checkout, its binaries and the results folder, and runs one bundled program with
# `toru_job <name> [program arguments...]`. Only the scheduler headers differ between the two sets.
#
# Under sbatch/qsub the script runs from the scheduler's spool, so the job scripts look for this file
# in TORU_HOME, next to themselves, then in the submit directory (submit from the repository root).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${TORU_BUILD:-$repo/build-release}/apps
results=${TORU_RESULTS:-$repo/results}
job_id=${SLURM_JOB_ID:-${PBS_JOBID:-local-$(date +%Y%m%d-%H%M%S)-$$}}
job_id=${job_id%%.*} # PBS ids carry the server name (123.head)

# Ranks: the allocation's task count (Slurm, also under the qsub wrapper of slurm-wlm-torque), PBS's
# slot count, else TORU_RANKS outside any batch system.
if [[ -n ${SLURM_NTASKS:-} ]]; then
  ranks=$SLURM_NTASKS
elif [[ -n ${PBS_NP:-} ]]; then
  ranks=$PBS_NP
elif [[ -n ${PBS_NODEFILE:-} && -r ${PBS_NODEFILE:-} ]]; then
  ranks=$(wc -l <"$PBS_NODEFILE")
else
  ranks=${TORU_RANKS:-4}
fi
# PBS starts jobs in $HOME; relative paths in arguments mean the submit directory.
if [[ -n ${PBS_O_WORKDIR:-} && -z ${SLURM_JOB_ID:-} ]]; then
  cd "$PBS_O_WORKDIR"
fi

launch() { bash "$repo/jobs/lib/launch.sh" "$@"; }

# Why a step failed, in words, for the last line of the job's output. A second argument "toru" reads
# 1 and 2 as the bundled programs mean them.
toru_exit_cause() {
  local rc=$1 convention=${2:-}
  case $convention$rc in
    toru1) echo "runtime error" ;;
    toru2) echo "usage error (bad arguments)" ;;
    *) if ((rc > 128)); then
      echo "killed by signal $((rc - 128)) (SIG$(kill -l $((rc - 128)) 2>/dev/null || echo '?'))"
    else
      echo "exit status $rc"
    fi ;;
  esac
}

# toru_step <what> <convention> command...: runs one step, its stderr shown live and kept, and on
# failure ends the job with the step's exit status and a line naming the cause. When a rank dies,
# srun and mpiexec end the others (with SIGTERM under srun, which is what the exit status then
# shows), so the line quotes the launcher's report of the rank that failed first.
toru_step() {
  local what=$1 convention=$2 errlog rc=0
  shift 2
  errlog=$(mktemp "${TMPDIR:-/tmp}/toru-job.XXXXXX")
  set +e
  # stdout stays where the caller sent it (through fd 3); stderr goes through tee.
  { "$@" 2>&1 1>&3 3>&- | tee "$errlog" >&2; rc=${PIPESTATUS[0]}; } 3>&1
  set -e
  if ((rc != 0)); then
    local first
    first=$(grep -m1 -E '^srun: error: .*tasks? [0-9-]+: |noticed that process rank' "$errlog" || true)
    rm -f "$errlog"
    echo "toru job $job_id: $what failed: $(toru_exit_cause "$rc" "$convention") (exit $rc)${first:+; first failure: $first}; its messages are above" >&2
    exit "$rc"
  fi
  rm -f "$errlog"
}

# toru_job <name> [args...]: runs a bundled program. Its arguments are, first found: the job script's
# command-line arguments, TORU_JOB_ARGS (how jobs/submit passes arguments through qsub), the
# program's own TORU_<X>_ARGS variable (even when set empty), the defaults below. The JSON result goes
# to $results/<name>-<job id>.json; any failure ends the job with the program's exit status and a
# line naming the cause.
toru_job() {
  local name=$1
  shift
  local program var defaults mpi=1 extra=()
  case $name in
    topo) program=toru-topo var=TORU_TOPO_ARGS defaults="" ;;
    plan) program=toru-plan var=TORU_PLAN_ARGS mpi=0 defaults="--model resnet50 --batch 256 --device v100-nvlink2" ;;
    alltoall-bench) program=toru-alltoall-bench var=TORU_A2A_ARGS defaults="" ;;
    fft-bench) program=toru-fft-bench var=TORU_FFT_ARGS defaults="--n3 128 --n1 4194304" ;;
    dns)
      program=toru-dns var=TORU_DNS_ARGS defaults="--n 128 --re 400 --t-end 1"
      extra=(--out "$results/dns-$job_id" --quiet)
      ;;
    train)
      program=toru-train var=TORU_TRAIN_ARGS defaults="--model fashion-cnn --epochs 5 --batch 64 --optimizer adam --lr 1e-3"
      extra=(--checkpoint "$results/train-$job_id" --quiet)
      ;;
    *)
      echo "toru job: unknown program '$name' (expected topo, plan, alltoall-bench, fft-bench, dns or train)" >&2
      exit 2
      ;;
  esac
  local args=()
  if (($# > 0)); then
    args=("$@")
  elif [[ -n ${TORU_JOB_ARGS:-} ]]; then
    read -r -a args <<<"$TORU_JOB_ARGS"
  elif [[ -n ${!var+set} ]]; then
    read -r -a args <<<"${!var}"
  else
    read -r -a args <<<"$defaults"
  fi
  local exe=$bin/$program/$program
  if [[ ! -x $exe ]]; then
    echo "toru job $job_id: $exe not found (build toru first: bash scripts/main.sh, or set TORU_BUILD)" >&2
    exit 2
  fi
  mkdir -p "$results"
  local out=$results/$name-$job_id.json
  echo "toru job $job_id: $program ${args[*]} on $ranks rank(s); results in $out"
  if ((mpi)); then
    toru_step "$program" toru launch "$ranks" "$exe" "${args[@]}" "${extra[@]}" --json >"$out"
  else
    toru_step "$program" toru "$exe" "${args[@]}" "${extra[@]}" --json >"$out"
  fi
  echo "results: $out"
}

# toru_run <program> [args...]: any MPI program (a path) on the job's ranks, its output in the job's.
toru_run() {
  if (($# == 0)) && [[ -n ${TORU_JOB_ARGS:-} ]]; then
    local words
    read -r -a words <<<"$TORU_JOB_ARGS"
    set -- "${words[@]}"
  fi
  if (($# < 1)); then
    echo "toru job: usage: run.sbatch PROGRAM [ARGS...] (or TORU_JOB_ARGS=\"PROGRAM ARGS...\")" >&2
    exit 2
  fi
  echo "toru job $job_id: $* on $ranks rank(s)"
  toru_step "$(basename "$1")" "" launch "$ranks" "$@"
}
