#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Starts an MPI program the right way for where it runs: srun inside a Slurm allocation (Open MPI
# gets its ranks through PMIx, --mpi=pmix), mpiexec otherwise (PBS, or no batch system: with --oversubscribe,
# and --allow-run-as-root as root). Either way one rank that dies ends the whole step, so a crash
# fails the job instead of leaving the other ranks waiting until the time limit.
# Usage: launch.sh <ranks> <program> [args...]
set -euo pipefail
if (($# < 2)); then
  echo "launch.sh: usage: launch.sh <ranks> <program> [args...]" >&2
  exit 2
fi
ranks=$1
shift
if ! [[ $ranks =~ ^[1-9][0-9]*$ ]]; then
  echo "launch.sh: ranks: expected a positive integer, got '$ranks'" >&2
  exit 2
fi
if [[ ! -x $1 ]]; then
  echo "launch.sh: program '$1' not found or not executable (build toru first: bash scripts/main.sh)" >&2
  exit 2
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
if [[ -n ${SLURM_JOB_ID:-} ]] && command -v srun >/dev/null; then
  # Ask for PMIx: many sites keep MpiDefault=none, under which Open MPI ranks started by srun abort.
  # TORU_SRUN_MPI picks another plugin (pmix_v4, pmi2); set empty, the site's default is used.
  mpi=${TORU_SRUN_MPI-pmix}
  exec srun --ntasks="$ranks" --kill-on-bad-exit=1 ${mpi:+--mpi="$mpi"} "$@"
fi
flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
exec mpiexec -n "$ranks" "${flags[@]}" "$@"
