# SPDX-License-Identifier: BSD-3-Clause
"""toru from Python: parallel 3D and 1D FFTs and all-to-alls on NumPy arrays over mpi4py
communicators (docs/python.md).

    from mpi4py import MPI
    import numpy as np, toru
    plan = toru.FFT3D(MPI.COMM_WORLD, (64, 64, 64))
    a = np.zeros(plan.in_shape, dtype=np.complex128)   # this rank's part, at plan.in_offset
    b = plan.forward(a)                                  # complex128 of plan.out_shape
    a2 = plan.backward(b)                                # a again (scaled by 1/N by default)

Every call is collective; toru agrees on the arguments across ranks, so a bad argument raises the
same exception on every rank: ValueError for invalid or mismatched arguments, RuntimeError otherwise.
"""
from mpi4py import MPI as _MPI  # noqa: F401  (initialises MPI before the extension module needs it)

from ._core import FFT1D, FFT3D, FFT3DR2C, __version__, alltoall, alltoallv

__all__ = ["FFT1D", "FFT3D", "FFT3DR2C", "alltoall", "alltoallv", "__version__"]
from .memory import MemoryPlan, plan  # noqa: E402  (torch is imported on first use)
__all__ += ["MemoryPlan", "plan"]
