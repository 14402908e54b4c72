#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job (README): installs dependencies, builds toru in Release, then runs the FFT
# benchmark on 4 ranks (toru vs FFTW-MPI on the same data, errors checked).
# Knobs: TORU_RANKS (4), TORU_N3 (128), TORU_N1 (4194304), TORU_REPS (5); extra arguments go to toru-fft-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${TORU_BUILD_DIR:-build-release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORU_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)"

ranks=${TORU_RANKS:-4}
mpiexec_flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && mpiexec_flags+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1

echo "== toru-topo: the layout derived for this ${ranks}-rank job"
mpiexec -n "$ranks" "${mpiexec_flags[@]}" "$build/apps/toru-topo/toru-topo"
echo
echo "== toru-fft-bench on ${ranks} ranks: toru vs FFTW-MPI, 3D ${TORU_N3:-128}^3 and 1D ${TORU_N1:-4194304} points, verified"
mpiexec -n "$ranks" "${mpiexec_flags[@]}" "$build/apps/toru-fft-bench/toru-fft-bench" \
  --n3 "${TORU_N3:-128}" --n1 "${TORU_N1:-4194304}" --reps "${TORU_REPS:-5}" "$@"
