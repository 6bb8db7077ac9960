"""Data parallelism over processes: what the trainer needs from torch.distributed, and nothing
when it runs alone.

`accelerate launch --num_processes N` (or torchrun) starts N copies of the trainer with RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; each copy holds the whole policy, rolls out its share
of the step's prompts through its own env server, and the copies sum their gradients (gloo on CPU,
NCCL on CUDA) before identical optimizer steps — DDP's semantics, done explicitly because the
trainer scores tokens through the backbone and the LM head separately (DDP's hooks expect
`forward`). Every collective here is called by every rank in the same order; a decision that
could differ between ranks (a time budget, Ctrl-C) goes through `agree` first. It never starts
processes itself.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Distributed:
    rank: int = 0
    world: int = 1

    @property
    def enabled(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def share(self, items: list[Any]) -> list[Any]:
        """This rank's slice of a list every rank built the same way."""
        return items[self.rank::self.world] if self.enabled else items

    def sum(self, value: float) -> float:
        if not self.enabled:
            return value
        tensor = torch.tensor([float(value)], dtype=torch.float64)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return float(tensor.item())

    def max(self, value: float) -> float:
        if not self.enabled:
            return value
        tensor = torch.tensor([float(value)], dtype=torch.float64)
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return float(tensor.item())

    def agree(self, stop: bool) -> bool:
        """True on every rank when any rank says stop (time budgets and signals differ per process)."""
        return self.max(1.0 if stop else 0.0) > 0 if self.enabled else stop

    def gather(self, value: Any) -> list[Any]:
        """Every rank's `value` (picklable), in rank order, on every rank."""
        if not self.enabled:
            return [value]
        gathered: list[Any] = [None] * self.world
        dist.all_gather_object(gathered, value)
        return gathered

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def sum_gradients(self, model: torch.nn.Module) -> None:
        """All-reduce (sum) every trainable parameter's gradient in one flat buffer."""
        self.sum_tensor_gradients([p for p in model.parameters() if p.requires_grad])

    def sum_tensor_gradients(self, parameters: list[torch.Tensor]) -> None:
        """All-reduce (sum) the gradients of `parameters` (model parameters or their fp32 masters)
        in one flat buffer; one without a gradient on this rank contributes zeros, so every rank
        calls the same collective."""
        if not self.enabled:
            return
        for parameter in parameters:
            if parameter.grad is None:
                parameter.grad = torch.zeros_like(parameter)
        flat = torch.cat([p.grad.reshape(-1) for p in parameters])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for parameter in parameters:
            count = parameter.numel()
            parameter.grad.copy_(flat[offset:offset + count].view_as(parameter.grad))
            offset += count

    def broadcast_parameters(self, model: torch.nn.Module) -> None:
        """Make every rank's weights rank 0's (they are built from the same seed; this makes sure)."""
        if not self.enabled:
            return
        with torch.no_grad():
            for tensor in list(model.parameters()) + list(model.buffers()):
                dist.broadcast(tensor.data, src=0)

    def close(self) -> None:
        if self.enabled and dist.is_initialized():
            dist.destroy_process_group()


def init_distributed(device: str) -> Distributed:
    """Join the process group that the launcher described in the environment (a single process
    when WORLD_SIZE is unset or 1)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Distributed()
    rank = int(os.environ.get("RANK", "0"))
    if not dist.is_initialized():
        on_cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
        # On GPUs the counters, decisions and pickled objects above are CPU tensors, and so are
        # CPU-offloaded shards: gloo carries those, NCCL the CUDA tensors (gradients, parameters).
        backend = "cpu:gloo,cuda:nccl" if on_cuda else "gloo"
        if on_cuda:
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        # Held-out evaluation and checkpoints run on rank 0 while the others wait at a barrier.
        dist.init_process_group(backend=backend, timeout=timedelta(hours=2))
    return Distributed(rank=rank, world=world)
