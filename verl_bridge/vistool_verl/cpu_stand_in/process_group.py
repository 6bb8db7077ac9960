"""torch.distributed's backend for veRL's training workers on CPU.

veRL names the backend `cpu:gloo,<device>:<collective backend>`; with the device being the CPU
that is `cpu:gloo,cpu:gloo`, which torch refuses ("Duplicate device type cpu in backend
string"). On the CPU platform the one backend is plain gloo: this wraps veRL's process-group
start in the module that calls it (the engine workers) to pass that when no backend is named.
"""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable


def gloo_by_default(start: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(start)
    def start_gloo(timeout_second: Any = None, backend: str | None = None) -> Any:
        return start(timeout_second=timeout_second, backend=backend or "gloo")
    start_gloo.vistool_gloo = True  # type: ignore[attr-defined]
    return start_gloo


def install() -> None:
    from ..verl_internals import engine_workers_module

    engine_workers = engine_workers_module()
    if not getattr(engine_workers.initialize_global_process_group_ray, "vistool_gloo", False):
        engine_workers.initialize_global_process_group_ray = gloo_by_default(engine_workers.initialize_global_process_group_ray)
