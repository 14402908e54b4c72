# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by rootcause.sh and overhead_apps.sh: the Open MPI settings and the application inputs they
# share, so that the overhead is measured on the very inputs whose analysis rootcause.sh checks.
apps_inputs=$(cd "$(dirname "${BASH_SOURCE[0]}")/inputs" && pwd)
# No CMA single copy (refused in containers without ptrace rights); yield when idle, since the
# ranks share the machine's cores with other work.
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
# shellcheck disable=SC2034  # root is for the scripts that source this file
if [ "$(id -u)" = 0 ]; then root=(--allow-run-as-root); else root=(); fi

# qe_inputs DIR: the Si pseudopotential that qe_si_*.in name (pseudo_dir = '.'), from the package's examples.
qe_inputs() {
  mkdir -p "$1"
  zcat /usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz > "$1/Si.pz-vbc.UPF"
}

# gmx_inputs DIR NAME...: DIR/NAME.tpr for gromacs_water.mdp, SPC/E water in a 4.8 x 2.4 x 2.4 nm box:
# half = water only in the left half (domain 0 of -dd 2 1 1 owns it), full = the whole box filled.
# The tools' output goes to DIR/prepare.log; the status says whether all were made.
gmx_inputs() {
  local dir=$1
  shift
  mkdir -p "$dir"
  (cd "$dir" && export GMX_MAXBACKUP=-1 &&
    for c in "$@"; do
      case $c in
        half) gmx -quiet solvate -cs spc216.gro -box 2.4 2.4 2.4 -o half0.gro &&
          gmx -quiet editconf -f half0.gro -box 4.8 2.4 2.4 -noc -o half.gro ;;
        full) gmx -quiet solvate -cs spc216.gro -box 4.8 2.4 2.4 -o full.gro ;;
        *) false ;;
      esac || exit 1
    done &&
    for c in "$@"; do
      printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n[ system ]\nwater\n[ molecules ]\nSOL %d\n' \
        $(($(sed -n 2p "$c.gro") / 3)) > "$c.top" &&
        gmx -quiet grompp -f "$apps_inputs/gromacs_water.mdp" -c "$c.gro" -p "$c.top" -o "$c.tpr" || exit 1
    done) > "$dir/prepare.log" 2>&1
}
