# SPDX-License-Identifier: BSD-3-Clause
"""toru.plan on a torchvision ResNet-18 (batch 2, 64x64, training mode): the applied plan changes
what autograd keeps, not what it computes.

  (a) the planned model's gradients, loss and batch-norm running statistics equal the unplanned
      model's bitwise: recomputation replays the same ops on the same inputs with the same random
      state (checkpoint's preserve_rng_state), and the plan puts back the running statistics the
      rerun updates, so they change once per step as without the plan;
  (b) the bytes autograd saves in the forward pass, measured with saved_tensors_hooks (each storage
      once, parameters and buffers excluded; tensors that save_on_cpu takes are not seen), are at most
      the plan's saved_bytes, which is at most the budget; unplanned, they equal the planner's count;
  (c) a budget below the unplanned peak makes the plan recompute, and the measured bytes drop;
  (d) bad arguments raise ValueError naming the argument.
Skipped (exit 77) without torch, torchvision or onnx, or in a toru built without ONNX import.
"""
import copy
import importlib.util
import io
import json
import sys
import time
import warnings

try:
    import torch
    import torchvision
except ImportError as e:
    print(f"{e.name} is not installed: skipped")
    sys.exit(77)
if importlib.util.find_spec("onnx") is None:  # torch.onnx.export needs it
    print("onnx is not installed: skipped")
    sys.exit(77)

import toru

if not toru._core.onnx_available():
    print("toru was built without ONNX import: skipped")
    sys.exit(77)

failures = []


def check(ok, what):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)


