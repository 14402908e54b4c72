#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds toru under the sanitizer presets (CMakePresets.json: asan = ASan+UBSan, tsan = ThreadSanitizer)
# and runs the tests there.
#
#   bash scripts/test-sanitizers.sh [asan|tsan|all] [--ci | --full]
#
# By default it builds everything and runs the fast tier (ctest -LE long) under each sanitizer;
# --full runs the whole suite, as `ctest --preset asan|tsan` does. --ci (what .ci/run runs) builds
# only the target toru_sanitize_tier - the programs that run threads beside MPI or manage their own
# buffers (cmake/ToruTesting.cmake, TORU_SANITIZE_TIER) - and runs their tests (label `sanitize`):
# a whole sanitized build does not fit in CI's time on 2 cores next to the main build.
# The presets hold the sanitizer options (ASAN_OPTIONS, UBSAN_OPTIONS, TSAN_OPTIONS), so a run by
# hand with the presets and this script see the same findings.
set -euo pipefail
cd "$(dirname "$0")/.."

which=all
tier=(-LE long)
targets=()
for arg in "$@"; do
  case "$arg" in
    asan | tsan | all) which=$arg ;;
    --full) tier=() ;;
    --ci)
      tier=(-L sanitize -LE long)
      targets=(--target toru_sanitize_tier)
      ;;
    -h | --help)
      sed -n '2,12p' "$0"
      exit 0
      ;;
    *)
      echo "test-sanitizers: unknown argument '$arg' (expected asan, tsan, all, --ci or --full)" >&2
      exit 2
      ;;
  esac
done
presets=(asan tsan)
[[ $which != all ]] && presets=("$which")

bash scripts/install-deps.sh

# ccache where present: the two presets share nothing with the main build, but reruns do.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

status=0
for p in "${presets[@]}"; do
  start=$SECONDS
  cmake --preset "$p" "${launcher[@]}" ${TORU_CMAKE_ARGS:-}
  cmake --build --preset "$p" --parallel "$(nproc)" "${targets[@]}"
  built=$SECONDS
  if ! ctest --preset "$p" --timeout 600 "${tier[@]}" ${TORU_CTEST_ARGS:-}; then
    status=1
  fi
  echo "test-sanitizers: $p: build $((built - start)) s, tests $((SECONDS - built)) s"
done
exit $status
