"""The training engine a run config's `distributed` section asks for. It lives apart from the
engines so that the replicated base (training_engine.py) never has to know the sharded engines
built on it."""
from __future__ import annotations

from ..config import DistributedConfig
from ..model.policy import Policy
from .distributed import Distributed
from .fully_sharded import FullyShardedTraining
from .training_engine import TrainingEngine
from .zero3 import DeepSpeedZero3Training

STRATEGIES = ("ddp", "fsdp", "zero3")


def make_training_engine(policy: Policy, distributed: DistributedConfig, dist: Distributed = Distributed()) -> TrainingEngine:
    """The engine the run config's `distributed.strategy` names. One process always trains
    replicated: there is nothing to shard across."""
    strategy = distributed.strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"distributed.strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    if strategy == "ddp" or not dist.enabled:
        return TrainingEngine(policy, dist)
    if distributed.cpu_offload and policy.device.type != "cuda":
        raise ValueError("distributed.cpu_offload moves sharded state from GPU to CPU memory; this run is on "
                         f"{policy.device.type} already: set it false (or run on cuda)")
    if strategy == "fsdp":
        return FullyShardedTraining(policy, dist, cpu_offload=distributed.cpu_offload,
                                    reshard_after_forward=distributed.reshard_after_forward)
    return DeepSpeedZero3Training(policy, dist, cpu_offload=distributed.cpu_offload)
