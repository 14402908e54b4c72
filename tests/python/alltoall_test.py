# SPDX-License-Identifier: BSD-3-Clause
"""toru.alltoall / toru.alltoallv against mpi4py's Alltoall / Alltoallv on the same buffers.

Several dtypes and block sizes (0, 1, primes), 2-D send arrays, caller-given recv arrays; for
alltoallv a seeded random count matrix (zeros included), packed and gapped displacements.
A failure on any rank makes every rank exit 1.
"""
import numpy as np
from mpi4py import MPI

import toru
from harness import Failures

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
t = Failures(comm, "python alltoall test")
check = t.check


def data(dtype, n, salt):
    rng = np.random.default_rng(1000 * rank + salt)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(n).astype(dtype)
    return rng.integers(-100, 100, n).astype(dtype)


def case_alltoall(dtype, block, two_d=False, given=False):
    name = f"alltoall {np.dtype(dtype).name} block {block} 2-D {two_d} recv given {given}"
    send = data(dtype, block * nranks, block)
    if two_d:
        send = send.reshape(nranks, block)
    ref = np.empty_like(send)
    comm.Alltoall(send, ref)
    recv = np.full_like(send, 7) if given else None
    got = toru.alltoall(comm, send, recv=recv)
    check(got.dtype == send.dtype and got.shape == send.shape, f"{name}: got {got.dtype} {got.shape}")
    check(np.array_equal(got, ref), f"{name}: differs from MPI_Alltoall")
    if given:
        check(got is recv, f"{name}: did not return recv")


def case_alltoallv(dtype, gaps, given, salt):
    name = f"alltoallv {np.dtype(dtype).name} gaps {gaps} recv given {given} salt {salt}"
    counts = np.random.default_rng(salt).integers(0, 6, (nranks, nranks))  # counts[i, j]: i sends to j
    counts[0, nranks - 1] = 0
    sc, rc = counts[rank, :], counts[:, rank]
    if gaps:
        sd = np.concatenate([[0], np.cumsum(sc + 2)[:-1]])
        rd = np.concatenate([[1], 1 + np.cumsum(rc + 3)[:-1]])
    else:
        sd = np.concatenate([[0], np.cumsum(sc)[:-1]])
        rd = np.concatenate([[0], np.cumsum(rc)[:-1]])
    send = data(dtype, int(max(sd + sc)) if nranks else 0, salt)
    rlen = int(max(rd + rc))
    ref = np.zeros(rlen, dtype=dtype)
    comm.Alltoallv([send, (sc, sd)], [ref, (rc, rd)])
    recv = np.zeros(rlen, dtype=dtype) if (given or gaps) else None
    kw = dict(sdispls=list(sd), rdispls=list(rd)) if gaps else {}
    got = toru.alltoallv(comm, send, list(sc), list(rc), recv=recv, **kw)
    check(got.dtype == np.dtype(dtype), f"{name}: dtype {got.dtype}")
    n = min(len(got), rlen)
    mask = np.zeros(rlen, dtype=bool)
    for j in range(nranks):
        mask[rd[j]:rd[j] + rc[j]] = True
    check(len(got) >= int(rc.sum()) and np.array_equal(got[:n][mask[:n]], ref[mask]),
          f"{name}: differs from MPI_Alltoallv")


cases = []
for dt in (np.float64, np.int32, np.complex128, np.uint8, np.float32):
    for block in (0, 1, 7, 1000):
        cases.append(lambda dt=dt, b=block: case_alltoall(dt, b))
cases.append(lambda: case_alltoall(np.float64, 5, two_d=True))
cases.append(lambda: case_alltoall(np.complex128, 13, given=True))
cases.append(lambda: case_alltoall(np.int64, 3, two_d=True, given=True))
for salt, (dt, gaps, given) in enumerate([(np.float64, False, False), (np.int32, True, True),
                                           (np.complex128, False, True), (np.uint8, True, False)]):
    cases.append(lambda dt=dt, g=gaps, v=given, s=salt: case_alltoallv(dt, g, v, s))
# Repeated calls with the same signature hit toru's plan cache; another signature plans again.
cases.append(lambda: [case_alltoall(np.float64, 7) for _ in range(3)])

t.run_cases(cases)
t.finish()
