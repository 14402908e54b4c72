#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""References for tests/train, computed with PyTorch at test time.

  engine_reference.py optim OUT.json      torch.optim on random tensors, several steps
  engine_reference.py schedule OUT.json   torch.optim.lr_scheduler learning rates per step
  engine_reference.py clip OUT.json       torch.nn.utils.clip_grad_norm_ on random gradients
  engine_reference.py fashion DIR OUT.json  Fashion-MNIST samples through torchvision's transforms
"""
import gzip
import json
import math
import sys

import torch


def optim_cases():
    torch.manual_seed(20261201)
    n, steps = 1009, 6
    cases = [
        dict(name="sgd", kind="sgd", lr=0.1, weight_decay=0.0),
        dict(name="sgd_wd", kind="sgd", lr=0.05, weight_decay=0.01),
        dict(name="momentum", kind="momentum", lr=0.1, momentum=0.9, weight_decay=0.0),
        dict(name="momentum_nesterov_wd", kind="momentum", lr=0.03, momentum=0.8, nesterov=True, weight_decay=5e-4),
        dict(name="adam", kind="adam", lr=1e-3, weight_decay=0.0),
        dict(name="adam_wd_betas", kind="adam", lr=3e-3, weight_decay=1e-2, beta1=0.8, beta2=0.99, eps=1e-6),
        # AdamW: no weight_decay key means PyTorch's default (0.01), which toru must apply too.
        dict(name="adamw_default", kind="adamw", lr=1e-2),
        dict(name="adamw_wd_betas", kind="adamw", lr=3e-2, weight_decay=0.3, beta1=0.8, beta2=0.99, eps=1e-6),
    ]
    out = []
    for c in cases:
        p = torch.randn(n, dtype=torch.float32)
        c["params0"] = p.tolist()
        p = p.clone().requires_grad_(False)
        if c["kind"] == "adam":
            opt = torch.optim.Adam([p], lr=c["lr"], betas=(c.get("beta1", 0.9), c.get("beta2", 0.999)),
                                   eps=c.get("eps", 1e-8), weight_decay=c["weight_decay"])
        elif c["kind"] == "adamw":
            kw = {"weight_decay": c["weight_decay"]} if "weight_decay" in c else {}
            opt = torch.optim.AdamW([p], lr=c["lr"], betas=(c.get("beta1", 0.9), c.get("beta2", 0.999)),
                                    eps=c.get("eps", 1e-8), **kw)
        else:
            opt = torch.optim.SGD([p], lr=c["lr"], momentum=c.get("momentum", 0.0), nesterov=c.get("nesterov", False),
                                  weight_decay=c["weight_decay"])
        c["grads"], c["lrs"] = [], []
        for s in range(steps):
            g = torch.randn(n, dtype=torch.float32) * (0.1 + s)
            lr = c["lr"] * (0.5 ** s)  # a schedule changing the rate every step
            for group in opt.param_groups:
                group["lr"] = lr
            p.grad = g.clone()
            opt.step()
            c["grads"].append(g.tolist())
            c["lrs"].append(lr)
        c["params"] = p.tolist()
        st = opt.state[p]
        if c["kind"] == "momentum":
            c["state"] = st["momentum_buffer"].tolist()
        elif c["kind"] in ("adam", "adamw"):
            c["state"] = st["exp_avg"].tolist() + st["exp_avg_sq"].tolist()
        else:
            c["state"] = []
        out.append(c)
    return out


def clip_cases():
    """torch.nn.utils.clip_grad_norm_ (norm type 2) over several parameters of awkward sizes."""
    torch.manual_seed(20261206)
    out = []
    for name, max_norm, scale in (("clips", 0.7, 1.0), ("clips_hard", 1e-3, 30.0), ("below", 1e4, 1.0)):
        params = [torch.zeros(n, requires_grad=True) for n in (1, 7, 1009, 33)]
        for p in params:
            p.grad = torch.randn(p.shape) * scale
        grads = torch.cat([p.grad.flatten() for p in params]).tolist()
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=2.0)
        out.append(dict(name=name, max_norm=max_norm, grads=grads, norm=float(norm),
                        clipped=torch.cat([p.grad.flatten() for p in params]).tolist()))
    return out


def schedule_cases():
    out = []
    for kind, kw, steps in (("step", dict(step_size=7, gamma=0.3), 30), ("cosine", dict(T_max=25, eta_min=1e-4), 25)):
        p = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.2)
        sched = (torch.optim.lr_scheduler.StepLR(opt, **kw) if kind == "step" else
                 torch.optim.lr_scheduler.CosineAnnealingLR(opt, **kw))
        lrs = []
        for _ in range(steps):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        out.append(dict(kind=kind, base_lr=0.2, lrs=lrs, **kw))
    return out


def fashion(directory):
    import numpy as np
    import torchvision.transforms as T
    from PIL import Image
    with gzip.open(f"{directory}/train-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(f"{directory}/train-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    tf = T.Compose([T.ToTensor(), T.Normalize((0.2860,), (0.3530,))])
    plain = T.ToTensor()
    out = []
    for i in (0, 1, 7919, 59999):
        img = Image.fromarray(images[i], mode="L")
        out.append(dict(index=i, label=int(labels[i]), normalized=tf(img).flatten().tolist(),
                        plain=plain(img).flatten().tolist()))
    return dict(count=int(len(labels)), samples=out)


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "optim":
        result = optim_cases()
    elif what == "clip":
        result = clip_cases()
    elif what == "schedule":
        result = schedule_cases()
    elif what == "fashion":
        result = fashion(sys.argv[2])
    else:
        sys.exit(f"unknown reference {what}")
    with open(sys.argv[-1], "w") as f:
        json.dump(result, f)
