#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes a CP2K input (classical MD, FIST, Lennard-Jones argon) to stdout.
   cp2k_argon.py half|full [STEPS]: an fcc lattice in the left half of a 2:1:1 box (imbalanced when
   the ranks split the box along x), or the same lattice filling the whole box (the control)."""
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "full"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
a, n = 5.26, 6  # fcc argon near its triple point; n x n x n cells per half box
lx, ly = 2 * n * a, n * a
basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
cells_x = n if mode == "half" else 2 * n
coords = [((i + bx) * a, (j + by) * a, (k + bz) * a)
          for i in range(cells_x) for j in range(n) for k in range(n) for bx, by, bz in basis]
print(f"""&GLOBAL
  PROJECT argon_{mode}
  RUN_TYPE MD
  PRINT_LEVEL LOW
&END GLOBAL
&MOTION
  &MD
    ENSEMBLE NVE
    STEPS {steps}
    TIMESTEP 5
    TEMPERATURE 85
    # Rank 0 alone formats and writes these every step: left on, they are an imbalance of their own
    # (1.2 s over 400 steps, named on the control too).
    &PRINT
      &ENERGY OFF
      &END
      &PROGRAM_RUN_INFO OFF
      &END
    &END PRINT
  &END MD
  &PRINT
    &TRAJECTORY OFF
    &END
    &VELOCITIES OFF
    &END
    &RESTART OFF
    &END
    &RESTART_HISTORY OFF
    &END
  &END PRINT
&END MOTION
&FORCE_EVAL
  METHOD FIST
  &MM
    &FORCEFIELD
      &NONBONDED
        &LENNARD-JONES
          ATOMS Ar Ar
          EPSILON [K_e] 119.8
          SIGMA [angstrom] 3.405
          RCUT [angstrom] 8.5
        &END LENNARD-JONES
      &END NONBONDED
      &CHARGE
        ATOM Ar
        CHARGE 0.0
      &END CHARGE
    &END FORCEFIELD
    &POISSON
      &EWALD
        EWALD_TYPE NONE
      &END EWALD
    &END POISSON
  &END MM
  &SUBSYS
    &CELL
      ABC [angstrom] {lx:.4f} {ly:.4f} {ly:.4f}
    &END CELL
    &COORD""")
for x, y, z in coords:
    print(f"      Ar {x:.4f} {y:.4f} {z:.4f}")
print("""    &END COORD
  &END SUBSYS
&END FORCE_EVAL""")
