#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks an ONNX file written by toru's export (trainer::export_onnx) of onnx_export.py's cnn.onnx.

Usage: onnx_export_check.py SOURCE.onnx EXPORTED.onnx X.bin LOGITS.bin BATCH SIZE

onnx.checker.check_model (full check, with shape inference) on the exported file; its nodes,
inputs and outputs are the source's and every initializer is there; the trained initializers
differ from the source's; then PyTorch: the SmallCnn module with the exported initializers as its
state (weights and batch-norm running statistics), in eval mode, on X: its logits against toru's
(LOGITS, from toru's own import of the exported file). Prints "ok" and exits 0, or says what
differs and exits 1.
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_export import SmallCnn  # noqa: E402


def main():
    source, exported, xfile, lfile, batch, size = sys.argv[1:7]
    batch, size = int(batch), int(size)
    src = onnx.load(source)
    out = onnx.load(exported)
    onnx.checker.check_model(out, full_check=True)
    if [n.SerializeToString() for n in src.graph.node] != [n.SerializeToString() for n in out.graph.node]:
        sys.exit("exported nodes differ from the source's")
    if src.graph.input != out.graph.input or src.graph.output != out.graph.output:
        sys.exit("exported inputs/outputs differ from the source's")
    a = {t.name: numpy_helper.to_array(t) for t in src.graph.initializer}
    b = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
    if a.keys() != b.keys():
        sys.exit(f"initializers differ: {sorted(a.keys() ^ b.keys())}")
    for n in ("conv1.weight", "fc.bias", "bn1.running_mean", "bn1.running_var"):
        if np.array_equal(a[n], b[n]):
            sys.exit(f"{n}: unchanged by training")

    torch.manual_seed(1)
    m = SmallCnn()
    state = {n: torch.from_numpy(v.copy()) for n, v in b.items() if n in m.state_dict()}
    missing, unexpected = m.load_state_dict(state, strict=False)
    if [k for k in missing if not k.endswith("num_batches_tracked")] or unexpected:
        sys.exit(f"state mismatch: missing {missing}, unexpected {unexpected}")
    m.eval()
    x = torch.from_numpy(np.fromfile(xfile, dtype=np.float32).reshape(batch, 1, size, size))
    with torch.no_grad():
        want = m(x).numpy()
    got = np.fromfile(lfile, dtype=np.float32).reshape(want.shape)
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    if not err < 1e-5:
        sys.exit(f"toru's logits of the exported file differ from PyTorch's: relative error {err}")
    print(f"ok: checker passed, {len(b)} initializers, logits relative error {err:.2e}")


if __name__ == "__main__":
    main()
