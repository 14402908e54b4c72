# SPDX-License-Identifier: BSD-3-Clause
"""toru.FFT3D / FFT3DR2C / FFT1D against numpy.fft at awkward sizes (primes, uneven splits), in double
precision and in single (dtype=complex64 / float32: toru's float plans, against numpy's double
transform of the same float data with a single-precision tolerance).

Every rank builds the same global array (seeded), transforms its part with toru and compares its
output box with numpy.fft's transform of the whole array; the boxes of all ranks must also tile the
global output exactly once (counted with an mpi4py allreduce), and backward must give the input back.
A failure on any rank makes every rank exit 1 (allreduced), so mpiexec reports it.
"""
import os

import numpy as np
from mpi4py import MPI

import toru
from harness import Failures

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
t = Failures(comm, "python fft test")
check = t.check


# Max error relative to the largest coefficient: double, and single (float32's epsilon 6e-8 times
# log2 N and a margin; these sizes' errors are ~3e-7).
TOL = {np.complex128: 1e-12, np.complex64: 1e-5}
REAL = {np.complex128: np.float64, np.complex64: np.float32}


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)) if b.size else 0.0


def box(arr, offset, shape):
    return arr[tuple(slice(o, o + s) for o, s in zip(offset, shape))]


def coverage(global_shape, offset, shape):
    """Each point of the global array covered by exactly one rank's box."""
    mine = np.zeros(global_shape, dtype=np.int32)
    box(mine, offset, shape)[...] += 1
    total = np.empty_like(mine)
    comm.Allreduce(mine, total, op=MPI.SUM)
    return bool(np.all(total == 1))


def case_c2c(shape, dtype=np.complex128, **kw):
    name = f"c2c {shape} {np.dtype(dtype).name} {kw}"
    tol = TOL[dtype]
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    ref = np.fft.fftn(x.astype(np.complex128))
    plan = toru.FFT3D(comm, shape, dtype=dtype, **kw)
    check(tuple(plan.shape) == tuple(shape), f"{name}: shape {plan.shape}")
    check(plan.dtype == dtype and plan.out_dtype == dtype, f"{name}: plan dtypes {plan.dtype} {plan.out_dtype}")
    a = np.ascontiguousarray(box(x, plan.in_offset, plan.in_shape))
    keep = a.copy()
    b = plan.forward(a)
    check(b.dtype == dtype and b.shape == tuple(plan.out_shape), f"{name}: forward gave {b.dtype} {b.shape}")
    check(np.array_equal(a, keep), f"{name}: forward changed its input")
    ref_t = np.transpose(ref, plan.out_axes)
    e = rel_err(b, box(ref_t, plan.out_offset, plan.out_shape))
    check(e < tol, f"{name}: forward error {e:.2e} against numpy.fft.fftn")
    check(coverage(x.shape, plan.in_offset, plan.in_shape), f"{name}: input boxes do not tile the array")
    check(coverage(ref_t.shape, plan.out_offset, plan.out_shape), f"{name}: output boxes do not tile the array")
    back = plan.backward(b)
    e = rel_err(back, a)
    check(back.dtype == dtype and back.shape == tuple(plan.in_shape) and e < tol, f"{name}: backward error {e:.2e}")
    # out= writes into the caller's array; scale='symmetric' divides by sqrt(N) both ways.
    out = np.empty(plan.out_shape, dtype=dtype)
    r = plan.forward(a, out=out, scale="symmetric")
    check(r is out, f"{name}: forward(out=) did not return out")
    e = rel_err(out * np.sqrt(x.size), box(ref_t, plan.out_offset, plan.out_shape))
    check(e < tol, f"{name}: forward(out=, scale='symmetric') error {e:.2e}")
    unscaled = plan.backward(b, scale="none")
    e = rel_err(unscaled / x.size, a)
    check(e < tol, f"{name}: backward(scale='none') error {e:.2e}")
    return plan


