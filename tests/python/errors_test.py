# SPDX-License-Identifier: BSD-3-Clause
"""Bad arguments raise the same exception on every rank, none hangs, and the plan stays usable.

Each case passes a bad argument on every rank or on one rank only (the last), then gathers what
every rank raised: all ranks must raise the expected type (ValueError for invalid or mismatched
arguments) with the same message. A rank that raised alone would leave the others in a collective:
the test would hang and ctest's timeout fail it. A failure on any rank makes every rank exit 1.
"""
import numpy as np
from mpi4py import MPI

import toru
from harness import Failures

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
last = rank == nranks - 1
t = Failures(comm, "python errors test")
expect_raise = t.expect_raise
plan = toru.FFT3D(comm, (6, 5, 7))
r2c = toru.FFT3DR2C(comm, (5, 6, 13))
plan1 = toru.FFT1D(comm, 210)
plan_f = toru.FFT3D(comm, (6, 5, 7), dtype=np.complex64)
r2c_f = toru.FFT3DR2C(comm, (5, 6, 13), dtype=np.float32)
plan1_f = toru.FFT1D(comm, 210, dtype=np.complex64)
good = np.ones(plan.in_shape, dtype=np.complex128)
strided = np.ones(tuple(plan.in_shape[:2]) + (2 * plan.in_shape[2],), dtype=np.complex128)[..., ::2]


def shape_of(s):
    return s if not last else (s[0] + 1,) + tuple(s[1:])


cases = [
    ("c2c forward, float64 on every rank",
     lambda: plan.forward(np.ones(plan.in_shape)), "complex128"),
    ("c2c forward, wrong shape on the last rank",
     lambda: plan.forward(np.ones(shape_of(plan.in_shape), dtype=np.complex128)), "a: expected"),
    ("c2c forward, complex64 on the last rank",
     lambda: plan.forward(good.astype(np.complex64) if last else good), "complex128"),
    ("c2c forward, a list on the last rank",
     lambda: plan.forward(good.tolist() if last else good), "numpy.ndarray"),
    ("c2c forward, not C-contiguous on the last rank",
     lambda: plan.forward(strided if last else good), "a: expected"),
    ("c2c forward, out of the wrong shape on the last rank",
     lambda: plan.forward(good, out=np.empty(shape_of(plan.out_shape), dtype=np.complex128) if last else None), "out"),
    ("c2c backward, scale 'half' on the last rank",
     lambda: plan.backward(good, scale="half" if last else "full"), "scale"),
    ("r2c forward, complex input on every rank",
     lambda: r2c.forward(np.ones(r2c.in_shape, dtype=np.complex128)), "float64"),
    ("r2c backward, wrong shape on the last rank",
     lambda: r2c.backward(np.ones(shape_of(r2c.out_shape) if last else r2c.out_shape, dtype=np.complex128)), None),
    ("1d forward, wrong length on the last rank",
     lambda: plan1.forward(np.ones(plan1.in_shape[0] + (1 if last else 0), dtype=np.complex128)), "a: expected"),
    ("FFT3D with a size 0 on every rank", lambda: toru.FFT3D(comm, (4, 0, 4)), None),
    ("FFT3D with two sizes on the last rank", lambda: toru.FFT3D(comm, (4, 4) if last else (4, 4, 4)), "shape"),
    ("FFT3D with decomposition 'cube' on the last rank",
     lambda: toru.FFT3D(comm, (4, 4, 4), decomposition="cube" if last else "auto"), "decomposition"),
    ("FFT1D with n1 not dividing n on every rank", lambda: toru.FFT1D(comm, 210, n1=4), "n1"),
    # Single-precision plans take only their dtype; a plan's dtype must be one toru has.
    ("complex64 c2c forward, complex128 on the last rank",
     lambda: plan_f.forward(good if last else good.astype(np.complex64)), "complex64"),
    ("complex64 c2c forward, complex128 out= on every rank",
     lambda: plan_f.forward(good.astype(np.complex64), out=np.empty(plan_f.out_shape, dtype=np.complex128)), "out"),
    ("float32 r2c forward, float64 input on the last rank",
     lambda: r2c_f.forward(np.ones(r2c_f.in_shape, dtype=np.float64 if last else np.float32)), "float32"),
    ("float32 r2c backward, complex128 input on every rank",
     lambda: r2c_f.backward(np.ones(r2c_f.out_shape, dtype=np.complex128)), "complex64"),
    ("complex64 1d forward, complex128 on every rank",
     lambda: plan1_f.forward(np.ones(plan1_f.in_shape, dtype=np.complex128)), "complex64"),
    ("FFT3D with dtype float32 on the last rank",
     lambda: toru.FFT3D(comm, (4, 4, 4), dtype=np.float32 if last else np.complex64), "dtype"),
    ("FFT3DR2C with dtype complex64 on every rank",
     lambda: toru.FFT3DR2C(comm, (4, 4, 4), dtype=np.complex64), "dtype"),
    ("FFT1D with dtype float16 on the last rank",
     lambda: toru.FFT1D(comm, 210, dtype=np.float16 if last else np.complex128), "dtype"),
    ("FFT3D with dtype 'complex' + 'ish' (no dtype) on the last rank",
     lambda: toru.FFT3D(comm, (4, 4, 4), dtype="complexish" if last else "complex128"), "dtype"),
    ("alltoall, recv of another dtype on the last rank",
     lambda: toru.alltoall(comm, np.ones(nranks), recv=np.ones(nranks, dtype=np.int64 if last else np.float64)), "recv"),
    ("alltoallv, too few sendcounts on the last rank",
     lambda: toru.alltoallv(comm, np.ones(nranks), [1] * (nranks - (1 if last else 0)), [1] * nranks), "sendcounts"),
    ("alltoallv, send shorter than its counts on the last rank",
     lambda: toru.alltoallv(comm, np.ones(nranks - (1 if last else 0)), [1] * nranks, [1] * nranks), "send"),
]
if nranks > 1:
    cases += [
    ("alltoall, a size not divisible by the ranks on the last rank",
     lambda: toru.alltoall(comm, np.ones(3 * nranks + (1 if last else 0))), "send"),
        ("FFT3D whose shape differs on the last rank",
         lambda: toru.FFT3D(comm, (8, 8, 9) if last else (8, 8, 8)), "n[2]"),
        ("FFT1D whose n differs on the last rank", lambda: toru.FFT1D(comm, 211 if last else 210), "n"),
        ("FFT3D whose precision differs on the last rank",
         lambda: toru.FFT3D(comm, (8, 8, 8), dtype=np.complex64 if last else np.complex128), "precision"),
        ("FFT3DR2C whose precision differs on the last rank",
         lambda: toru.FFT3DR2C(comm, (8, 8, 8), dtype=np.float32 if last else np.float64), "precision"),
        ("FFT1D whose precision differs on the last rank",
         lambda: toru.FFT1D(comm, 210, dtype=np.complex64 if last else np.complex128), "precision"),
        ("c2c backward whose scale differs on the last rank",
         lambda: plan.backward(good, scale="none" if last else "full"), "scale"),
        ("alltoall whose block differs on the last rank",
         lambda: toru.alltoall(comm, np.ones(2 * nranks if last else nranks)), "elements per rank"),
        ("alltoall whose dtype size differs on the last rank",
         lambda: toru.alltoall(comm, np.ones(nranks, dtype=np.float32 if last else np.float64)), "element size"),
        ("alltoallv whose send count does not match the peer's receive count",
         lambda: toru.alltoallv(comm, np.ones(2 * nranks), [2 if (last and j == 0) else 1 for j in range(nranks)],
                                [1] * nranks), None),
    ]

