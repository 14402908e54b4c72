#!/usr/bin/env bash
# Starts an MPI program the right way for where it runs: srun inside a Slurm allocation,
# mpiexec otherwise (with --oversubscribe, and --allow-run-as-root as root).
# Usage: launch.sh <ranks> <program> [args...]
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 <ranks> <program> [args...]" >&2
  exit 2
fi
ranks=$1; shift
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
  exec srun --ntasks="$ranks" "$@"
fi
flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
exec mpiexec -n "$ranks" "${flags[@]}" "$@"
