# SPDX-License-Identifier: BSD-3-Clause
"""toru.plan on a torchvision ResNet-18 and a plain nn.Sequential CNN (whose units are runs of
children), batch 2, 64x64, training mode: the applied plan changes what autograd keeps, not what it
computes. For a recompute and an auto plan of each:
  (a) the planned model's gradients, loss and batch-norm running statistics equal the unplanned
      model's bitwise: recomputation replays the same ops on the same inputs with the same random
      state (checkpoint's preserve_rng_state), and the plan puts back the running statistics the
      rerun updates, so they change once per step as without the plan;
  (b) the bytes autograd saves in the forward pass, measured with saved_tensors_hooks (each storage
      once, parameters and buffers excluded; tensors that save_on_cpu takes are not seen), are at most
      the plan's saved_bytes, which is at most the budget; unplanned, they equal the planner's count;
  (c) a budget below the unplanned peak makes the plan recompute or offload, and the measured bytes drop;
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


def plans_apply_exactly(what, pristine, x, labels):
    """(a)-(c) for one model; returns the recompute plan's budget and the roomy plan."""
    model = copy.deepcopy(pristine)
    ref_saved, ref_grads, ref_buffers, ref_loss = step(copy.deepcopy(pristine), x, labels)

    # A budget with room for everything: nothing to do, and the planner's count is PyTorch's.
    roomy = toru.plan(model, budget="1TiB", example_input=x, strategy="recompute")
    print(roomy.summary())
    check(roomy.policy == {}, f"{what}: a roomy budget keeps everything")
    check(roomy.saved_bytes == ref_saved,
          f"{what}: unplanned saved bytes: toru {roomy.saved_bytes}, PyTorch's saved_tensors_hooks {ref_saved}")
    check(all(torch.equal(a, b) for a, b in zip(model.buffers(), pristine.buffers())),
          f"{what}: planning (the ONNX export's forward) left the model's running statistics alone")

    # (c) Between the leanest recompute plan and the unplanned peak, something must be recomputed.
    tight = (roomy.min_budget_bytes + roomy.peak_bytes) // 2
    for strategy in ("recompute", "auto"):
        model = copy.deepcopy(pristine)
        t0 = time.perf_counter()
        p = toru.plan(model, budget=tight, example_input=x, strategy=strategy)
        seconds = time.perf_counter() - t0
        print(p.summary())
        print(p.to_json())
        check(p.policy != {} and p.peak_bytes <= p.budget_bytes,
              f"{what} {strategy}: budget {tight} B below the unplanned peak {roomy.peak_bytes} B is met by a policy")
        if strategy == "recompute":
            check(set(p.policy.values()) == {"recompute"}, f"{what} recompute: only recompute decisions")
        with p.apply(model):
            saved, grads, buffers, loss = step(model, x, labels)
        print(f"{what} {strategy}: planned {p.saved_bytes} B, measured {saved} B, unplanned {ref_saved} B, "
              f"budget {p.budget_bytes} B; toru.plan {seconds:.2f} s (tune {p.planning_seconds * 1e3:.1f} ms)")
        check(saved <= p.saved_bytes <= p.budget_bytes,
              f"{what} {strategy}: measured {saved} <= planned {p.saved_bytes} <= budget")
        check(saved < ref_saved, f"{what} {strategy}: measured {saved} < unplanned {ref_saved}")
        check(same(grads, ref_grads) and torch.equal(loss, ref_loss),
              f"{what} {strategy}: gradients and loss equal bitwise")
        check(same(buffers, ref_buffers), f"{what} {strategy}: running statistics equal bitwise (updated once)")
        check(all("forward" not in m.__dict__ for m in model.modules()), f"{what} {strategy}: leaving apply() unwraps")
    return tight, roomy


torch.manual_seed(0)
x = torch.randn(2, 3, 64, 64)
labels = torch.tensor([3, 7])
pristine = torchvision.models.resnet18(num_classes=10)
pristine.train()
t0 = time.perf_counter()
tight, roomy = plans_apply_exactly("resnet18", pristine, x, labels)
model = copy.deepcopy(pristine)


def conv_bn_relu(cin, cout):
    return [torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU(inplace=True)]


# A plain nn.Sequential CNN: its units are runs of children, recomputed as one piece each.
chain = torch.nn.Sequential(*conv_bn_relu(3, 16), *conv_bn_relu(16, 16), torch.nn.MaxPool2d(2),
                            *conv_bn_relu(16, 32), *conv_bn_relu(32, 32), torch.nn.MaxPool2d(2),
                            torch.nn.Flatten(), torch.nn.Linear(32 * 16 * 16, 10))
chain_tight, _ = plans_apply_exactly("sequential", chain, x, labels)
chain_plan = toru.plan(chain, budget=chain_tight, example_input=x, strategy="recompute")
check(any("[" in k for k in chain_plan.policy) and chain_plan.policy_of("0") == "recompute",
      f"sequential: runs of children are recomputed ({list(chain_plan.policy)})")
print(f"test models planned and checked in {time.perf_counter() - t0:.1f} s")

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

print("plan test:", "ok" if not failures else f"{len(failures)} FAILED")
sys.exit(1 if failures else 0)
