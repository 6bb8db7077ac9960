"""veRL's platform interface for a machine with no accelerator: `VERL_PLATFORM=cpu`.

veRL 0.9.1 ships CUDA, NPU and ROCm platforms only. This one lets its trainer run on CPU for the
end-to-end test (docs/VERL.md, "veRL's trainer on CPU"). Two things are deliberately untrue:
- Ray's resource is still called "GPU": veRL's placement groups ask for GPUs by that name, so the
  launcher gives Ray a fake GPU count (`+ray_kwargs.ray_init.num_gpus=N`) and each worker's
  "device" is the CPU.
- The collective backend is gloo, the only one torch.distributed has on CPU.
It must never be selected on a machine with GPUs: nothing here touches CUDA.
"""
from __future__ import annotations

from contextlib import contextmanager
from types import ModuleType, SimpleNamespace
from typing import Any, Optional

import torch
from verl.plugin.platform import PlatformBase, PlatformRegistry

PLATFORM_NAME = "cpu"


def _cpu_device_module() -> ModuleType:
    """`torch.cpu` plus the memory and RNG calls veRL makes on `get_torch_device()`: the CPU
    allocator has no cache to empty and no per-device statistics, so those are no-ops or zeros."""
    module = SimpleNamespace(**{name: getattr(torch.cpu, name) for name in dir(torch.cpu) if not name.startswith("_")})
    module.empty_cache = lambda: None
    module.ipc_collect = lambda: None
    module.set_per_process_memory_fraction = lambda *args, **kwargs: None
    module.memory_allocated = lambda *args, **kwargs: 0
    module.memory_reserved = lambda *args, **kwargs: 0
    module.max_memory_allocated = lambda *args, **kwargs: 0
    module.max_memory_reserved = lambda *args, **kwargs: 0
    module.reset_peak_memory_stats = lambda *args, **kwargs: None
    module.mem_get_info = lambda *args, **kwargs: (0, 0)
    module.get_device_name = lambda *args, **kwargs: "CPU"
    module.get_rng_state = lambda *args, **kwargs: torch.get_rng_state()
    module.set_rng_state = lambda state, *args, **kwargs: torch.set_rng_state(state)
    module.manual_seed = lambda seed: torch.manual_seed(seed)
    module.manual_seed_all = lambda seed: torch.manual_seed(seed)
    module.is_available = lambda: True
    module.current_device = lambda: "cpu"
    return module  # type: ignore[return-value]


@PlatformRegistry.register(platform=PLATFORM_NAME)
class PlatformCPU(PlatformBase):
    _module = _cpu_device_module()

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return self._module

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        # Never auto-detected: only VERL_PLATFORM=cpu selects it.
        return False

    def current_device(self) -> Any:
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: Optional[int] = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[Optional[int], Optional[int]]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        # Ray sets it for its fake GPUs; CPU torch ignores it.
        return "CUDA_VISIBLE_DEVICES"

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def cudart(self) -> Any:
        return None
