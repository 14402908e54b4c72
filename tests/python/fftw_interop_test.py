# SPDX-License-Identifier: BSD-3-Clause
"""toru's plans survive another FFTW user in the same process: mpi4py-fft calls
fftw_plan_with_nthreads, which in FFTW 3.3 runs fftw_cleanup() (invalidating every plan) unless
FFTW's threads were initialised; toru's module initialises them at import. Without that, destroying
the toru plan below segfaulted in fftw_destroy_plan (fftwf_destroy_plan for complex64, until the
module initialised FFTW's single-precision threads too). Skipped (exit 77) without mpi4py-fft."""
import sys

import numpy as np
from mpi4py import MPI

import toru

try:
    from mpi4py_fft import PFFT, newDistArray
except ImportError:
    print("mpi4py-fft is not installed: skipped")
    sys.exit(77)

comm = MPI.COMM_WORLD


def survives(dtype, n):
    """A toru plan of this precision runs, and is destroyed and made again, around mpi4py-fft's plan
    of the same precision (fftw_* for complex128, fftwf_* for complex64)."""
    plan = toru.FFT3D(comm, (n, n, n), dtype=dtype)
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(plan.in_shape) + 0j).astype(dtype)
    before = plan.forward(a)
    peer = PFFT(comm, [n, n, n], axes=(0, 1, 2), dtype=dtype, slab=True, backend="fftw", planner_effort="FFTW_ESTIMATE")
    u, v = newDistArray(peer, False), newDistArray(peer, True)
    peer.forward(u, v)
    after = plan.forward(a)  # the plan still runs, and gives the same result
    ok = np.array_equal(before, after)
    del plan
    plan = toru.FFT3D(comm, (n, n, n), dtype=dtype)  # and a new plan works after the old one is destroyed
    ok = ok and np.array_equal(plan.forward(a), before)
    peer.destroy()
    del plan
    return ok


# The sizes at which the crash was seen without the fix (32^3 in single precision did not show it).
ok = survives(np.complex128, 64)
ok = survives(np.complex64, 128) and ok
bad = comm.allreduce(0 if ok else 1, op=MPI.SUM)
if comm.rank == 0:
    print(f"fftw interop at {comm.size} ranks: {'ok' if not bad else 'FAILED'}")
sys.exit(1 if bad else 0)
