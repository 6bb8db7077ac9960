"""How to start veRL's trainer on the CPU stand-in: the environment and the Hydra overrides.

Each setting answers one thing veRL 0.9.1 needs that a CPU machine lacks (docs/VERL.md, "veRL's
trainer on CPU", says what broke without it):
- `VERL_USE_EXTERNAL_MODULES=vistool_verl.cpu_stand_in` + `VERL_PLATFORM=cpu`: the plugin and its
  platform, in every Ray process veRL starts (they inherit the environment).
- `VERL_ENGINE_DEVICE=cuda`: veRL registers its FSDP engine for cuda and npu only; the engine then
  runs on whatever the platform's device is (the CPU).
- `+ray_kwargs.ray_init.num_gpus`: veRL's placement groups ask Ray for GPUs; the CPU platform names
  its resource "GPU", so Ray is told it has that many.
- `ray_kwargs.ray_init.num_cpus=16` and two TransferQueue storage units: TransferQueue starts its
  storage actors at one CPU each and waits forever when Ray has fewer CPUs than actors.
- `strategy=fsdp2`: FSDP1 touches the accelerator; `attn_implementation=sdpa`: flash-attention
  needs CUDA; `use_remove_padding=false`: the packed path calls flash-attention's varlen kernels.
- `mixed_precision.param_dtype=fp32`: the engine computes in this dtype (default bf16), not in
  `fsdp_config.dtype`; the stand-in rollout computes in fp32, so both sides must.
- rollout `name=hf`, tensor parallel 1, one agent-loop worker, one reward worker, no dataloader
  workers: two cores.
"""
from __future__ import annotations

import os
from typing import Mapping

from . import MODULE

ROLLOUT = "hf"


def environment(base: Mapping[str, str], threads: int = 1) -> dict[str, str]:
    env = dict(base)
    env.update({
        "VERL_USE_EXTERNAL_MODULES": MODULE,
        "VERL_PLATFORM": "cpu",
        "VERL_ENGINE_DEVICE": "cuda",
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "VISTOOL_ROLLOUT_THREADS": str(threads),
        "TOKENIZERS_PARALLELISM": "false",
        "RAY_DEDUP_LOGS": "0",
        "HYDRA_FULL_ERROR": "1",
    })
    # Ray's own dashboard and usage reporting have nothing to do on a test machine.
    env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    env.setdefault("RAY_DISABLE_DOCKER_CPU_WARNING", "1")
    return env


def overrides(gpus: int = 1) -> list[str]:
    """The Hydra overrides that put veRL's trainer on the CPU stand-in (the run's own settings come on top)."""
    return [
        f"+ray_kwargs.ray_init.num_gpus={gpus}",
        "ray_kwargs.ray_init.num_cpus=16",
        "+ray_kwargs.ray_init.include_dashboard=false",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=2",
        f"trainer.n_gpus_per_node={gpus}",
        "trainer.nnodes=1",
        "trainer.device=cpu",
        "actor_rollout_ref.actor.strategy=fsdp2",
        "actor_rollout_ref.ref.strategy=fsdp2",
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        "actor_rollout_ref.model.use_remove_padding=false",
        "+actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype=fp32",
        "actor_rollout_ref.actor.fsdp_config.dtype=float32",
        "+actor_rollout_ref.ref.fsdp_config.mixed_precision.param_dtype=fp32",
        "actor_rollout_ref.ref.fsdp_config.dtype=float32",
        f"actor_rollout_ref.rollout.name={ROLLOUT}",
        "actor_rollout_ref.rollout.mode=async",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.dtype=float32",
        "actor_rollout_ref.rollout.calculate_log_probs=true",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "reward.num_workers=1",
        "data.dataloader_num_workers=0",
    ]


def is_cpu_stand_in(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get("VERL_PLATFORM", "").strip().lower() == "cpu" and MODULE in env.get("VERL_USE_EXTERNAL_MODULES", "")
