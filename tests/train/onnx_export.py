#!/usr/bin/python3
"""Exports torchvision's ResNet-18 (random weights, random batch-norm statistics) to ONNX and
writes an input batch and PyTorch's eval-mode logits for it.

Usage: onnx_export.py DIR BATCH SIZE   -> DIR/resnet18.onnx, DIR/x.bin, DIR/logits.bin (float32)
"""
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
    m.eval()
    x = torch.rand(batch, 3, size, size) * 2 - 1
    torch.onnx.export(m, x, os.path.join(d, "resnet18.onnx"), input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
    with torch.no_grad():
        y = m(x)
    x.numpy().astype(np.float32).tofile(os.path.join(d, "x.bin"))
    y.numpy().astype(np.float32).tofile(os.path.join(d, "logits.bin"))


if __name__ == "__main__":
    main()
