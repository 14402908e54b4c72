#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PyTorch's own device-memory peak of training steps, for scripts/gpu-check-swap.sh.

  torch-cuda-peak.py MODEL IMAGE BATCH [BATCH ...]

For each batch: a torchvision MODEL in training mode on the GPU, SGD with momentum 0.9 (the
planner's default optimizer), two steps; the peak of the second step (momentum buffers exist):
torch.cuda.max_memory_allocated (tensors), max_memory_reserved (the caching allocator's segments)
and the process's device memory outside the allocator (CUDA context, cuDNN/cuBLAS handles and
modules: cudaMemGetInfo's used bytes minus reserved, at the end). One JSON object per batch.
"""
import json
import sys

import torch
import torchvision


def main():
    name, image = sys.argv[1], int(sys.argv[2])
    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    free0, total = torch.cuda.mem_get_info()
    for b in (int(x) for x in sys.argv[3:]):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)().to(dev).train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn(b, 3, image, image, device=dev)
        y = torch.randint(0, 1000, (b,), device=dev)
        for step in range(2):
            if step == 1:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            opt.zero_grad(set_to_none=False)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        reserved = torch.cuda.memory_reserved()
        print(json.dumps({"model": name, "image": image, "batch": b,
                          "max_allocated": torch.cuda.max_memory_allocated(),
                          "max_reserved": torch.cuda.max_memory_reserved(),
                          "outside_allocator": (total - free) - reserved,
                          "device": torch.cuda.get_device_name()}), flush=True)
        del model, opt, x, y, loss
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
