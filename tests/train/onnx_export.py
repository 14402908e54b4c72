#!/usr/bin/python3
"""Exports torchvision's ResNet-18 (random weights, random batch-norm statistics) to ONNX and
writes an input batch and PyTorch's eval-mode logits for it.

Usage: onnx_export.py DIR BATCH SIZE [train]   -> DIR/resnet18.onnx, DIR/x.bin, DIR/logits.bin (float32)

With `train`: exported in training mode (batch-norm nodes kept), and the reference is a training
step in float64: DIR/labels.bin (int32), DIR/logits.bin, DIR/ref.json (loss, and for every
parameter and running statistic by name a float32 file: gradients after backward, statistics after
the forward).
"""
import json
import os
import sys

import numpy as np
import torch
import torchvision


def main():
    d, batch, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.manual_seed(0)
    m = torchvision.models.resnet18(num_classes=10)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
    train = len(sys.argv) > 4 and sys.argv[4] == "train"
    x = torch.rand(batch, 3, size, size) * 2 - 1
    x.numpy().astype(np.float32).tofile(os.path.join(d, "x.bin"))
    if not train:
        m.eval()
        torch.onnx.export(m, x, os.path.join(d, "resnet18.onnx"), input_names=["image"], output_names=["logits"],
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
        with torch.no_grad():
            y = m(x)
        y.numpy().astype(np.float32).tofile(os.path.join(d, "logits.bin"))
        return
    m.train()
    torch.onnx.export(m, x, os.path.join(d, "resnet18.onnx"), input_names=["image"], output_names=["logits"],
                      opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    labels = torch.randint(0, 10, (batch,), generator=torch.Generator().manual_seed(1))
    labels.numpy().astype(np.int32).tofile(os.path.join(d, "labels.bin"))
    m = m.double()
    y = m(x.double())
    loss = torch.nn.functional.cross_entropy(y, labels)
    loss.backward()
    y.detach().numpy().astype(np.float32).tofile(os.path.join(d, "logits.bin"))
    ref = {"loss": float(loss), "files": {}}
    for name, p in list(m.named_parameters()) + [(n, b) for n, b in m.named_buffers() if "running" in n]:
        v = p.grad if p.grad is not None else p
        fn = "ref.%d.bin" % len(ref["files"])
        v.detach().numpy().astype(np.float32).tofile(os.path.join(d, fn))
        ref["files"][name] = fn
    with open(os.path.join(d, "ref.json"), "w") as f:
        json.dump(ref, f)


if __name__ == "__main__":
    main()
