#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The root-cause analysis (rule imbalance_root_cause) on real MPI applications from Debian packages,
# each with an input made imbalanced on purpose and a balanced control (docs/tune.md, "Root causes").
# An imbalanced run must name the cause (rank, and the call sites around its region); a control must
# raise no finding at all.
#   tune/bench/rootcause.sh [BUILD_DIR] [CASES...]    cases: lammps (default), qe, gromacs,
#   hpcc, cp2k (docs/tune.md: hpcc and cp2k do not pass today)
# Needs: apt-get install -y lammps hpcc cp2k quantum-espresso gromacs
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
shift || true
cases=("${@:-lammps}")
shim=$build/tune/libtoru_tune_pmpi.so
tool=$build/apps/toru-tune/toru-tune
# shellcheck source-path=SCRIPTDIR source=apps_common.sh
source "$here/apps_common.sh"  # the Open MPI settings, root, qe_inputs, gmx_inputs
out=$(mktemp -d /tmp/toru-rootcause.XXXXXX)
status=0

# run NAME EXPECT(cause|none) WORKDIR -- COMMAND...: runs under the shim, checks the findings.
run() {
  local name=$1 expect=$2 dir=$3
  shift 4
  mkdir -p "$dir"
  (cd "$dir" && mpiexec -n 2 --oversubscribe "${root[@]}" -x LD_PRELOAD="$shim" -x TORU_TUNE_DIR="$out/$name" \
    -x TORU_TUNE_TRACE=0 "$@" > "$out/$name.log" 2>&1)
  "$tool" advise "$out/$name" --json > "$out/$name.json" || { echo "FAIL $name: no profile"; status=1; return; }
  python3 - "$name" "$expect" "$out/$name.json" "$out/$name/profile.json" <<'PY' || status=1
import json, sys
name, expect, findings, profile = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))["findings"], json.load(open(sys.argv[4]))
rc = profile["root_causes"]
print(f"{name}: wall {profile['wall']:.2f} s, waiting {rc['total_wait']:.2f} s of {profile['wall'] * profile['nranks']:.2f} rank-s, "
      f"critical path compute per rank {[round(x, 2) for x in rc['critical_rank']]}")
for f in findings:
    print(f"  {f['rule']}: {f['diagnosis']}")
causes = [f for f in findings if f["rule"] == "imbalance_root_cause"]
ok = bool(causes) and findings[0]["rule"] == "imbalance_root_cause" if expect == "cause" else not findings
print(f"{'PASS' if ok else 'FAIL'} {name}: expected {'the cause named first' if expect == 'cause' else 'no finding'}")
sys.exit(0 if ok else 1)
PY
}

for c in "${cases[@]}"; do
  case $c in
    lammps)  # LJ melt, 2 ranks along x; atoms in the left half of the box against the whole box.
      run lammps_half cause "$out/lmp" -- lmp -in "$here/inputs/lammps_melt.in" -var half 1 -log none -screen none
      run lammps_full none "$out/lmp" -- lmp -in "$here/inputs/lammps_melt.in" -var half 0 -var steps 500 -log none -screen none
      ;;
    hpcc)  # HPL inside HPCC, 1x2 grid, N = 3000: two column blocks of 1500 against 30 blocks of 100.
      for nb in 1500 100; do
        mkdir -p "$out/hpcc$nb" && cp "$here/inputs/hpcc_nb$nb.txt" "$out/hpcc$nb/hpccinf.txt"
      done
      run hpcc_nb1500 cause "$out/hpcc1500" -- hpcc
      run hpcc_nb100 none "$out/hpcc100" -- hpcc
      ;;
    cp2k)  # classical MD (FIST), Lennard-Jones argon: lattice in the left half of the box against the whole box.
      mkdir -p "$out/cp2k"
      python3 "$here/inputs/cp2k_argon.py" half 400 > "$out/cp2k/half.inp"
      python3 "$here/inputs/cp2k_argon.py" full 400 > "$out/cp2k/full.inp"
      run cp2k_half cause "$out/cp2k" -- env OMP_NUM_THREADS=1 cp2k.psmp -i half.inp -o half.out
      run cp2k_full none "$out/cp2k" -- env OMP_NUM_THREADS=1 cp2k.psmp -i full.inp -o full.out
      ;;
    qe)  # Quantum ESPRESSO pw.x, bulk Si, 2 k-point pools: 3 k-points (2 + 1) against 4 (2 + 2).
      qe_inputs "$out/qe"
      run qe_k3 cause "$out/qe" -- env OMP_NUM_THREADS=1 pw.x -nk 2 -in "$here/inputs/qe_si_k3.in"
      run qe_k4 none "$out/qe" -- env OMP_NUM_THREADS=1 pw.x -nk 2 -in "$here/inputs/qe_si_k4.in"
      ;;
    gromacs)  # SPC/E water, 2 domains along x, load balancing off: water in the left half against the whole box.
      gmx_inputs "$out/gmx" half full ||
        { echo "FAIL gromacs: preparing the inputs, see $out/gmx/prepare.log"; status=1; continue; }
      for c in half full; do
        expect=none
        [ $c = half ] && expect=cause
        run gromacs_$c $expect "$out/gmx" -- gmx_mpi -quiet mdrun -s $c.tpr -deffnm $c -dd 2 1 1 -dlb no -ntomp 1 -nb cpu -pin off
      done
      ;;
    *) echo "unknown case $c" >&2; status=2 ;;
  esac
done
echo "run directories and logs: $out"
exit $status
