#!/usr/bin/env bash
# The main job (README): installs dependencies, builds toru in Release, then shows it working.
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
echo "== toru-topo: a 16x16x32 torus, 64 KiB per pair all-to-all"
"$build/apps/toru-topo/toru-topo" --torus 16x16x32 --alltoall-bytes 65536