def step(model, x, labels):
    """One training step; returns (bytes saved in the forward pass, gradients, buffers, loss)."""
    model.zero_grad(set_to_none=True)
    owned = {t.data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    seen = {}

    def pack(t):
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        if s.data_ptr() not in owned:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    # The loss is the caller's, outside the plan (MemoryPlan.saved_bytes leaves it out too).
    loss = torch.nn.functional.cross_entropy(out, labels)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    return sum(seen.values()), grads, buffers, loss.detach()


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def raises(what, argument, f, *also):
    try:
        f()
    except ValueError as e:
        msg = str(e)
        check(msg.startswith(argument + ":") and all(s in msg for s in also), f"{what}: ValueError '{msg}'")
        return
    except Exception as e:  # noqa: BLE001  (any other exception is the failure reported)
        check(False, f"{what}: expected ValueError naming '{argument}', got {type(e).__name__}: {e}")
        return
    check(False, f"{what}: expected ValueError naming '{argument}', nothing raised")


torch.manual_seed(0)
pristine = torchvision.models.resnet18(num_classes=10)
pristine.train()
x = torch.randn(2, 3, 64, 64)
labels = torch.tensor([3, 7])
model = copy.deepcopy(pristine)
ref_saved, ref_grads, ref_buffers, ref_loss = step(copy.deepcopy(pristine), x, labels)

# A budget with room for everything: nothing to do, and the planner's count is PyTorch's.
t0 = time.perf_counter()
roomy = toru.plan(model, budget="1TiB", example_input=x, strategy="recompute")
roomy_seconds = time.perf_counter() - t0
print(roomy.summary())
check(roomy.policy == {}, "a roomy budget keeps everything")
check(roomy.saved_bytes == ref_saved,
      f"unplanned saved bytes: toru {roomy.saved_bytes}, PyTorch's saved_tensors_hooks {ref_saved}")
check(all(torch.equal(a, b) for a, b in zip(model.buffers(), pristine.buffers())),
      "planning (the ONNX export's forward) left the model's running statistics alone")

# (c) Between the leanest recompute plan and the unplanned peak, some modules must be recomputed.
tight = (roomy.min_budget_bytes + roomy.peak_bytes) // 2
for strategy in ("recompute", "auto"):
    model = copy.deepcopy(pristine)
    t0 = time.perf_counter()
    p = toru.plan(model, budget=tight, example_input=x, strategy=strategy)
    seconds = time.perf_counter() - t0
    print(p.summary())
    print(p.to_json())
    check(p.policy != {} and p.peak_bytes <= p.budget_bytes,
          f"{strategy}: budget {tight} B below the unplanned peak {roomy.peak_bytes} B is met by a policy")
    if strategy == "recompute":
        check(set(p.policy.values()) == {"recompute"} and p.policy_of("conv1") == "keep",
              "recompute: only recompute decisions")
    with p.apply(model):
        saved, grads, buffers, loss = step(model, x, labels)
    print(f"{strategy}: planned {p.saved_bytes} B, measured {saved} B, unplanned {ref_saved} B, "
          f"budget {p.budget_bytes} B; toru.plan {seconds:.2f} s (tune {p.planning_seconds * 1e3:.1f} ms)")
    check(saved <= p.saved_bytes <= p.budget_bytes,
          f"{strategy}: measured {saved} <= planned {p.saved_bytes} <= budget")
    check(saved < ref_saved, f"{strategy}: measured {saved} < unplanned {ref_saved}")
    check(same(grads, ref_grads) and torch.equal(loss, ref_loss), f"{strategy}: gradients and loss equal bitwise")
    check(same(buffers, ref_buffers), f"{strategy}: running statistics equal bitwise (updated once)")
    check(all("forward" not in m.__dict__ for m in model.modules()), f"{strategy}: leaving apply() unwraps")

# The same plan from the ONNX bytes a user exported.
f = io.BytesIO()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(copy.deepcopy(model), x, f, input_names=["input"], dynamic_axes={"input": {0: "batch"}},
                      opset_version=13, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
from_module = toru.plan(model, budget=tight, example_input=x, strategy="recompute")
from_bytes = toru.plan(f.getvalue(), budget=tight, batch=2, strategy="recompute")
check(from_bytes.policy == from_module.policy and from_bytes.saved_bytes == from_module.saved_bytes,
      "an ONNX file plans like the module")

# (d) Bad arguments.
raises("budget below the leanest plan", "budget",
       lambda: toru.plan(model, budget=roomy.min_budget_bytes - 1, example_input=x, strategy="recompute"),
       str(roomy.min_budget_bytes))
raises("budget 'lots'", "budget", lambda: toru.plan(model, budget="lots", example_input=x))
raises("budget -1", "budget", lambda: toru.plan(model, budget=-1, example_input=x))
raises("budget True", "budget", lambda: toru.plan(model, budget=True, example_input=x))
raises("a non-module", "model_or_onnx", lambda: toru.plan(42, budget="1GiB", example_input=x))
raises("no example input", "example_input", lambda: toru.plan(model, budget="1GiB"))
raises("an unknown strategy", "strategy", lambda: toru.plan(model, budget="1GiB", example_input=x, strategy="fast"))
raises("ONNX bytes without a batch", "batch", lambda: toru.plan(f.getvalue(), budget="1GiB"))
p = toru.plan(model, budget=tight, example_input=x, strategy="recompute")
raises("apply to a non-module", "model", lambda: p.apply(42))
raises("apply to another model", "model", lambda: p.apply(torch.nn.Linear(2, 2)), "layer")
with p.apply(model):
    raises("apply twice", "model", lambda: p.apply(model))
p.apply(model)
wrapped = sum("forward" in m.__dict__ for m in model.modules())
p.remove()
check(wrapped == len(p.policy) and all("forward" not in m.__dict__ for m in model.modules()),
      f"apply() wrapped {wrapped} modules for {len(p.policy)} planned, remove() unwrapped them")
check(json.loads(p.to_json())["saved_bytes"] == p.saved_bytes, "to_json() carries the plan")

print(f"toru.plan of resnet18 at batch 2, 64x64: {roomy_seconds:.2f} s (ONNX export, import, tune)")
print("plan test:", "ok" if not failures else f"{len(failures)} FAILED")
sys.exit(1 if failures else 0)
