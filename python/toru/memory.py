# SPDX-License-Identifier: BSD-3-Clause
"""toru.plan: toru::swap's memory plans applied to PyTorch modules (docs/python.md, "Memory plans").

    plan = toru.plan(model, budget="12GiB", example_input=x)   # toru::swap decides
    print(plan.summary())
    with plan.apply(model):                                     # checkpoint / save_on_cpu wrappers
        loss_fn(model(x), y).backward()

The model is exported to ONNX in memory (training mode, so batch norm and dropout stay as training
runs them); toru::swap imports it, builds the training graph and tunes a plan under the budget. Its
decisions come back per ONNX node, and node names carry PyTorch's module scopes
("/layer1/layer1.0/conv1/Conv"), so each decision lands on a module:
  - recompute: a recompute unit that is exactly one module's ops is re-run in backward
    (torch.utils.checkpoint); units that are no single module are never offered to the planner;
  - offload: a tensor the plan swaps out is saved to host memory by every module whose ops save it
    (torch.autograd.graph.save_on_cpu), which moves all those modules save, a superset of the plan's;
  - keep: the rest.
MemoryPlan.saved_bytes is what autograd then holds on the device after the forward pass, counted by
toru::swap on the same graph with the applied policy.

torch is imported on first use: `import toru` stays free of it.
"""
import io
import json
import os
import re
import warnings

from . import _core
from ._wrappers import offloaded, recomputed, spans_recomputed

KEEP, RECOMPUTE, OFFLOAD = "keep", "recompute", "offload"
_STRATEGIES = ("none", "swap", "recompute", "hybrid", "auto")
_SIZE_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}

__all__ = ["plan", "MemoryPlan", "KEEP", "RECOMPUTE", "OFFLOAD"]


def _budget_bytes(budget):
    """Bytes from an int or a string such as "12GiB" or "1.5 GB"."""
    if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:  # True is an int to Python
        return budget
    if isinstance(budget, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", budget)
        if m and m.group(2).upper() in _SIZE_UNITS and float(m.group(1)) > 0:
            return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])
    raise ValueError(f"budget: expected a positive number of bytes or a size such as '12GiB', got {budget!r}")


def _scope_name(qualified):
    """The scope name torch.onnx gives a module: its qualified name from the last non-numeric atom
    on ("layer1.0.conv1" -> "conv1", "layer1.0" -> "layer1.0", "enc.layers.0" -> "layers.0")."""
    atoms = qualified.split(".")
    for i in range(len(atoms) - 1, -1, -1):
        if not atoms[i].isnumeric():
            return ".".join(atoms[i:])
    return qualified


def _module_path(node_name, modules):
    """The module that ran an ONNX node: "/layer1/layer1.0/relu_1/Relu" -> "layer1.0.relu".

    The exporter names a node by the scope names of the module calls it is in, outermost first, then
    the op; a module called again gets "_<n>" ("relu_1"). A scope's module is a descendant of the
    previous one whose qualified name ends with the scope name's atoms, some of which may repeat the
    end of the previous one's ("layer1" then "layer1.0"; "enc" then "layers.0", a ModuleList being
    no call of its own). `modules`: the model's qualified module names, or None for an ONNX file
    alone, where the longest overlap is taken and "_<n>" always read as a repeated call. Nodes
    outside any scope (the planner's loss) belong to no module (None).
    """
    if not node_name.startswith("/"):
        return None
    path = []
    for scope in node_name.split("/")[1:-1]:
        again = re.sub(r"_[0-9]+$", "", scope)
        names = (scope, again) if modules is not None else (again,)
        found = None
        for name in names:
            atoms = name.split(".")
            for overlap in range(min(len(atoms) - 1, len(path)), -1, -1):
                if overlap and path[-overlap:] != atoms[:overlap]:
                    continue
                full = path + atoms[overlap:]
                if _scope_name(".".join(full)) == name and (modules is None or ".".join(full) in modules):
                    found = full
                    break
            if found:
                break
        path = found or path + [scope]  # unknown: apply() names it if it is planned
    return ".".join(path)


def _inside(path, ancestor):
    return ancestor == "" or path == ancestor or path.startswith(ancestor + ".")


