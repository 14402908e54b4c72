# SPDX-License-Identifier: BSD-3-Clause
"""Reproducible data parallelism for PyTorch: a DDP communication hook that averages gradients
with toru's ordered reduction (docs/python.md).

PyTorch's own hooks sum with the process group's allreduce (gloo's ring, NCCL's ring or tree), whose
order of additions depends on the bucket's size and position: two trainings that differ only in
``bucket_cap_mb`` end with different weights. toru adds every element in rank order,
((g_0 + g_1) + ... + g_{P-1}) / P, whatever the bucket, so they end bit-identical::

    from mpi4py import MPI
    import torch.distributed as dist, toru.ddp
    dist.init_process_group("gloo", ...)                # DDP still needs a process group
    model = torch.nn.parallel.DistributedDataParallel(net)
    toru.ddp.register(model, MPI.COMM_WORLD)             # gradients now reduced by toru

With ``overlap=True`` the reduction runs on one worker thread per hook state, in the
order DDP hands over its buckets (the same on every rank), so it overlaps the rest of backward as
PyTorch's asynchronous allreduce does. With ``overlap=False`` each bucket is reduced inside the hook,
before backward goes on: better where ranks share cores (oversubscribed), since MPI's progress polls
and a worker thread waiting in MPI then takes CPU from backward (docs/python.md has the measurement).
The default (``overlap=None``) overlaps when this node's ranks times torch's threads fit its cores.
CPU float32 gradients only; the communicator must hold the same processes as the process group, in
the same rank order (checked by ``register``).
"""
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.distributed as dist

from ._core import OrderedAllreduce

__all__ = ["OrderedReduction", "ordered_allreduce_hook", "register"]


class OrderedReduction:
    """The state of ``ordered_allreduce_hook``: toru's reduction over ``comm`` (an mpi4py
    communicator; None: COMM_WORLD) and, with ``overlap``, the worker thread that runs it. Collective
    to create."""

    def __init__(self, comm=None, overlap=None):
        self.reducer = OrderedAllreduce(comm)
        if overlap is None:
            overlap = _cores_to_spare(comm)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toru-ddp") if overlap else None

    def submit(self, tensor):
        """Starts averaging ``tensor`` (CPU, float32, contiguous) in place; returns a
        ``torch.futures.Future`` completed with it (or with the exception, raised on every rank)."""
        if tensor.device.type != "cpu" or tensor.dtype != torch.float32 or not tensor.is_contiguous():
            raise ValueError(
                "toru.ddp: gradients: expected contiguous float32 CPU tensors, "
                f"got {tensor.dtype} on {tensor.device}{'' if tensor.is_contiguous() else ', not contiguous'}"
            )
        fut = torch.futures.Future()

        def run():
            try:
                self.reducer.average(tensor.numpy())
            except BaseException as e:  # noqa: BLE001  (handed to the DDP reducer, which raises it)
                fut.set_exception(e)
            else:
                fut.set_result(tensor)

        if self._worker is None:
            run()
        else:
            self._worker.submit(run)
        return fut

    def close(self):
        """Waits for the reductions in flight and stops the worker thread."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)


def _cores_to_spare(comm):
    """Whether this node's ranks, each with torch's threads, leave a core for the worker thread's
    waits (collective over comm: the node's ranks are counted with a shared-memory split)."""
    import os

    from mpi4py import MPI

    node = (MPI.COMM_WORLD if comm is None else comm).Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_size() * torch.get_num_threads() <= (os.cpu_count() or 1)
    finally:
        node.Free()


def ordered_allreduce_hook(state, bucket):
    """DDP communication hook (``model.register_comm_hook(state, ordered_allreduce_hook)``, state an
    ``OrderedReduction``): the bucket's gradients averaged over the ranks in rank order."""
    return state.submit(bucket.buffer())


def register(model, comm=None, overlap=None):
    """Registers ``ordered_allreduce_hook`` on the DDP ``model`` and returns its state. ``comm``
    (mpi4py; None: COMM_WORLD) must list the same processes as the model's process group, in the
    same order: checked here on every rank, so a mismatch raises everywhere. ``overlap``: see the
    module's documentation."""
    if not isinstance(model, torch.nn.parallel.DistributedDataParallel):
        raise ValueError(
            f"toru.ddp.register: model: expected a torch.nn.parallel.DistributedDataParallel, got {type(model).__name__}"
        )
    state = OrderedReduction(comm, overlap)
    group = model.process_group
    pg_rank, pg_size = dist.get_rank(group), dist.get_world_size(group)
    from mpi4py import MPI

    mpi = MPI.COMM_WORLD if comm is None else comm
    same = pg_size == state.reducer.size and pg_rank == state.reducer.rank
    if not mpi.allreduce(1 if same else 0, op=MPI.MIN):
        state.close()
        raise ValueError(
            "toru.ddp.register: comm: expected the processes of the model's process group in its rank order, "
            "got a communicator whose size or rank order differs on at least one rank"
        )
    model.register_comm_hook(state, ordered_allreduce_hook)
    return state
