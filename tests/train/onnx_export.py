#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Exports torchvision's ResNet-18 (random weights, random batch-norm statistics) to ONNX and
writes an input batch and PyTorch's eval-mode logits for it.

Usage: onnx_export.py DIR BATCH SIZE [train|train-smooth [MODEL]]   -> DIR/MODEL.onnx, DIR/x.bin, DIR/logits.bin (float32)
       onnx_export.py DIR BATCH SIZE cli   -> DIR/{cnn,unknown-op,trainer-op,bad-shape,vit}.onnx

cli: cnn.onnx, a small CNN for 1xSIZExSIZE images and 10 classes (conv-bn-relu-maxpool, conv-relu,
global average pool, linear), exported in training mode with a dynamic batch axis, for
toru-train --onnx; unknown-op.onnx, the same with a Sin node (no importer rule); trainer-op.onnx,
with an Erf node (imported, but no trainer kernel); bad-shape.onnx, the linear layer's weight one
input feature short of its input (shape mismatch); vit.onnx, the tiny ViT below for 3x32x32 images
(dynamic batch).

With `train` (or `train-smooth`: every ReLU a Tanh, the max pool an average pool; see
make_smooth): exported in training mode (batch-norm nodes kept), and the reference is a training
step in float64: DIR/labels.bin (int32), DIR/logits.bin, DIR/ref.json (loss, and for every
parameter and running statistic by name a float32 file: gradients after backward, statistics after
the forward). MODEL (default resnet18): resnet18, or mobilenet_v2 (width 0.25, the classifier's
dropout off so that the step is deterministic: Conv, BatchNormalization, Clip (ReLU6), Add), or
efficientnet_b0 (stochastic depth and dropout off: SiLU as Sigmoid and Mul, squeeze-and-excitation
scales broadcast by Mul), or densenet (torchvision DenseNet, growth 8, blocks (2, 2), 16 initial
features: dense connectivity by Concat, transition average pools), or vit (a tiny torchvision
VisionTransformer) or transformer (TokenEncoder: SIZE is its sequence length, inputs [BATCH, SIZE, 8]), or tokens
(the same with an nn.Embedding of VOCAB token ids instead of the linear embedding), or padsig
(PadSigmoidNet: Pad in reflect and edge mode, HardSigmoid).
Parameters read through a Transpose are named (and their gradients transposed) as the importer
names them (transposed_weights).
"""
import json
import os
import sys

import numpy as np
import torch
import torchvision

VOCAB = 23  # the token model's vocabulary


class SmallCnn(torch.nn.Module):
    def __init__(self, extra=None):
        super().__init__()
        self.extra = extra
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.conv2(x))
        if self.extra is not None:
            x = self.extra(x)
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class TokenEncoder(torch.nn.Module):
    """A 2-layer nn.TransformerEncoder (batch_first, width 16, 2 heads, feed-forward 32, ReLU, dropout
    0) over [N, S, 8] features: a linear embedding, a learned positional embedding [1, S, 16] added
    by broadcasting, mean pooling over the sequence (ReduceMean) and a linear head."""

    def __init__(self, seq=6, vocab=0):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, 16) if vocab else torch.nn.Linear(8, 16)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, 16) * 0.5)
        layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x) + self.pos).mean(1))


class PadSigmoidNet(torch.nn.Module):
    """Reflect and replicate (ONNX edge) padding and hardsigmoid between convolutions."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 6, 3)
        self.conv2 = torch.nn.Conv2d(6, 8, 3)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = torch.nn.functional.hardsigmoid(self.conv1(torch.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect")))
        x = torch.tanh(self.conv2(torch.nn.functional.pad(x, (2, 0, 1, 3), mode="replicate")))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def transposed_weights(path):
    """Initializers that the export reads only through a Transpose (x @ W^T as MatMul): the importer
    makes the transposed weight the parameter, named after the Transpose's output."""
    import onnx
    model = onnx.load(path)
    inits = {t.name for t in model.graph.initializer}
    uses = {}
    for n in model.graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    return {n.input[0]: n.output[0] for n in model.graph.node
            if n.op_type == "Transpose" and n.input[0] in inits and uses[n.input[0]] == 1}


def export_cli_models(d, batch, size):
    """DIR/cnn.onnx and three broken variants for toru-train's bad-input tests."""
    import onnx
    from onnx import numpy_helper
    for name, extra in (("cnn", None), ("unknown-op", torch.sin), ("trainer-op", torch.erf)):
        torch.manual_seed(0)
        m = SmallCnn(extra)
        m.train()
        torch.onnx.export(m, torch.rand(batch, 1, size, size), os.path.join(d, name + ".onnx"), input_names=["image"],
                          output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                          opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    torch.manual_seed(0)  # vit.onnx: the tiny ViT of `train vit` for 3x32x32 images, dynamic batch
    vit = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16,
                                               mlp_dim=32, num_classes=10)
    vit.train()
    torch.onnx.export(vit, torch.rand(batch, 3, 32, 32), os.path.join(d, "vit.onnx"), input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    model = onnx.load(os.path.join(d, "cnn.onnx"))
    for i, t in enumerate(model.graph.initializer):
        if t.name == "fc.weight":
            w = numpy_helper.to_array(t)[:, :-1].copy()
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(model, os.path.join(d, "bad-shape.onnx"))


# Why "train-smooth" exists: a ReLU input within float32 rounding of zero, or a max-pool window
# whose two largest values are that close, takes another branch in a float32 forward than in the
# float64 reference; that element's gradient is dropped (or routed to another element), and every
# batch norm upstream spreads the error over its whole channel. Float32 activations of ResNet-18
# are off by up to 3e-6 (stem) .. 5e-5 (layer4) from float64, and at 64x64, batch 4 it has ~750k
# ReLU inputs and 65k max-pool windows (about one with a top-two gap under 1e-6 per input), so
# such an element is likely: with the input of "train", layer1.0's residual sum has one at
# |v| = 4.7e-7, and PyTorch's own float32 gradients of layer1.0 and the stem differ from its
# float64 ones by 4e-3..1e-2 (every layer after it: 5e-6). "train-smooth" replaces every ReLU by
# Tanh and the stem's max pool by an average pool (same graph otherwise: convolutions, batch
# norms, residual forks and sums), so that float32 and float64 take the same branches.
def make_smooth(m):
    for mod in list(m.modules()):
        for child, sub in list(mod.named_children()):
            if isinstance(sub, torch.nn.ReLU):
                setattr(mod, child, torch.nn.Tanh())
            elif isinstance(sub, torch.nn.MaxPool2d):
                pool = torch.nn.AvgPool2d(sub.kernel_size, sub.stride, sub.padding, count_include_pad=False)
                setattr(mod, child, pool)


def main():
    d, batch, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if len(sys.argv) > 4 and sys.argv[4] == "cli":
        export_cli_models(d, batch, size)
        return
    torch.manual_seed(0)
    name = sys.argv[5] if len(sys.argv) > 5 else "resnet18"
    if name == "mobilenet_v2":
        m = torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.25)
        m.classifier[0].p = 0.0
    elif name == "efficientnet_b0":
        m = torchvision.models.efficientnet_b0(num_classes=10, stochastic_depth_prob=0.0)
        m.classifier[0].p = 0.0
    elif name == "densenet":
        # A small torchvision DenseNet (two dense blocks of two layers, growth 8): every layer's input
        # is the Concat of all earlier outputs, and the transition's average pool halves the image.
        m = torchvision.models.DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2,
                                        num_classes=10)
    elif name == "vit":
        # A tiny torchvision ViT (32x32, patch 8: 16 patches and a class token, 2 layers, 2 heads,
        # width 16, MLP 32; dropout 0): Conv patches, Transpose, Expand, Concat, broadcast Add,
        # LayerNorm and erf-GELU decompositions, the in_proj Slice split, batched MatMul, Div,
        # Softmax, first-token Gather.
        m = torchvision.models.VisionTransformer(image_size=size, patch_size=8, num_layers=2, num_heads=2,
                                                 hidden_dim=16, mlp_dim=32, num_classes=10)
    elif name == "transformer":
        m = TokenEncoder(size)
    elif name == "padsig":
        m = PadSigmoidNet()
    elif name == "tokens":
        m = TokenEncoder(size, vocab=VOCAB)
    else:
        m = torchvision.models.resnet18(num_classes=10)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
    train = len(sys.argv) > 4 and sys.argv[4] in ("train", "train-smooth")
    x = torch.rand(batch, 3, size, size) * 2 - 1
    if name == "transformer":
        x = torch.rand(batch, size, 8) * 2 - 1
    if name == "tokens":  # token ids; x.bin holds them as floats, the trainer's input type
        x = torch.randint(0, VOCAB, (batch, size), generator=torch.Generator().manual_seed(2))
    if train and sys.argv[4] == "train-smooth":
        make_smooth(m)
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
    torch.onnx.export(m, x, os.path.join(d, name + ".onnx"), input_names=["image"], output_names=["logits"],
                      opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    labels = torch.randint(0, 10, (batch,), generator=torch.Generator().manual_seed(1))
    labels.numpy().astype(np.int32).tofile(os.path.join(d, "labels.bin"))
    m = m.double()
    y = m(x if name == "tokens" else x.double())
    loss = torch.nn.functional.cross_entropy(y, labels)
    loss.backward()
    y.detach().numpy().astype(np.float32).tofile(os.path.join(d, "logits.bin"))
    ref = {"loss": float(loss), "files": {}}
    renamed = transposed_weights(os.path.join(d, name + ".onnx"))
    for name, p in list(m.named_parameters()) + [(n, b) for n, b in m.named_buffers() if "running" in n]:
        v = p.grad if p.grad is not None else p
        if name in renamed:
            name, v = renamed[name], v.t()
        fn = "ref.%d.bin" % len(ref["files"])
        v.detach().numpy().astype(np.float32).tofile(os.path.join(d, fn))
        ref["files"][name] = fn
    with open(os.path.join(d, "ref.json"), "w") as f:
        json.dump(ref, f)


if __name__ == "__main__":
    main()
