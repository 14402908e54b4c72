#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The models of docs/swap.md's fidelity table, as PyTorch builds them, and two things about each:

  export NAME OUT.onnx BATCH SIZE [--fixed]   torch.onnx.export in training mode (batch norm and
        dropout kept, as a training graph needs them), opset 13, batch axis dynamic unless --fixed.
  saved NAME BATCH SIZE                       bytes of the tensors autograd saves for backward in one
        training forward pass, per sample (JSON on stdout), measured with
        torch.autograd.graph.saved_tensors_hooks: each saved tensor's storage counted once
        (in-place ReLU outputs, views, tensors saved by two ops), parameters and buffers excluded.

NAME: resnet18 resnet50 resnet152 vgg16 alexnet googlenet densenet121 mobilenet_v2 efficientnet_b0
vit_b_16 tiny (conv-bn-ReLU6-maxpool, conv-relu-maxpool, dropout 0.5, linear: Clip, Dropout in training
mode, max-pool indices) transformer (torch.nn.TransformerEncoder, 2 layers, d_model 64, 4 heads, batch_first; SIZE is
the sequence length). For vit_b_16 SIZE is the image size (a multiple of 16).
"""
import json
import sys

import torch
import torchvision


def build(name, size):
    torch.manual_seed(0)
    m = torchvision.models
    if name == "transformer":
        # dropout 0 (as ViT-B/16's): PyTorch saves a float mask on the CPU and a bool one on a GPU
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256, dropout=0.0,
                                                 batch_first=True)
        enc = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        head = torch.nn.Linear(64, 10)

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.enc, self.head = enc, head

            def forward(self, x):
                return self.head(self.enc(x).mean(dim=1))

        return Net(), (size, 64)
    if name == "tiny":
        nn = torch.nn
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU6(inplace=True),
                             nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Dropout(0.5), nn.Linear(16 * (size // 4) ** 2, 10)), (3, size, size)
    if name == "vit_b_16":
        return m.vit_b_16(image_size=size), (3, size, size)
    if name == "googlenet":
        return m.googlenet(aux_logits=False, init_weights=False), (3, size, size)
    if name == "efficientnet_b0":
        # Stochastic depth off: torch 1.13 cannot export its training-mode bernoulli_ to ONNX.
        return m.efficientnet_b0(stochastic_depth_prob=0.0), (3, size, size)
    return getattr(m, name)(), (3, size, size)


def export(name, out, batch, size, fixed):
    model, shape = build(name, size)
    model.train()
    x = torch.randn(batch, *shape)
    dyn = None if fixed else {"input": {0: "batch"}, "output": {0: "batch"}}
    torch.onnx.export(model, x, out, input_names=["input"], output_names=["output"], dynamic_axes=dyn,
                      opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)


def saved(name, batch, size):
    model, shape = build(name, size)
    model.train()
    owned = {t.data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    seen = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr()
        if ptr not in owned and ptr != 0:
            nbytes = t.storage().nbytes() if not hasattr(t, "untyped_storage") else t.untyped_storage().nbytes()
            seen[ptr] = max(seen.get(ptr, 0), nbytes)
        return t

    x = torch.randn(batch, *shape)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = model(x)
        loss = torch.nn.functional.cross_entropy(y, torch.zeros(batch, dtype=torch.long))
    total = sum(seen.values())
    print(json.dumps({"model": name, "batch": batch, "size": size, "saved_bytes": total,
                      "saved_bytes_per_sample": total / batch, "tensors": len(seen)}))
    del loss


def main():
    cmd = sys.argv[1]
    if cmd == "export":
        export(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), "--fixed" in sys.argv[6:])
    elif cmd == "saved":
        saved(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: torch_models.py export NAME OUT BATCH SIZE [--fixed] | saved NAME BATCH SIZE")


if __name__ == "__main__":
    main()
