# SPDX-License-Identifier: BSD-3-Clause
# Reproducible PyTorch DDP with toru's ordered reduction (README, "From Python"): the same training
# with two bucket sizes ends with bit-identical weights.
#   PYTHONPATH=build/python mpiexec -n 3 /usr/bin/python3 examples/python/ddp_reproducible.py
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import toru.ddp

comm = MPI.COMM_WORLD
store = comm.bcast(tempfile.mkdtemp() if comm.rank == 0 else None)  # DDP still needs a process group
dist.init_process_group("gloo", store=dist.FileStore(os.path.join(store, "s"), comm.size), rank=comm.rank,
                        world_size=comm.size)


def train(bucket_cap_mb):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                              torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    model = DDP(net, bucket_cap_mb=bucket_cap_mb)
    hook = toru.ddp.register(model, comm)  # gradients averaged in rank order, whatever the bucket
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(comm.rank)  # each rank its own shard of the data
    for _ in range(10):
        x, y = torch.randn(16, 64, generator=g), torch.randint(0, 10, (16,), generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    hook.close()
    return [p.detach() for p in net.parameters()], float(loss)


a, loss = train(bucket_cap_mb=25)
b, _ = train(bucket_cap_mb=0.001)
same = all(torch.equal(x, y) for x, y in zip(a, b))
assert same, "weights differ between bucket sizes"
if comm.rank == 0:
    print(f"{comm.size} ranks: final loss {loss:.4f}; bucket_cap_mb 25 and 0.001 give bit-identical weights: {same}")
dist.destroy_process_group()
comm.Barrier()
if comm.rank == 0:
    shutil.rmtree(store)