def case_r2c(shape, dtype=np.complex128, **kw):
    real = REAL[dtype]
    name = f"r2c {shape} {np.dtype(real).name} {kw}"
    tol = TOL[dtype]
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(real)
    ref = np.fft.rfftn(x.astype(np.float64))
    plan = toru.FFT3DR2C(comm, shape, dtype=real, **kw)
    check(plan.dtype == real and plan.out_dtype == dtype, f"{name}: plan dtypes {plan.dtype} {plan.out_dtype}")
    a = np.ascontiguousarray(box(x, plan.in_offset, plan.in_shape))
    keep = a.copy()
    b = plan.forward(a)
    b0 = b.copy()
    check(np.array_equal(a, keep), f"{name}: forward changed its input")
    ref_t = np.transpose(ref, plan.out_axes)
    check(b.dtype == dtype and b.shape == tuple(plan.out_shape), f"{name}: forward gave {b.dtype} {b.shape}")
    e = rel_err(b, box(ref_t, plan.out_offset, plan.out_shape))
    check(e < tol, f"{name}: forward error {e:.2e} against numpy.fft.rfftn")
    check(coverage(ref_t.shape, plan.out_offset, plan.out_shape), f"{name}: output boxes do not tile the array")
    check(coverage(x.shape, plan.in_offset, plan.in_shape), f"{name}: input boxes do not tile the array")
    back = plan.backward(b)
    e = rel_err(back, a)
    check(back.dtype == real and back.shape == tuple(plan.in_shape) and e < tol,
          f"{name}: backward gave {back.dtype} {back.shape}, error {e:.2e}")
    out = np.empty(plan.out_shape, dtype=dtype)
    plan.forward(a, out=out)
    e = rel_err(out, box(ref_t, plan.out_offset, plan.out_shape))
    check(e < tol, f"{name}: forward(out=) error {e:.2e}")
    rout = np.empty(plan.in_shape, dtype=real)
    plan.backward(b, out=rout)
    check(rel_err(rout, a) < tol, f"{name}: backward(out=) differs")
    check(np.array_equal(b, b0), f"{name}: backward changed its input")
    return plan


DIRECT = "middle layout M, direct window"


def case_r2c_direct(shape, dtype=np.complex128, **kw):
    """r2c forced onto the direct window, where toru's plan reads and writes NumPy's packed rows
    straight (no copies in the binding); refused on every rank where that window does not apply."""
    os.environ["TORU_FFT_STRATEGY"] = DIRECT
    try:
        plan = case_r2c(shape, dtype, decomposition="slab", **kw)
    except ValueError as e:
        check(DIRECT in str(e) or "TORU_FFT_STRATEGY" in str(e), f"r2c {shape} on the direct window: {e}")
        return
    finally:
        del os.environ["TORU_FFT_STRATEGY"]
    check(plan.strategy == DIRECT, f"r2c {shape} forced onto the direct window ran {plan.strategy}")


def case_shared(shape, real, dtype=np.complex128):
    """forward into plan.shared_out() (node memory: on the direct window every rank writes every
    rank's part) and backward from it, against numpy.fft; the direct window forced, refused on every
    rank where it does not apply."""
    name = f"shared_out {'r2c' if real else 'c2c'} {shape} {np.dtype(dtype).name}"
    tol = TOL[dtype]
    os.environ["TORU_FFT_STRATEGY"] = DIRECT
    try:
        if real:
            plan = toru.FFT3DR2C(comm, shape, decomposition="slab", dtype=REAL[dtype])
        else:
            plan = toru.FFT3D(comm, shape, decomposition="slab", dtype=dtype)
    except ValueError as e:
        check(DIRECT in str(e) or "TORU_FFT_STRATEGY" in str(e), f"{name}: {e}")
        return
    finally:
        del os.environ["TORU_FFT_STRATEGY"]
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape)
    if not real:
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(REAL[dtype] if real else dtype)
    ref = np.fft.rfftn(x.astype(np.float64)) if real else np.fft.fftn(x.astype(np.complex128))
    a = box(x, plan.in_offset, plan.in_shape).copy()
    s = plan.shared_out()
    check(s.shape == plan.out_shape and s.dtype == plan.out_dtype, f"{name}: {s.shape} {s.dtype}")
    r = plan.forward(a, out=s)
    check(np.shares_memory(r, s), f"{name}: forward(out=shared) returned another array")
    e = rel_err(s, box(ref, plan.out_offset, plan.out_shape))
    check(e < tol, f"{name}: forward error {e:.2e} against numpy.fft")
    back = plan.backward(s)
    e = rel_err(back, a)
    check(e < tol, f"{name}: backward from the shared array differs from the input ({e:.2e})")
    check(np.shares_memory(plan.shared_out(), s), f"{name}: a second shared_out() is other memory")


