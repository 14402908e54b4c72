# SPDX-License-Identifier: BSD-3-Clause
# toru from Python: a distributed 3D FFT and an all-to-all on NumPy arrays (README, "From Python").
#   PYTHONPATH=build/python mpiexec -n 4 /usr/bin/python3 examples/python/quickstart.py
import numpy as np
from mpi4py import MPI

import toru

comm = MPI.COMM_WORLD
n = (32, 24, 20)
plan = toru.FFT3D(comm, n)  # collective; slab or pencil, chosen by toru

# This rank's part of the global array: shape plan.in_shape at global index plan.in_offset.
i, j, k = np.ogrid[tuple(slice(o, o + s) for o, s in zip(plan.in_offset, plan.in_shape))]
a = np.exp(2j * np.pi * (3 * i / n[0] + 5 * j / n[1] + 7 * k / n[2]))  # one plane wave

b = plan.forward(a)  # complex128 of plan.out_shape, at plan.out_offset (axes plan.out_axes)
peak = [(tuple(int(x) for x in np.add(np.unravel_index(np.argmax(abs(b)), b.shape), plan.out_offset)),
         float(abs(b).max()))] if b.size else []
peaks = [p for ps in comm.allgather(peak) for p in ps if p[1] > 1]
assert len(peaks) == 1 and peaks[0][0] == (3, 5, 7) and np.isclose(peaks[0][1], np.prod(n))
assert np.allclose(plan.backward(b), a)  # backward scales by 1/N, as numpy.fft.ifftn

# Single precision, real input: dtype picks toru's float plan; the constant 1 transforms to N at 0.
r2c = toru.FFT3DR2C(comm, n, dtype=np.float32)
c = r2c.forward(np.ones(r2c.in_shape, dtype=np.float32))  # complex64 of r2c.out_shape
at_zero = [complex(c[0, 0, 0])] if c.size and r2c.out_offset == (0, 0, 0) else []
assert c.dtype == np.complex64 and [complex(np.prod(n))] == [z for zs in comm.allgather(at_zero) for z in zs]

recv = toru.alltoall(comm, np.full(comm.size, comm.rank, dtype=np.int64))  # recv[j] == j
if comm.rank == 0:
    print(f"{comm.size} ranks, {plan.decomposition} {plan.grid}: peak at {peaks[0][0]} of height "
          f"{peaks[0][1]:.0f} (N = {np.prod(n)}); alltoall gave {recv.tolist()}")
