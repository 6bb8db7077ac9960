"""The random state a checkpoint keeps, so that a resumed run draws what the uninterrupted one
would have: Python's, torch's CPU generator and — on a GPU — every CUDA device's generator
(sampling on a GPU draws from the CUDA generator, so without it a resumed run samples other
rollouts). One file per rank. It never decides when to save."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import torch


def capture() -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def save(path: Path) -> None:
    torch.save(capture(), path)


def restore(path: Path) -> None:
    """Put a saved state back. A state saved on GPUs resumed on a CPU keeps the CPU parts (the run
    is then not the same run, and cannot be); one saved on a CPU leaves CUDA generators as seeded."""
    state = torch.load(path, weights_only=False)
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    cuda = state.get("cuda")
    if cuda is not None and torch.cuda.is_available():
        devices = min(len(cuda), torch.cuda.device_count())
        for index in range(devices):
            torch.cuda.set_rng_state(cuda[index], index)
