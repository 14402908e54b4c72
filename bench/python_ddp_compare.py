#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# DDP step time with toru's ordered-reduction hook (toru.ddp) against DDP's own gloo allreduce, same
# model, data and bucket_cap_mb, in one run. Three DDP replicas of the model: toru, gloo, and a second
# gloo one (gloo') whose ratio to gloo is the noise floor; toru runs both with its worker thread
# (overlap, the default) and inside the hook (toru-sync, overlap=False). Each round times STEPS training steps
# (forward, backward, SGD) of each, in an order that rotates between rounds, after a barrier; a time
# is the max over ranks. Printed: median step time of each over rounds, and the median (min-max over
# rounds) of toru/gloo and gloo'/gloo. Build the package first (target toru_python).
#
#   PYTHONPATH=build/python mpiexec -n 3 /usr/bin/python3 bench/python_ddp_compare.py
#       [--model mlp|resnet18] [--rounds 7] [--steps 10] [--bucket-cap-mb 25] [--threads 1] [--json]
# Wrap timed runs on a shared machine in flock /tmp/toru-bench.lock.
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
from mpi4py import MPI
from torch.nn.parallel import DistributedDataParallel as DDP

import toru.ddp

ap = argparse.ArgumentParser(description="DDP step time: toru's ordered-reduction hook against gloo")
ap.add_argument("--model", choices=["mlp", "resnet18"], default="mlp",
                help="mlp: 4 linear layers of width 1024 on 256 inputs (2.4 M parameters), batch 32; "
                     "resnet18: torchvision's, 64x64 images, batch 8")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--steps", type=int, default=10, help="timed steps per replica and round")
ap.add_argument("--warmup", type=int, default=2, help="untimed steps per replica first (DDP rebuilds its buckets)")
ap.add_argument("--bucket-cap-mb", type=float, default=25.0)
ap.add_argument("--threads", type=int, default=1, help="torch threads per rank")
ap.add_argument("--json", action="store_true", help="one JSON object on rank 0 instead of the table")
a = ap.parse_args()
for name in ("rounds", "steps", "threads"):
    if getattr(a, name) < 1:
        sys.exit(f"python_ddp_compare: --{name.replace('_', '-')}: expected >= 1, got {getattr(a, name)}")
comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
torch.set_num_threads(a.threads)
store_dir = comm.bcast(tempfile.mkdtemp(prefix="toru-ddp-bench-") if rank == 0 else None)
dist.init_process_group("gloo", store=dist.FileStore(os.path.join(store_dir, "store"), nranks), rank=rank,
                        world_size=nranks)


def make():
    torch.manual_seed(0)
    if a.model == "resnet18":
        import torchvision

        return torchvision.models.resnet18(num_classes=10), (8, 3, 64, 64)
    layers = [torch.nn.Linear(256, 1024), torch.nn.ReLU()]
    for _ in range(2):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(1024, 10)), (32, 256)


class Replica:
    def __init__(self, label, hook, overlap):
        net, shape = make()
        self.label, self.model = label, DDP(net, bucket_cap_mb=a.bucket_cap_mb)
        self.state = toru.ddp.register(self.model, comm, overlap) if hook else None
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        g = torch.Generator().manual_seed(rank)
        self.x, self.y = torch.randn(*shape, generator=g), torch.randint(0, 10, (shape[0],), generator=g)
        self.step(a.warmup)

    def step(self, n):
        for _ in range(n):
            self.opt.zero_grad()
            torch.nn.functional.cross_entropy(self.model(self.x), self.y).backward()
            self.opt.step()

    def timed(self):
        comm.Barrier()
        t0 = time.perf_counter()
        self.step(a.steps)
        return comm.allreduce(time.perf_counter() - t0, op=MPI.MAX) / a.steps


replicas = [Replica("toru", True, True), Replica("toru-sync", True, False), Replica("gloo", False, None),
            Replica("gloo'", False, None)]
times = {r.label: [] for r in replicas}
for rnd in range(a.rounds):
    for i in range(len(replicas)):
        r = replicas[(i + rnd) % len(replicas)]
        times[r.label].append(r.timed())
for r in replicas:
    if r.state is not None:
        r.state.close()

t = {k: np.array(v) for k, v in times.items()}
ratio, sync, noise = t["toru"] / t["gloo"], t["toru-sync"] / t["gloo"], t["gloo'"] / t["gloo"]
result = {
    "model": a.model, "ranks": nranks, "threads": a.threads, "bucket_cap_mb": a.bucket_cap_mb,
    "rounds": a.rounds, "steps": a.steps,
    "step_ms": {k: float(np.median(v)) * 1e3 for k, v in t.items()},
    "toru_over_gloo": {"median": float(np.median(ratio)), "min": float(ratio.min()), "max": float(ratio.max())},
    "toru_sync_over_gloo": {"median": float(np.median(sync)), "min": float(sync.min()), "max": float(sync.max())},
    "noise_gloo2_over_gloo": {"median": float(np.median(noise)), "min": float(noise.min()),
                              "max": float(noise.max())},
}
if rank == 0:
    if a.json:
        print(json.dumps(result))
    else:
        s = result["step_ms"]
        print(f"{a.model}, {nranks} ranks, {a.threads} thread(s), bucket_cap_mb {a.bucket_cap_mb}, "
              f"{a.rounds} rounds x {a.steps} steps")
        g2 = s["gloo'"]
        print(f"step ms (median): toru {s['toru']:.2f}  toru-sync {s['toru-sync']:.2f}  gloo {s['gloo']:.2f}  "
              f"gloo' {g2:.2f}")
        for k, v in (("toru/gloo", result["toru_over_gloo"]), ("toru-sync/gloo", result["toru_sync_over_gloo"]),
                     ("gloo'/gloo (noise)", result["noise_gloo2_over_gloo"])):
            print(f"{k:>20}: {v['median']:.3f} ({v['min']:.3f}-{v['max']:.3f})")
dist.destroy_process_group()
comm.Barrier()
if rank == 0:
    shutil.rmtree(store_dir, ignore_errors=True)