def _sequential_span(root, path, own, members):
    """(a, b, child paths) when the op ids `own` are exactly those of children a..b-1 (two or more)
    of the nn.Sequential at `path`, else None."""
    import torch

    parent = root.get_submodule(path)
    if not isinstance(parent, torch.nn.Sequential):
        return None
    prefix = path + "." if path else ""
    children = [prefix + n for n, _ in parent.named_children()]
    hit = [k for k, c in enumerate(children) if members.get(c, set()) & own]
    if len(hit) < 2:
        return None
    a, b = hit[0], hit[-1] + 1
    run = [members.get(c, set()) for c in children[a:b]]
    if not all(m <= own for m in run) or set().union(*run) != own:
        return None
    return a, b, children[a:b]


def _export(model, example_input):
    """ONNX bytes of `model` in training mode, with a dynamic batch axis; the model is left as it was."""
    import torch

    args = example_input if isinstance(example_input, tuple) else (example_input,)
    names = [f"input{i}" for i in range(len(args))]
    # Tracing runs the forward once: batch norm would update its running statistics and dropout
    # draw random numbers. Neither may change the user's model or random stream.
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    f = io.BytesIO()
    try:
        cuda = sorted({t.device.index or 0 for t in args if isinstance(t, torch.Tensor) and t.is_cuda})
        with torch.random.fork_rng(devices=cuda), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's notes on removed in-place buffer updates
            torch.onnx.export(model, args, f, input_names=names, dynamic_axes={n: {0: "batch"} for n in names},
                              opset_version=13, training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False)
    finally:
        with torch.no_grad():
            for b, saved in buffers:
                b.copy_(saved)
    return f.getvalue()


def plan(model_or_onnx, budget, example_input=None, strategy="auto", batch=None, device="v100-nvlink2",
         profile="pytorch"):
    """Plans which activations of a model to keep, recompute or offload to fit `budget`.

    model_or_onnx: a torch.nn.Module (with `example_input`), or an ONNX model exported in training
        mode (bytes, or a path) with `batch`.
    budget: device memory for one training step, in bytes or as a size ("12GiB"): parameters,
        optimizer state (momentum SGD), gradients, the `profile`'s context and workspace, and the
        activations, as toru::swap's simulator replays the step.
    example_input: a tensor (or tuple of tensors) the model is called with; its first axis is the batch.
    strategy: "auto" (the fastest plan that fits), "none", "swap" (offload only), "recompute" or "hybrid".
    batch: the batch to plan for (default: example_input's).
    device: a toru::swap device preset (toru._core.device_presets()): bandwidths and compute rates of
        the time model the plan is tuned on; its memory size is replaced by `budget`.
    profile: the framework memory profile (toru._core.memory_profiles(), docs/swap.md).

    Raises ValueError naming the argument for bad arguments, and for a budget below the leanest plan
    (the message gives that plan's bytes).
    """
    import torch

    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy: expected one of {', '.join(_STRATEGIES)}, got {strategy!r}")
    if device not in _core.device_presets():
        raise ValueError(f"device: expected one of {', '.join(_core.device_presets())}, got {device!r}")
    if profile not in _core.memory_profiles():
        raise ValueError(f"profile: expected one of {', '.join(_core.memory_profiles())}, got {profile!r}")
    budget = _budget_bytes(budget)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch <= 0):
        raise ValueError(f"batch: expected a positive int, got {batch!r}")
    if not _core.onnx_available():
        raise RuntimeError("toru.plan: this toru was built without ONNX import (libonnx-dev)")

    root = None
    if isinstance(model_or_onnx, torch.nn.Module):
        root = model_or_onnx
        tensors = example_input if isinstance(example_input, tuple) else (example_input,)
        if example_input is None or not all(isinstance(t, torch.Tensor) and t.dim() > 0 for t in tensors):
            raise ValueError("example_input: expected a tensor (or a tuple of tensors) with a batch axis to call "
                             f"the model with, got {type(example_input).__name__}")
        onnx, name = _export(root, example_input), type(root).__name__
        batch = batch or tensors[0].shape[0]
    elif isinstance(model_or_onnx, (bytes, str, os.PathLike)):
        if batch is None:
            raise ValueError("batch: expected the batch size to plan an ONNX model for, got None")
        if isinstance(model_or_onnx, bytes):
            onnx, name = model_or_onnx, "model"
        else:
            with open(model_or_onnx, "rb") as f:
                onnx = f.read()
            name = os.path.basename(os.fspath(model_or_onnx))
    else:
        raise ValueError("model_or_onnx: expected a torch.nn.Module, ONNX bytes or a path to an .onnx file, got "
                         f"{type(model_or_onnx).__name__}")
    graph = _core.SwapGraph(onnx, name, batch, profile)
    return MemoryPlan._build(graph, root, name, batch, budget, strategy, device, profile)


