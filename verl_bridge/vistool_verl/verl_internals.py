"""Every veRL name the bridge relies on that veRL does not promise to keep: private tables, private
methods of AgentLoopBase, the continuous-token helpers (renamed between 0.9.0 and 0.9.1), and the
module attributes the CPU stand-in wraps. The bridge reaches them only through this module. The agent loop
checks its group when it is imported (veRL's worker imports it before it makes the first loop) and
the CPU stand-in checks its own when it installs, so a veRL without one of them stops the run at
start-up with the names that are missing and the fix, not with an AttributeError mid-rollout.

The bridge is written against veRL 0.9.1 (verl_bridge/pyproject.toml pins it).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

PINNED_VERL = "0.9.1"


@dataclass(frozen=True)
class Internal:
    module: str
    name: str
    #: "dict", "tuple", "callable" (a function or class), or "method:CLASS" (a method of that class in module).
    kind: str
    used_by: str
    #: Who checks it at start-up: "agent_loop", "sampler", "cpu_stand_in" or "e2e_recorder" (the e2e's sampler).
    group: str = "agent_loop"


INTERNALS: tuple[Internal, ...] = (
    Internal("verl.experimental.agent_loop.agent_loop", "_agent_loop_registry", "dict",
             "agent_loop.register_keeping_the_recipe (keeps agent_loop.yaml's keys in veRL's loop registry)"),
    Internal("verl.experimental.agent_loop.agent_loop", "ct_build_initial_tokens", "method:AgentLoopBase", "agent_loop (the prompt's tokens)"),
    Internal("verl.experimental.agent_loop.agent_loop", "ct_merge_assistant_token", "method:AgentLoopBase", "agent_loop (a turn's tokens)"),
    Internal("verl.experimental.agent_loop.agent_loop", "ct_merge_context_msg", "method:AgentLoopBase", "agent_loop (an observation's tokens)"),
    Internal("verl.experimental.agent_loop.agent_loop", "_get_mm_processor_kwargs", "method:AgentLoopBase",
             "agent_loop (the image size limits sent to the rollout server)"),
    Internal("verl.experimental.agent_loop.agent_loop", "_assert_mm_supported", "method:AgentLoopBase",
             "agent_loop (refuses images without a multimodal token builder)"),
    Internal("verl.experimental.agent_loop.tool_agent_loop", "SPEC_DECODE_EXTRA_KEYS", "tuple",
             "agent_loop.merge_generation_fields (speculative-decoding counters summed over turns, as ToolAgentLoop sums them)"),
    Internal("verl.trainer.ppo.v1.replay_buffer", "_terminal_eviction_reasons", "method:ReplayBuffer",
             "failed_groups.VistoolReplayBuffer (which failed groups are evicted)", "sampler"),
    Internal("verl.trainer.ppo.v1.replay_buffer", "_evict_terminal_groups", "method:ReplayBuffer",
             "failed_groups.VistoolReplayBuffer (the failed episodes and groups counted per step)", "sampler"),
    Internal("verl.trainer.ppo.v1.trainer_base", "upsample_batch_to_divisible_size", "callable",
             "cpu_stand_in.trained_batches (the e2e's record of every row veRL trained, padding included)", "e2e_recorder"),
    Internal("verl.workers.rollout.base", "_ROLLOUT_REGISTRY", "dict", "cpu_stand_in (the transformers rollout adapter)", "cpu_stand_in"),
    Internal("verl.workers.config.model", "hf_processor", "callable", "cpu_stand_in.processor_without_torchvision", "cpu_stand_in"),
    Internal("verl.workers.engine_workers", "initialize_global_process_group_ray", "callable", "cpu_stand_in.process_group", "cpu_stand_in"),
)


class VerlInternalsError(ImportError):
    """The installed veRL lacks a name the bridge relies on."""


def _missing(internal: Internal) -> str | None:
    try:
        module = importlib.import_module(internal.module)
    except ImportError as error:
        return f"{internal.module} does not import ({error})"
    if internal.kind.startswith("method:"):
        owner_name = internal.kind.split(":", 1)[1]
        owner = getattr(module, owner_name, None)
        if owner is None:
            return f"{internal.module}.{owner_name} is gone"
        return None if callable(getattr(owner, internal.name, None)) else f"{internal.module}.{owner_name}.{internal.name} is gone"
    value = getattr(module, internal.name, None)
    if internal.kind in ("dict", "tuple"):
        wanted = dict if internal.kind == "dict" else tuple
        return None if isinstance(value, wanted) else f"{internal.module}.{internal.name} is {'gone' if value is None else 'not a ' + internal.kind}"
    return None if callable(value) else f"{internal.module}.{internal.name} is gone"


def problems(group: str | None = None, internals: tuple[Internal, ...] = INTERNALS) -> list[str]:
    """One line per name of `group` (None: every group) that the installed veRL lacks, with what uses it."""
    return [f"{found} (used by {internal.used_by})" for internal in internals
            if (group is None or internal.group == group) and (found := _missing(internal)) is not None]


def check(group: str | None = None, internals: tuple[Internal, ...] = INTERNALS) -> None:
    """Raises VerlInternalsError naming every missing name, the installed veRL and the one it needs."""
    found = problems(group, internals)
    if not found:
        return
    try:
        import verl

        installed = getattr(verl, "__version__", "unknown")
    except ImportError:
        installed = "not installed"
    raise VerlInternalsError(
        f"vistool's veRL bridge needs veRL {PINNED_VERL}, and the installed veRL ({installed}) lacks what the bridge uses:\n  "
        + "\n  ".join(found)
        + f"\nInstall veRL {PINNED_VERL} (`make verl-env`, or pip install 'verl=={PINNED_VERL}' with verl_bridge/pyproject.toml's pins).")


def _module(name: str) -> Any:
    return importlib.import_module(name)


def agent_loop_registry() -> dict[str, Any]:
    """veRL's agent-loop registry (name → the loop's config)."""
    return _module("verl.experimental.agent_loop.agent_loop")._agent_loop_registry


def spec_decode_extra_keys() -> tuple[str, ...]:
    """The rollout server's speculative-decoding counters, which veRL's ToolAgentLoop sums over an episode's turns."""
    return tuple(_module("verl.experimental.agent_loop.tool_agent_loop").SPEC_DECODE_EXTRA_KEYS)


def rollout_registry() -> dict[tuple[str, str], str]:
    """veRL's table of rollout adapters inside the training workers ((name, mode) → class path)."""
    return _module("verl.workers.rollout.base")._ROLLOUT_REGISTRY


def model_config_module() -> Any:
    """verl.workers.config.model, whose `hf_processor` builds every worker's processor."""
    return _module("verl.workers.config.model")


def engine_workers_module() -> Any:
    """verl.workers.engine_workers, whose `initialize_global_process_group_ray` starts each worker's process group."""
    return _module("verl.workers.engine_workers")


def trainer_base_module() -> Any:
    """verl.trainer.ppo.v1.trainer_base, which pads each step's batch with `upsample_batch_to_divisible_size`."""
    return _module("verl.trainer.ppo.v1.trainer_base")
