# SPDX-License-Identifier: BSD-3-Clause
"""The module wrappers a MemoryPlan applies (memory.py): recompute by torch.utils.checkpoint, offload
by torch.autograd.graph.save_on_cpu. torch is imported on first use."""
import contextlib
import functools


@functools.lru_cache(maxsize=None)
def _hold_function():
    import torch

    class Hold(torch.autograd.Function):
        """Identity that saves its inputs for backward."""

        @staticmethod
        def forward(ctx, *xs):
            ctx.save_for_backward(*xs)
            return xs

        @staticmethod
        def backward(ctx, *grads):
            return grads

    return Hold


def _hold(args):
    """The checkpoint's tensor inputs, passed through an identity that saves them for backward.

    A checkpoint keeps its inputs to recompute from, but holds them in a closure that
    saved_tensors_hooks never sees; saved through autograd they are counted where the plan counts
    them (and an enclosing save_on_cpu would move them). Autograd also refuses an in-place change
    of them inside the module, which would make the recomputation read changed inputs.
    """
    import torch

    idx = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    if not idx:
        return args
    held = _hold_function().apply(*(args[i] for i in idx))
    out = list(args)
    for i, h in zip(idx, held):
        out[i] = h
    return tuple(out)


@contextlib.contextmanager
def _buffers_kept(module):
    """The recomputation runs the forward a second time: whatever buffers it updates (batch norm's
    running statistics and counter) are put back, so they change once per step, as without the plan."""
    import torch

    saved = [(b, b.detach().clone()) for b in module.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for b, s in saved:
                b.copy_(s)


def recomputed(module, forward):
    """`forward` of `module` under torch.utils.checkpoint: its saved tensors are rebuilt in backward."""
    import torch
    from torch.utils.checkpoint import checkpoint

    def run_checkpointed(*args, **kwargs):
        if not torch.is_grad_enabled():
            return forward(*args, **kwargs)
        calls = 0

        def run(*a, **kw):
            nonlocal calls
            calls += 1
            if calls == 1:
                return forward(*a, **kw)
            with _buffers_kept(module):
                return forward(*a, **kw)

        # Non-reentrant: works when no input needs a gradient (the first module) and with
        # torch.autograd.grad; preserve_rng_state replays dropout's random numbers.
        return checkpoint(run, *_hold(args), use_reentrant=False, preserve_rng_state=True, **kwargs)

    return run_checkpointed


def spans_recomputed(sequential, spans):
    """forward of an nn.Sequential whose runs of children [a, b) in `spans` are each recomputed as one
    piece, as torch.utils.checkpoint.checkpoint_sequential does for its segments."""
    import torch

    children = list(sequential)
    pieces = {}
    for a, b in spans:
        # A container of the same child modules (nothing copied): its buffers are what a rerun
        # updates, its forward what is checkpointed.
        piece = torch.nn.Sequential(*children[a:b])
        pieces[a] = (b, recomputed(piece, piece.forward))

    def run_spans(input):
        i = 0
        while i < len(children):
            if i in pieces:
                i, run = pieces[i]
                input = run(input)
            else:
                input = children[i](input)
                i += 1
        return input

    return run_spans


def offloaded(module, forward):
    """`forward` of `module` under save_on_cpu: what its ops save goes to host memory."""
    import torch

    def run_offloaded(*args, **kwargs):
        # Pinned host memory lets the copies overlap compute on a GPU; on a CPU nothing moves.
        with torch.autograd.graph.save_on_cpu(pin_memory=torch.cuda.is_available()):
            return forward(*args, **kwargs)

    return run_offloaded