def case_1d(n, dtype=np.complex128, **kw):
    name = f"1d {n} {np.dtype(dtype).name} {kw}"
    tol = TOL[dtype]
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    ref = np.fft.fft(x.astype(np.complex128))
    plan = toru.FFT1D(comm, n, dtype=dtype, **kw)
    check(plan.dtype == dtype, f"{name}: plan dtype {plan.dtype}")
    check(plan.n == n and plan.n1 * plan.n2 == n, f"{name}: n1 {plan.n1} x n2 {plan.n2}")
    (i0,), (ic,) = plan.in_offset, plan.in_shape
    a = x[i0:i0 + ic].copy()
    b = plan.forward(a)
    (o0,), (oc,) = plan.out_offset, plan.out_shape
    if kw.get("output", "natural") == "natural":
        want = ref[o0:o0 + oc]
    else:  # scrambled: global position j = k1 * n2 + k2 holds X[k1 + n1 * k2]
        j = np.arange(o0, o0 + oc)
        want = ref[j // plan.n2 + plan.n1 * (j % plan.n2)]
    e = rel_err(b, want)
    check(b.dtype == dtype and b.shape == (oc,) and e < tol, f"{name}: forward error {e:.2e} against numpy.fft.fft")
    check(coverage((n,), plan.in_offset, plan.in_shape), f"{name}: input blocks do not tile")
    check(coverage((n,), plan.out_offset, plan.out_shape), f"{name}: output blocks do not tile")
    back = plan.backward(b)
    check(back.dtype == dtype and rel_err(back, a) < tol, f"{name}: backward differs from the input")


cases = [
    lambda: case_c2c((7, 9, 11)),
    lambda: case_c2c((7, 9, 11), decomposition="slab"),
    lambda: case_c2c((7, 9, 11), decomposition="pencil"),
    lambda: case_c2c((7, 9, 11), output="transposed"),
    lambda: case_c2c((5, 3, 17), decomposition="pencil", output="transposed"),
    lambda: case_c2c((2, 13, 4)),  # fewer planes than ranks at 3 and 4
    lambda: case_r2c((5, 6, 13)),
    lambda: case_r2c((5, 6, 13), decomposition="pencil", output="transposed"),
    lambda: case_r2c((7, 5, 8), output="transposed"),
    lambda: case_1d(2 * 3 * 5 * 7),
    lambda: case_1d(2 * 3 * 5 * 7, output="transposed"),
    lambda: case_1d(2 * 3 * 5 * 7, n1=14),
    lambda: case_1d(97),  # prime: n1 = 1, everything on one rank
    lambda: case_1d(1001, output="transposed"),
    # Single precision: the same awkward sizes through toru's float plans.
    lambda: case_c2c((7, 9, 11), dtype=np.complex64),
    lambda: case_c2c((5, 3, 17), dtype=np.complex64, decomposition="pencil", output="transposed"),
    lambda: case_c2c((2, 13, 4), dtype=np.complex64),
    lambda: case_r2c((5, 6, 13), dtype=np.complex64),
    lambda: case_r2c((5, 6, 13), dtype=np.complex64, decomposition="pencil", output="transposed"),
    lambda: case_r2c((7, 5, 8), dtype=np.complex64, output="transposed"),
    lambda: case_1d(2 * 3 * 5 * 7, dtype=np.complex64),
    lambda: case_1d(1001, dtype=np.complex64, output="transposed"),
    # The direct window, both precisions, both orders, odd n2 (packed rows of odd length).
    lambda: case_r2c_direct((6, 10, 13)),
    lambda: case_r2c_direct((9, 8, 7), output="transposed"),
    lambda: case_r2c_direct((6, 10, 13), dtype=np.complex64),
    lambda: case_r2c_direct((16, 12, 10), dtype=np.complex64, output="transposed"),
    # shared_out(): columns long enough to tile (45 x 126), uneven splits of 45 and 20.
    lambda: case_shared((45, 20, 126), real=False),
    lambda: case_shared((45, 20, 126), real=True),
    lambda: case_shared((45, 20, 126), real=True, dtype=np.complex64),
]
t.run_cases(cases)
t.finish()