for name, call, mentions in cases:
    t.guarded(name, lambda call=call, name=name, mentions=mentions: expect_raise(name, call, mentions=mentions))

# A non-communicator is refused on the ranks that pass it (here: all), with TypeError.
t.guarded("non-communicator", lambda: expect_raise("FFT3D on a non-communicator",
                                                   lambda: toru.FFT3D("world", (4, 4, 4)), expected=TypeError))



def after_the_errors():
    """After all that, the plans still work and toru's state is intact."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5, 7)) + 1j * rng.standard_normal((6, 5, 7))
    o, s = plan.in_offset, plan.in_shape
    a = np.ascontiguousarray(x[o[0]:o[0] + s[0], o[1]:o[1] + s[1], o[2]:o[2] + s[2]])
    b = plan.forward(a)
    ref = np.fft.fftn(x)
    oo, os_ = plan.out_offset, plan.out_shape
    want = np.transpose(ref, plan.out_axes)[oo[0]:oo[0] + os_[0], oo[1]:oo[1] + os_[1], oo[2]:oo[2] + os_[2]]
    if not np.allclose(b, want, rtol=0, atol=1e-10 * np.abs(ref).max()):
        t.add("the plan gives wrong results after the errors")
    got = toru.alltoall(comm, np.arange(nranks, dtype=np.float64) + 10 * rank)
    if not np.array_equal(got, np.arange(nranks) * 10 + rank):
        t.add(f"alltoall after the errors gave {got}")


t.guarded("after the errors", after_the_errors)
t.finish()
