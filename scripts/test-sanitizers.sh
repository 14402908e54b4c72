#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds toru under the sanitizer presets (CMakePresets.json: asan = ASan+UBSan, tsan = ThreadSanitizer)
# and runs the tests there. Not part of CI (.ci/run runs scripts/test.sh only): a cold sanitizer
# build alone takes longer than CI has left.
#
#   bash scripts/test-sanitizers.sh [asan|tsan|all] [--full]
#
# By default it runs the fast tier (ctest -LE long) under each sanitizer, to keep CI within its
# time on 2 cores; --full runs the whole suite, as `ctest --preset asan|tsan` does.
# The presets hold the sanitizer options (ASAN_OPTIONS, UBSAN_OPTIONS, TSAN_OPTIONS), so a run by
# hand with the presets and this script see the same findings.
set -euo pipefail
cd "$(dirname "$0")/.."

which=all
tier=(-LE long)
for arg in "$@"; do
  case "$arg" in
    asan | tsan | all) which=$arg ;;
    --full) tier=() ;;
    -h | --help)
      sed -n '2,10p' "$0"
      exit 0
      ;;
    *)
      echo "test-sanitizers: unknown argument '$arg' (expected asan, tsan, all or --full)" >&2
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
  cmake --build --preset "$p" --parallel "$(nproc)"
  built=$SECONDS
  if ! ctest --preset "$p" --timeout 600 "${tier[@]}" ${TORU_CTEST_ARGS:-}; then
    status=1
  fi
  echo "test-sanitizers: $p: build $((built - start)) s, tests $((SECONDS - built)) s"
done
exit $status
