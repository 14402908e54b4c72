#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs dependencies, builds toru and runs the whole test suite (README's test command).
# --quick runs the fast tier only: every test not labelled `long` (ctest -LE long), a few minutes on
# 2 cores; the slowest tests, the 5-8 rank registrations, Slurm/PBS and calibration are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
tier=()
case ${1:-} in
  "") ;;
  --quick) tier=(-LE long -j "$(nproc)") ;;
  -h | --help)
    echo "usage: bash scripts/test.sh [--quick]"
    exit 0
    ;;
  *)
    echo "scripts/test.sh: unknown option '$1' (expected --quick)" >&2
    exit 2
    ;;
esac
bash scripts/install-deps.sh
build=${TORU_BUILD_DIR:-build}
# ccache (installed above) makes a rebuild of unchanged sources, a second clone's included, cheap.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
    -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# Warnings are errors here (CI runs this script); a plain cmake build only prints them.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTORU_WARNINGS_AS_ERRORS=ON \
  "${launcher[@]}" ${TORU_CMAKE_ARGS:-}
cmake --build "$build" --parallel "$(nproc)"
ctest --test-dir "$build" --output-on-failure --timeout 600 "${tier[@]}" ${TORU_CTEST_ARGS:-}
