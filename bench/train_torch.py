#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PyTorch peer of toru-train for bench/train-compare.sh: the same network, batch, optimizer and
thread count on the CPU, synthetic data (the data path is not what is compared), median step time.

  train_torch.py --model fashion-cnn --batch 64 --steps 30 --threads 2 [--optimizer sgd --lr 0.01]
  torchrun-free DDP: launched twice by train-compare.sh with --ddp-rank R --ddp-size 2 (gloo)

Prints one JSON line: {"model", "batch", "ranks", "threads", "step_s_median", "step_s_min",
"step_s_max", "images_per_s", "peak_rss_kib"} (peak_rss_kib: getrusage ru_maxrss of this process, i.e.
VmHWM, KiB). --export FILE writes the model as ONNX (training mode, dynamic batch, opset 13) for
toru-train --onnx and exits, so both train the same network from the same initial weights.
Models beyond torchvision's: vit_b_16 at --image (patch 16), encoder (a 4-layer nn.TransformerEncoder,
width 256, 4 heads, feed-forward 1024, ReLU, dropout 0, batch_first, over [N, --seq, 64] features with
a linear embedding, a learned positional embedding, mean pooling and a 10-class head).
"""
import argparse
import json
import os
import resource
import statistics
import time

import torch
import torch.nn as nn


def fashion_cnn():
    # swap/src/models.cpp fashion_cnn: two conv3x3(pad 1, no bias)-bn-relu-maxpool2 stages, 32 and 64
    # channels, a 128-unit hidden layer, 10 classes; 28x28x1 input.
    def stage(cin, cout):
        return [nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2, 2)]
    return nn.Sequential(*stage(1, 32), *stage(32, 64), nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                         nn.Linear(128, 10)), (1, 28, 28)


class Encoder(nn.Module):
    def __init__(self, seq, feat=64, width=256):
        super().__init__()
        self.embed = nn.Linear(feat, width)
        self.pos = nn.Parameter(torch.randn(1, seq, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x) + self.pos).mean(1))


def build(name, image, seq=128):
    if name == "fashion-cnn":
        return fashion_cnn()
    if name == "encoder":
        return Encoder(seq), (seq, 64)
    import torchvision
    if name.startswith("vit"):
        m = getattr(torchvision.models, name)(num_classes=10, image_size=image, dropout=0.0)
        return m, (3, image, image)
    return getattr(torchvision.models, name)(num_classes=1000), (3, image, image)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="fashion-cnn")
    p.add_argument("--batch", type=int, default=64, help="global batch")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--skip", type=int, default=3, help="first steps left out of the timing")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--image", type=int, default=224)
    p.add_argument("--ddp-rank", type=int, default=-1)
    p.add_argument("--ddp-size", type=int, default=1)
    p.add_argument("--port", default="29531")
    p.add_argument("--seq", type=int, default=128, help="encoder: sequence length")
    p.add_argument("--export", default="", help="write the model as ONNX to this file and exit")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model, shape = build(a.model, a.image, a.seq)
    if a.export:
        model.train()
        torch.onnx.export(model, torch.rand(2, *shape), a.export, input_names=["image"], output_names=["logits"],
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        return
    ddp = a.ddp_rank >= 0
    if ddp:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", a.port)
        torch.distributed.init_process_group("gloo", rank=a.ddp_rank, world_size=a.ddp_size)
        model = nn.parallel.DistributedDataParallel(model)
    local = a.batch // a.ddp_size
    x = torch.randn(local, *shape)
    y = torch.randint(0, 10, (local,))
    if a.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9 if a.optimizer == "momentum" else 0)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for _ in range(a.steps):
        if ddp:
            torch.distributed.barrier()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    if ddp:
        # The slowest rank's steps, as toru-train's rank 0 sees the reduction wait for the others.
        t = torch.tensor(times, dtype=torch.float64)
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
        times = t.tolist()
    timed = times[a.skip:] if len(times) > a.skip + 1 else times
    med = statistics.median(timed)
    if not ddp or a.ddp_rank == 0:
        print(json.dumps(dict(model=a.model, batch=a.batch, ranks=a.ddp_size, threads=a.threads, steps=len(timed),
                              step_s_median=med, step_s_min=min(timed), step_s_max=max(timed),
                              images_per_s=a.batch / med,
                              peak_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
    if ddp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
