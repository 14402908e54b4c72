#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PyTorch reference for the trainer's tests: executes toru graphs (dumped as JSON by the C++ test)
with torch's functional ops and autograd, in float64 or float32.

Usage: torch_reference.py DIR   (DIR/cases.json lists the cases; each names its graph and tensors)

For every case it reads the graph, the input, the int32 labels and the parameters (raw little-endian
float32 files), runs forward in training mode (batch statistics, running statistics updated as
torch does), the softmax cross-entropy loss and backward, and writes: the loss, every activation,
every parameter gradient and every running statistic, as raw float32 files named in
DIR/<case>.out.json.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def load(path, shape, dtype=np.float32):
    return np.fromfile(path, dtype=dtype).reshape(shape)


def spatial(v, nd, default):
    if not v:
        return [default] * nd
    if len(v) == 1:
        return v * nd
    return v


def run_case(d, case, dt):
    g = case["graph"]
    tensors = g["tensors"]
    vals = {}
    params = {}
    stats = {}
    for t in tensors:
        if t["kind"] == "parameter":
            p = torch.tensor(load(os.path.join(d, case["params"][t["name"]]), t["shape"]), dtype=dt,
                             requires_grad=True)
            params[t["name"]] = p
            vals[t["name"]] = p
    x = torch.tensor(load(os.path.join(d, case["input"]), tensors[case["image"]]["shape"]), dtype=dt)
    vals[tensors[case["image"]]["name"]] = x
    labels_t = tensors[case["labels"]]
    labels = torch.tensor(load(os.path.join(d, case["labels_file"]), labels_t["shape"], np.int32).astype(np.int64))
    vals[labels_t["name"]] = labels
    loss = None
    for o in g["ops"]:
        ins = [vals[tensors[i]["name"]] for i in o["inputs"]]
        a = o["attr"]
        t = o["type"]
        out_shape = tensors[o["outputs"][0]]["shape"]
        nd = len(out_shape) - 2
        if t == "conv":
            fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
            pads = spatial(a["pad_begin"], nd, 0)
            y = fn(ins[0], ins[1], ins[2] if len(ins) > 2 else None, stride=spatial(a["stride"], nd, 1),
                   padding=pads, dilation=spatial(a["dilation"], nd, 1), groups=a["groups"])
        elif t == "batchnorm":
            C = ins[0].shape[1]
            rm = torch.zeros(C, dtype=dt)
            rv = torch.ones(C, dtype=dt)
            y = F.batch_norm(ins[0], rm, rv, ins[1], ins[2], training=True, momentum=a["momentum"], eps=a["epsilon"])
            stats[o["name"] + "/running_mean"] = rm
            stats[o["name"] + "/running_var"] = rv
        elif t == "relu":
            y = F.relu(ins[0])
        elif t == "gelu":
            y = F.gelu(ins[0])
        elif t == "sigmoid":
            y = torch.sigmoid(ins[0])
        elif t == "clip":
            y = torch.clamp(ins[0], a["clip_min"], a["clip_max"])
        elif t == "silu":
            y = F.silu(ins[0])
        elif t == "hardswish":
            y = F.hardswish(ins[0])
        elif t == "pad":
            widths = []
            for b, e in zip(reversed(a["pad_begin"]), reversed(a["pad_end"])):
                widths += [b, e]
            mode = a.get("pad_mode", "constant")
            if mode == "constant":
                y = F.pad(ins[0], widths, mode="constant", value=a["pad_value"])
            else:  # reflect / edge pad the two spatial axes (F.pad's non-constant modes pad only those)
                y = F.pad(ins[0], widths[:4], mode={"reflect": "reflect", "edge": "replicate"}[mode])
        elif t == "mul":
            y = ins[0] * ins[1]
        elif t == "tanh":
            y = torch.tanh(ins[0])
        elif t == "maxpool":
            fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
            y = fn(ins[0], a["kernel"], a["stride"], spatial(a["pad_begin"], nd, 0), ceil_mode=a["ceil_mode"])
        elif t == "avgpool":
            if a["kernel"] and len(a["kernel"]) == nd and not a.get("adaptive", False):
                fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[nd]
                y = fn(ins[0], a["kernel"], a["stride"], spatial(a["pad_begin"], nd, 0), ceil_mode=a["ceil_mode"],
                       count_include_pad=a["count_include_pad"])
            else:
                fn = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}[nd]
                y = fn(ins[0], out_shape[2:])
        elif t == "add":
            y = ins[0] + ins[1]
        elif t == "concat":
            y = torch.cat(ins, dim=a["axis"])
        elif t in ("flatten", "reshape"):
            y = ins[0].reshape(out_shape)
        elif t == "linear":
            w = ins[1] if a["trans_b"] else ins[1].t()
            y = F.linear(ins[0], w, ins[2] if len(ins) > 2 else None)
        elif t == "layernorm":
            y = F.layer_norm(ins[0], [ins[0].shape[-1]], ins[1], ins[2], eps=a["epsilon"])
        elif t == "softmax":
            y = F.softmax(ins[0], dim=a["axis"])
        elif t == "transpose":
            y = ins[0].permute(a["perm"])
        elif t == "hardsigmoid":
            y = torch.clamp(ins[0] * a["scale"] + a["shift"], 0, 1)
        elif t == "matmul":
            y = torch.matmul(ins[0], ins[1])
        elif t == "scale":
            y = ins[0] * a["scale"] + a["shift"]
        elif t == "slice":
            idx = [slice(None)] * ins[0].dim()
            for ax, st, sp in zip(a["axes"], a["starts"], a["steps"]):
                idx[ax] = slice(st, st + (out_shape[ax] - 1) * sp + 1, sp)
            y = ins[0][tuple(idx)]
        elif t == "gather":
            y = torch.index_select(ins[0], a["axis"], torch.tensor(a["starts"])).reshape(out_shape)
        elif t == "expand":
            y = ins[0].expand(out_shape)
        elif t == "reduce_mean":
            y = ins[0].mean(dim=a["axes"], keepdim=True).reshape(out_shape)
        elif t == "loss":
            logits = ins[0]
            if a["axis"] not in (1, 1 - logits.dim()):
                logits = torch.movedim(logits, a["axis"], 1)
            loss = F.cross_entropy(logits, ins[1], label_smoothing=case.get("label_smoothing", 0.0))
            y = loss.reshape(1)
        else:
            raise SystemExit(f"torch_reference.py: op type '{t}' has no reference")
        y.retain_grad() if y.requires_grad else None
        vals[tensors[o["outputs"][0]]["name"]] = y
    loss.backward()
    out = {"loss": float(loss), "files": {}}

    def save(name, arr):
        fn = f"{case['name']}.{len(out['files'])}.out.bin"
        np.ascontiguousarray(arr.detach().numpy().astype(np.float32)).tofile(os.path.join(d, fn))
        out["files"][name] = fn

    for o in g["ops"]:
        ten = tensors[o["outputs"][0]]
        save("value:" + ten["name"], vals[ten["name"]])
    for n, p in params.items():
        save("grad:" + n, p.grad if p.grad is not None else torch.zeros_like(p))
    for n, s in stats.items():
        save("buffer:" + n, s)
    with open(os.path.join(d, case["name"] + ".out.json"), "w") as f:
        json.dump(out, f)


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)
    torch.set_num_threads(1)
    for case in cases:
        run_case(d, case, torch.float64 if case.get("double", True) else torch.float32)


if __name__ == "__main__":
    main()