class MemoryPlan:
    """A per-module memory policy from toru::swap, applied to a model with apply() and undone by
    remove() (or by leaving `with plan.apply(model):`).

    policy: {module path: "recompute" | "offload"}; every other module keeps what it saves.
    saved_bytes: device bytes autograd holds after the forward pass under this policy (the loss
        excluded); unplanned_saved_bytes: the same with every module kept.
    peak_bytes: the step's device peak of the planner's plan; min_budget_bytes: the leanest plan's
        (the smallest budget this strategy accepts); budget_bytes: the budget.
    """

    @classmethod
    def _build(cls, g, root, name, batch, budget, strategy, device, profile):
        self = cls()
        ops = g.forward_ops()
        tensors = g.tensors()
        names = {n for n, _ in root.named_modules()} if root is not None else None
        module = [_module_path(o[0], names) if o[1] != "loss" else None for o in ops]
        members = {}  # module path -> ids of the ops it runs, its submodules' included
        for i, path in enumerate(module):
            if path is None:
                continue
            parts = path.split(".") if path else []
            for k in range(len(parts) + 1):
                members.setdefault(".".join(parts[:k]), set()).add(i)

        # A unit PyTorch can recompute is one module's ops exactly, or the ops of a run of children
        # of an nn.Sequential (re-run as one piece).
        unit_target, self._spans = {}, {}
        for uid, unit_ops, _, _ in g.units():
            own = {i for i in unit_ops if module[i] is not None}
            if not own:
                continue
            path = ".".join(os.path.commonprefix([module[i].split(".") if module[i] else [] for i in own]))
            if members.get(path) == own:
                unit_target[uid] = path
            elif root is not None:
                span = _sequential_span(root, path, own, members)
                if span:
                    key = f"{path}[{span[0]}:{span[1]}]"
                    unit_target[uid], self._spans[key], members[key] = key, (path,) + span, own
        recomputable = sorted(unit_target)

        self.min_budget_bytes = g.leanest_peak(strategy, device, recomputable)
        if budget < self.min_budget_bytes:
            raise ValueError(f"budget: expected at least {self.min_budget_bytes} bytes "
                             f"({self.min_budget_bytes / 2**30:.3f} GiB: the leanest '{strategy}' plan of {name} at "
                             f"batch {batch}, '{profile}' profile, {device}), got {budget} bytes")
        r = g.tune(strategy, device, budget, recomputable)

        policy = {}
        for uid in r["recompute_units"]:
            policy[unit_target[uid]] = RECOMPUTE
        self.notes = []
        for t in r["swapped_tensors"]:
            for i, o in enumerate(ops):
                if t not in o[4] or module[i] is None:
                    continue
                path = module[i]
                if self._recomputed(path, policy):
                    continue  # re-run in backward: nothing of it is saved
                if path == "":
                    self.notes.append(f"{tensors[t][0]}: saved by {o[0]} outside any submodule, kept on the device")
                    continue
                policy[path] = OFFLOAD

        # What stays on the device: ops of recomputed and offloaded modules save nothing there, a
        # checkpoint holds its module's inputs, and the loss is the caller's.
        loss = [i for i, o in enumerate(ops) if o[1] == "loss"]
        dropped, held = list(loss), set()
        for path, action in policy.items():
            own = members[path]
            dropped += sorted(own)
            if action == RECOMPUTE:
                produced = {t for i in own for t in ops[i][3]}
                held |= {t for i in own for t in ops[i][2] if tensors[t][2] and t not in produced}
        self.saved_bytes = g.saved_bytes(dropped, sorted(held))
        self.unplanned_saved_bytes = g.saved_bytes(loss, [])
        first = {path: min(members[path]) for path in policy}
        self.policy = dict(sorted(policy.items(), key=lambda kv: first[kv[0]]))
        # Per module: the bytes that only its ops save (what the policy takes off the device).
        self.module_bytes = {p: self.unplanned_saved_bytes - g.saved_bytes(loss + sorted(members[p]), [])
                             for p in self.policy}
        self.budget_bytes = budget
        self.peak_bytes = r["peak_bytes"]
        self.strategy = r["strategy"]
        self.requested_strategy = strategy
        self.device, self.profile = device, profile
        self.step_seconds = r["step_seconds"]
        self.planning_seconds = r["planning_seconds"]
        self.evaluations = r["evaluations"]
        self._applied = None
        return self

    def _recomputed(self, path, policy):
        """Whether the module at `path` runs inside a recomputed module or span of `policy`."""
        for key, action in policy.items():
            if action != RECOMPUTE:
                continue
            inside = self._spans[key][3] if key in self._spans else [key]
            if any(_inside(path, p) for p in inside):
                return True
        return False

    def policy_of(self, path):
        """"keep", "recompute" or "offload" for the module at `path` ("layer1.0", "features.2"): its
        own policy, "recompute" inside a recomputed module or span, else "keep"."""
        if path in self.policy:
            return self.policy[path]
        return RECOMPUTE if self._recomputed(path, self.policy) else KEEP

    def apply(self, model):
        """Wraps the planned modules of `model` (the planned model, or one with the same module
        names): recompute by torch.utils.checkpoint, offload by torch.autograd.graph.save_on_cpu.
        Returns the plan, a context manager whose exit calls remove()."""
        import torch

        if not isinstance(model, torch.nn.Module):
            raise ValueError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
        if self._applied is not None:
            raise ValueError("model: this plan is applied already; call remove() first")
        modules, spans = {}, {}
        for key in self.policy:  # all found before any is changed
            path = self._spans[key][0] if key in self._spans else key
            try:
                m = model.get_submodule(path)
            except AttributeError:
                raise ValueError(f"model: expected a submodule '{path}' as in the planned model, found none") from None
            if key in self._spans:
                _, a, b, _ = self._spans[key]
                if not isinstance(m, torch.nn.Sequential) or len(m) < b:
                    raise ValueError(f"model: expected '{path}' to be an nn.Sequential of at least {b} modules as in "
                                     f"the planned model, got {type(m).__name__}")
                spans.setdefault(path, (m, []))[1].append((a, b))
            else:
                modules[key] = m
        self._applied = []
        for path, (m, runs) in spans.items():
            self._applied.append((m, m.__dict__.get("forward")))
            m.forward = spans_recomputed(m, runs)
        for path, m in modules.items():
            self._applied.append((m, m.__dict__.get("forward")))
            wrap = recomputed if self.policy[path] == RECOMPUTE else offloaded
            m.forward = wrap(m, m.forward)
        return self

    def remove(self):
        """Undoes apply(): the modules run their own forward again."""
        for m, own in reversed(self._applied or []):
            if own is None:
                del m.forward
            else:
                m.forward = own
        self._applied = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def as_dict(self):
        return {"strategy": self.strategy, "requested_strategy": self.requested_strategy, "device": self.device,
                "profile": self.profile, "budget_bytes": self.budget_bytes, "peak_bytes": self.peak_bytes,
                "min_budget_bytes": self.min_budget_bytes, "saved_bytes": self.saved_bytes,
                "unplanned_saved_bytes": self.unplanned_saved_bytes, "step_seconds": self.step_seconds,
                "planning_seconds": self.planning_seconds, "evaluations": self.evaluations,
                "modules": [{"module": p, "policy": a, "bytes": self.module_bytes[p]} for p, a in self.policy.items()],
                "notes": self.notes}

    def to_json(self, **kwargs):
        return json.dumps(self.as_dict(), **kwargs)

    def summary(self):
        mib = 2.0**20
        lines = [f"toru memory plan: {self.strategy} (asked: {self.requested_strategy}), {self.device}, "
                 f"'{self.profile}' profile",
                 f"  budget {self.budget_bytes / mib:.1f} MiB, planned peak {self.peak_bytes / mib:.1f} MiB, "
                 f"leanest {self.min_budget_bytes / mib:.1f} MiB",
                 f"  saved for backward on the device: {self.saved_bytes / mib:.2f} MiB "
                 f"(unplanned {self.unplanned_saved_bytes / mib:.2f} MiB)",
                 f"  simulated step {self.step_seconds * 1e3:.2f} ms; planned in {self.planning_seconds:.3f} s"]
        for p, a in self.policy.items():
            lines.append(f"  {a:9s} {p or '<model>'} ({self.module_bytes[p] / mib:.2f} MiB that only its ops save)")
        if not self.policy:
            lines.append("  every module keeps what it saves")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self):
        return (f"MemoryPlan(strategy={self.strategy!r}, saved_bytes={self.saved_bytes}, "
                f"peak_bytes={self.peak_bytes}, policy={self.policy!r})")
