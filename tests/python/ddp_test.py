# SPDX-License-Identifier: BSD-3-Clause
"""toru's DDP communication hook: real PyTorch DDP trainings whose weights do not depend on
bucket_cap_mb, where gloo's do.

Each rank trains the same MLP on its own data for STEPS SGD steps, four ways: DDP over gloo and DDP
with toru.ddp's hook, each with bucket_cap_mb 25 (one bucket) and 0.001 (after DDP's first step, a
first bucket of up to 1 MB, DDP's fixed first-bucket size, then a bucket per tensor). The MLP's 2.2 MB of
parameters make the two bucketings differ. Asserted:
- toru (the small buckets reduced on the hook's worker thread, the large one inside the hook): both
  bucketings end with bit-identical weights, the same on every rank, and bit-identical to
  an independent reference without DDP (each rank's gradients gathered with mpi4py and added in rank
  order in NumPy float32, divided by the rank count, then the same SGD step);
- gloo: the two bucketings end with different weights (what the hook fixes; this also shows that the
  sizes chosen make the order of additions matter, so the toru assertions can fail), both close to
  the reference;
- bad input raises ValueError on every rank: a communicator in another rank order than the process
  group, a non-DDP model, buffers of different sizes on one rank.
At 2 ranks every sum of two numbers is exact whatever the order, so the test runs at 3 and 4.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from mpi4py import MPI

try:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    print(f"SKIPPED: PyTorch is not importable ({e})")
    sys.exit(77)

import toru.ddp
from harness import Failures

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
STEPS, BATCH, IN, HIDDEN, CLASSES = 20, 16, 64, 512, 10
t = Failures(comm, "python ddp test")
torch.set_num_threads(1)

store_dir = comm.bcast(tempfile.mkdtemp(prefix="toru-ddp-test-") if rank == 0 else None)
dist.init_process_group("gloo", store=dist.FileStore(os.path.join(store_dir, "store"), nranks), rank=rank,
                        world_size=nranks)


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                               torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                               torch.nn.Linear(HIDDEN, CLASSES))


def batch(step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(BATCH, IN, generator=g), torch.randint(0, CLASSES, (BATCH,), generator=g)


buckets_seen = {}  # toru runs: distinct bucket lengths the hook reduced


def train(reducer, bucket_cap_mb):
    net = make_model()
    model = DDP(net, bucket_cap_mb=bucket_cap_mb)
    state = toru.ddp.register(model, comm, overlap=bucket_cap_mb < 1) if reducer == "toru" else None
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        x, y = batch(step)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    if state is not None:
        state.close()
        buckets_seen[bucket_cap_mb] = state.reducer.engines
    return [p.detach().clone() for p in net.parameters()]


def reference():
    net = make_model()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(STEPS):
        x, y = batch(step)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        for p in net.parameters():
            copies = comm.allgather(p.grad.numpy().copy())
            total = copies[0].copy()
            for c in copies[1:]:
                total += c
            p.grad.copy_(torch.from_numpy(total / np.float32(nranks)))
        opt.step()
    return [p.detach().clone() for p in net.parameters()]


def max_diff(a, b):
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


def bit_identical(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b))


runs = {(r, mb): train(r, mb) for r in ("toru", "gloo") for mb in (25, 0.001)}
ref = reference()

if not buckets_seen[0.001] > buckets_seen[25]:
    t.add(f"toru: bucket lengths seen {buckets_seen}: the small cap should make more, different buckets")
if not bit_identical(runs["toru", 25], runs["toru", 0.001]):
    t.add(f"toru: bucket_cap_mb 25 vs 0.001 differ by {max_diff(runs['toru', 25], runs['toru', 0.001]):.3g}")
if not bit_identical(runs["toru", 25], ref):
    t.add(f"toru vs the rank-order reference: differ by {max_diff(runs['toru', 25], ref):.3g}")
mine = b"".join(p.numpy().tobytes() for p in runs["toru", 0.001])
if len(set(comm.allgather(mine))) != 1:
    t.add("toru: the ranks' weights differ")
gloo_diff = max_diff(runs["gloo", 25], runs["gloo", 0.001])
if gloo_diff == 0:
    t.add("gloo: bucket_cap_mb 25 vs 0.001 gave identical weights; the test's sizes do not exercise "
                    "the order of additions, so its toru assertions prove nothing")
for mb in (25, 0.001):
    d = max_diff(runs["gloo", mb], ref)
    if d > 1e-4:
        t.add(f"gloo bucket_cap_mb {mb} vs reference: differ by {d:.3g} (> 1e-4)")
if rank == 0:
    print(f"{nranks} ranks, {STEPS} steps: gloo 25 vs 0.001 MB max |dw| {gloo_diff:.3g}; "
          f"toru 25 vs 0.001 MB {max_diff(runs['toru', 25], runs['toru', 0.001]):.3g}; "
          f"toru vs reference {max_diff(runs['toru', 25], ref):.3g}; bucket lengths {buckets_seen}")


reversed_comm = comm.Split(0, nranks - rank)
t.expect_raise("communicator in reverse rank order",
               lambda: toru.ddp.register(DDP(make_model()), reversed_comm), mentions="comm: expected")
t.expect_raise("a model without DDP", lambda: toru.ddp.register(make_model(), comm), mentions="model: expected")
reducer = toru._core.OrderedAllreduce(comm)
n = 10 + (1 if rank == nranks - 1 else 0)
t.expect_raise("sizes differ on the last rank", lambda: reducer.average(np.ones(n, dtype=np.float32)),
               mentions="values.size")
t.expect_raise("float64 on the last rank",
               lambda: reducer.average(np.ones(10, dtype=np.float64 if rank == nranks - 1 else np.float32)),
               mentions="values: expected")
# After the errors the reducer still averages, in rank order.
v = np.full(7, rank + 0.1, dtype=np.float32)
reducer.average(v)
want = np.float32(0.1)
for r in range(1, nranks):
    want = np.float32(want + np.float32(r + 0.1))
want = np.float32(want / np.float32(nranks))
if not np.all(v == want):
    t.add(f"average after errors: got {v[0]!r}, expected {want!r}")

reversed_comm.Free()
dist.destroy_process_group()
comm.Barrier()
if rank == 0:
    shutil.rmtree(store_dir, ignore_errors=True)
t.finish()
