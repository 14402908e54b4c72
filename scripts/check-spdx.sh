#!/usr/bin/env bash
# Every source file of toru carries `SPDX-License-Identifier: BSD-3-Clause` in its first 3 lines
# (LICENSE). Prints the files that do not and exits 1 if there are any.
#   bash scripts/check-spdx.sh [repo root]     (default: the repository this script is in)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
dirs=()
for d in core topology comm fft swap train tune stream apps tests examples bench python scripts cmake jobs; do
  [[ -d $d ]] && dirs+=("$d")
done
missing=0
while IFS= read -r -d '' f; do
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-3-Clause'; then
    echo "$f"
    missing=$((missing + 1))
  fi
done < <(find "${dirs[@]}" CMakeLists.txt .ci -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \
  -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' -o -name '*.f90' -o -name '*.F90' -o -name '*.in' \
  -o -name '*.py' -o -name '*.sh' -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name run -o -name submit -o -name '*.pbs' -o -name '*.sbatch' \) -print0)
if ((missing > 0)); then
  echo "check-spdx: $missing file(s) without 'SPDX-License-Identifier: BSD-3-Clause' in their first 3 lines" >&2
  exit 1
fi
echo "check-spdx: every source file has its SPDX line"
