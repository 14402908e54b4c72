# SPDX-License-Identifier: BSD-3-Clause
# Memory plans PyTorch applies (README, "From Python"): toru::swap plans ResNet-50 training at batch
# 128 for 8 GiB of device memory, and the plan wraps the chosen modules in torch.utils.checkpoint
# (recompute) and torch.autograd.graph.save_on_cpu (offload). Skipped (exit 77) without torchvision or onnx.
#   PYTHONPATH=build/python /usr/bin/python3 examples/python/memory_plan.py
import copy
import importlib.util
import sys

try:
    import torch
    import torchvision
except ImportError:
    print("needs torch and torchvision: skipped")
    sys.exit(77)
if importlib.util.find_spec("onnx") is None:  # torch.onnx.export needs it
    print("needs onnx: skipped")
    sys.exit(77)

import toru

model = torchvision.models.resnet50()
plan = toru.plan(model, budget="8GiB", example_input=torch.randn(2, 3, 224, 224), batch=128)
print(plan.summary())

# One step at a CPU-sized batch, with the plan and without: the same gradients.
x, y = torch.randn(4, 3, 224, 224), torch.randint(0, 1000, (4,))
unplanned = copy.deepcopy(model)
torch.nn.functional.cross_entropy(unplanned(x), y).backward()
with plan.apply(model):
    torch.nn.functional.cross_entropy(model(x), y).backward()
assert plan.policy and plan.saved_bytes < plan.unplanned_saved_bytes
assert all(torch.equal(a.grad, b.grad) for a, b in zip(model.parameters(), unplanned.parameters()))
print(f"{len(plan.policy)} modules planned; gradients equal the unplanned model's")
