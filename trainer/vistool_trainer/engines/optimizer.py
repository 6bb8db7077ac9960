"""The AdamW every engine steps, built so that its step allocates no copy of the parameters.

torch.optim.AdamW picks its implementation from where the parameters live when neither `fused`
nor `foreach` is given: on CUDA the multi-tensor ("foreach") one, which computes the denominator
sqrt(v̂) + ε for every parameter of the group at once (`torch._foreach_sqrt` over the second
moments, then in-place division and addition): a temporary fp32 tensor the size of every trained
parameter, 4 bytes per parameter on top of the 16-18 the training state holds, at the moment the
gradients, both moments and the masters are all alive. For Qwen2.5-VL-3B (3.75B parameters,
replicated with fp32 masters) that is 22 instead of 18 bytes per parameter, ~77 GiB before any
activation: more than an 80 GB GPU holds. The fused kernel updates each tensor in place and
allocates nothing of that size; it is also faster. On the CPU the default is already the
per-tensor loop (a temporary the size of one parameter at a time): it is kept, so CPU runs step
exactly as before.

`bench/trainer_memory.py` measures each variant's step peak (`step_peak_bytes`), and
trainer/tests/test_optimizer_memory.py holds the engine's optimizer to it.
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def adamw_options(device_type: str) -> dict[str, bool]:
    """fused on an accelerator (CUDA), the per-tensor loop elsewhere; never the foreach default."""
    return {"fused": True} if device_type == "cuda" else {"foreach": False}


# PyTorch's and veRL's AdamW betas, the schema's default for sft.betas and rl.betas.
DEFAULT_BETAS = (0.9, 0.999)


def adamw(parameters: Iterable[torch.Tensor], lr: float, weight_decay: float, device_type: str | None = None,
          betas: Sequence[float] = DEFAULT_BETAS) -> torch.optim.AdamW:
    """AdamW with the implementation for where the parameters live (`device_type` overrides it:
    the tests build the CUDA choice on CPU tensors, where the fused kernel runs too)."""
    params = list(parameters)
    if device_type is None:
        devices = {p.device.type for p in params}
        device_type = devices.pop() if len(devices) == 1 else "mixed"
    return torch.optim.AdamW(params, lr=lr, betas=tuple(betas), weight_decay=weight_decay, **adamw_options(device_type))


def resolved_implementation(optimizer: torch.optim.Optimizer, device_type: str) -> str:
    """Which implementation `optimizer.step()` runs for parameters on `device_type`: what torch
    resolves an unset `fused`/`foreach` to (torch.optim.optimizer._default_to_fused_or_foreach:
    foreach on CUDA, the loop elsewhere)."""
    group = optimizer.param_groups[0]
    if group.get("fused"):
        return "fused"
    foreach = group.get("foreach")
    if foreach is None:
        return "foreach" if device_type == "cuda" else "loop"
    return "foreach" if foreach else "loop"


class _LiveAllocations(TorchDispatchMode):
    """Counts the bytes of storages created by the ops run under it, and the peak of those still alive."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._seen: set[int] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        known_pointers = {t.untyped_storage().data_ptr() for t in _tensors((args, kwargs or {}))}
        out = func(*args, **(kwargs or {}))
        for tensor in _tensors(out):
            storage = tensor.untyped_storage()
            pointer = storage.data_ptr()
            if pointer in known_pointers or pointer in self._seen or storage.nbytes() == 0:
                continue
            self._seen.add(pointer)
            size = storage.nbytes()
            self.live += size
            self.peak = max(self.peak, self.live)
            weakref.finalize(tensor, self._freed, pointer, size)
        return out

    def _freed(self, pointer: int, size: int) -> None:
        self._seen.discard(pointer)
        self.live -= size


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def step_peak_bytes(optimizer: torch.optim.Optimizer, force_implementation: str | None = None) -> int:
    """Peak bytes of the tensors `optimizer.step()` allocates and holds at once beyond what exists
    before it (the state it creates on a first step included), on whatever device the parameters
    are. `force_implementation` ("foreach", "fused", "loop") runs that implementation for this call,
    e.g. the one CUDA would resolve an unset default to, on CPU tensors."""
    saved = [(group.get("foreach"), group.get("fused")) for group in optimizer.param_groups]
    if force_implementation is not None:
        for group in optimizer.param_groups:
            group["foreach"] = force_implementation == "foreach"
            group["fused"] = force_implementation == "fused"
    mode = _LiveAllocations()
    try:
        with mode:
            optimizer.step()
    finally:
        for group, (foreach, fused) in zip(optimizer.param_groups, saved):
            group["foreach"], group["fused"] = foreach, fused
    return mode.peak
