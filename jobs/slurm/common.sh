# Sourced by the job scripts: finds the toru checkout, its binaries and the results folder.
# Under sbatch the script runs from Slurm's spool, so the checkout is the submit directory
# (submit from the repository root) unless TORU_HOME says otherwise.
set -euo pipefail
if [[ -n ${TORU_HOME:-} ]]; then
  repo=$TORU_HOME
elif [[ -n ${SLURM_SUBMIT_DIR:-} && -f ${SLURM_SUBMIT_DIR}/jobs/slurm/launch.sh ]]; then
  repo=$SLURM_SUBMIT_DIR
else
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fi
bin=${TORU_BUILD:-$repo/build-release}/apps
results=${TORU_RESULTS:-$repo/results}
mkdir -p "$results"
job_id=${SLURM_JOB_ID:-local-$(date +%Y%m%d-%H%M%S)}
ranks=${SLURM_NTASKS:-${TORU_RANKS:-4}}
launch() { bash "$repo/jobs/slurm/launch.sh" "$@"; }
echo "toru job ${job_id}: ${ranks} ranks, binaries in ${bin}, results in ${results}"
