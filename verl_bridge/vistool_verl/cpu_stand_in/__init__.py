"""veRL 0.9.1's own trainer (`python -m verl.trainer.main_ppo`) on a CPU-only machine, for testing.

FOR TESTS ONLY. It lets `make verl-e2e` run veRL's real trainer (Ray, TransferQueue, the FSDP2
actor, the agent-loop workers, the reward loop) with vistool's agent loop on this project's CPU
machines. Its rollout engine is a stand-in: transformers' `generate` behind veRL's rollout-replica
interface, where a real run uses vLLM or SGLang on GPUs. Nothing trained here says anything about
speed, and a result from it is a test result, not a training result.

veRL imports this module in every one of its processes when `VERL_USE_EXTERNAL_MODULES` names it
(verl/__init__.py); it acts only when `VERL_PLATFORM=cpu` as well. Then it:
- registers the CPU platform (`platform.py`);
- registers rollout `name=hf`: the replica for the trainer's server manager
  (`RolloutReplicaRegistry`, public) and the adapter inside the training worker (veRL's private
  `_ROLLOUT_REGISTRY`) (`transformers_replica.py`);
- gives torch.distributed plain gloo (`process_group.py`);
- loads the Qwen2.5-VL processor without torchvision (`processor_without_torchvision.py`).
The e2e's record of what the trainer trained (`trained_batches.py`) comes in with its sampler
(`recording_sampler.py`, the run's `trainer.v1.sampler.custom_sampler`), once the trainer is loaded.
The launch settings that go with it (fake Ray GPUs, `VERL_ENGINE_DEVICE=cuda` so veRL's FSDP
engine, registered for cuda and npu only, is chosen; sdpa attention; fp32) are in
`vistool_verl.e2e.launch` and docs/VERL.md says why each is needed.
"""
from __future__ import annotations

import os

MODULE = __name__
ENABLED = os.environ.get("VERL_PLATFORM", "").strip().lower() == "cpu"

if ENABLED:
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    from .. import verl_internals

    verl_internals.check("cpu_stand_in")

    from . import platform as _platform  # noqa: F401 (registers the platform)
    from . import process_group, processor_without_torchvision
    from .transformers_replica import ROLLOUT_NAME, TransformersReplica

    RolloutReplicaRegistry.register(ROLLOUT_NAME, lambda: TransformersReplica)
    verl_internals.rollout_registry()[(ROLLOUT_NAME, "async")] = "vistool_verl.cpu_stand_in.transformers_replica.TransformersServerAdapter"
    process_group.install()
    processor_without_torchvision.install()
