"""DeepSpeed ZeRO stage 3: parameters, gradients and optimizer state partitioned across ranks,
optionally offloaded to CPU memory. Runs on CPU ranks (DeepSpeed's CPU accelerator over gloo)
and on GPUs (NCCL). Installed apart: `pip install --no-build-isolation deepspeed` (the
`deepspeed` extra; its build imports the torch already in the environment).

DeepSpeed fetches each submodule's partitioned parameters around its forward, so the trainer's
scoring (backbone and LM head called separately) needs no special units; but it counts
micro-steps at the engine's own forward, so scoring goes through the engine (a small module whose
forward is the scoring) — otherwise a second backward before `step` overwrites the first's
gradients instead of adding to them.

DeepSpeed averages gradients across ranks; the trainer's loss is normalised by the global token
or sequence count and wants a sum, so each backward scales its loss by the world size.
"""
from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from pathlib import Path

import torch

from ..config import DistributedConfig
from ..model.policy import Policy
from .distributed import Distributed
from .training_engine import ScoreResult, TokenScorer, TrainingEngine, disable_dropout
from .optimizer import DEFAULT_BETAS, adamw

CHECKPOINT_FOLDER = "deepspeed"
CHECKPOINT_TAG = "optimizer"


def _import_deepspeed():  # type: ignore[no-untyped-def]
    try:
        import deepspeed
    except ImportError as error:
        raise RuntimeError("distributed.strategy 'zero3' needs DeepSpeed: `pip install --no-build-isolation 'deepspeed==0.19.8'` "
                           f"in the trainer's environment (or choose 'fsdp', which needs nothing more): {error}") from None
    # Its INFO lines (one per engine build and checkpoint) would crowd the trainer's log. Its stdout
    # is the CLI's concern: reserve_stdout_for_events sends library output to stderr.
    logging.getLogger("DeepSpeed").setLevel(logging.WARNING)
    return deepspeed


class DeepSpeedZero3Training(TrainingEngine):
    strategy = "zero3"
    optimizer_format = "zero3"
    matched_micro_batches = True
    fp32_master_weights = True

    def __init__(self, policy: Policy, dist: Distributed, cpu_offload: bool = DistributedConfig.cpu_offload):
        super().__init__(policy, dist)
        self.deepspeed = _import_deepspeed()
        self.cpu_offload = cpu_offload
        self.engine = None
        self._targets = dict(policy.model.named_parameters())

    @property
    def module(self) -> torch.nn.Module:
        if self.engine is None:
            return self.policy.model
        return self.engine.module.policy_model

    def make_optimizer(self, lr: float, weight_decay: float, max_grad_norm: float,
                       betas: Sequence[float] = DEFAULT_BETAS) -> torch.optim.Optimizer:
        """A DeepSpeed engine per stage, partitioned from the policy's current (whole) weights."""
        self.close()
        trained = copy.deepcopy(self.policy.model)
        optimizer = adamw([p for p in trained.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay, betas=betas)
        dtype = next(trained.parameters()).dtype
        zero: dict[str, object] = {"stage": 3}
        if self.cpu_offload:
            zero.update(offload_param={"device": "cpu", "pin_memory": True}, offload_optimizer={"device": "cpu", "pin_memory": True})
        config = {
            # One micro-batch per backward as far as DeepSpeed knows; the trainer accumulates a
            # step's micro-batches itself and calls step() once.
            "train_micro_batch_size_per_gpu": 1,
            "gradient_accumulation_steps": 1,
            "gradient_clipping": max_grad_norm,
            "zero_optimization": zero,
            "bf16": {"enabled": dtype == torch.bfloat16},
            "fp16": {"enabled": dtype == torch.float16},
            "zero_allow_untested_optimizer": True,
            "steps_per_print": 1 << 30,
            "wall_clock_breakdown": False,
        }
        self.engine, ds_optimizer, _, _ = self.deepspeed.initialize(model=TokenScorer(trained), optimizer=optimizer, config=config)
        return ds_optimizer

    def train_mode(self, dropout: bool = True) -> None:
        assert self.engine is not None, "make_optimizer() builds the DeepSpeed engine"
        self.engine.train()
        if not dropout:
            disable_dropout(self.engine.module)

    def score(self, inputs: dict[str, torch.Tensor], with_entropy: bool = False, temperature: float = 1.0,
              suppressed_token_ids: tuple[int, ...] = ()) -> ScoreResult:
        assert self.engine is not None, "make_optimizer() builds the DeepSpeed engine"
        return self.engine(inputs, with_entropy, temperature, suppressed_token_ids)

    def backward(self, loss: torch.Tensor) -> None:
        assert self.engine is not None
        self.engine.backward(loss * self.dist.world)

    def zero_grad(self, optimizer: torch.optim.Optimizer) -> None:
        assert self.engine is not None
        self.engine.zero_grad()

    def step(self, optimizer: torch.optim.Optimizer, max_grad_norm: float) -> float:
        assert self.engine is not None
        # Clips to the config's gradient_clipping (the stage's max_grad_norm). On an inf/NaN global norm
        # DeepSpeed 0.19.8 discards the step for every dtype and reports the norm as inf, so the trainer
        # counts it as skipped like the other engines (test_sharded_training.py's non-finite test).
        self.engine.step()
        self.sync_rollout_weights()
        norm = self.engine.get_global_grad_norm()
        return float(norm) if norm is not None else 0.0

    @torch.no_grad()
    def sync_rollout_weights(self) -> None:
        if self.engine is None:
            return
        parameters = dict(self.module.named_parameters())
        with self.deepspeed.zero.GatheredParameters(list(parameters.values())):
            for name, parameter in parameters.items():
                if parameter.requires_grad:
                    self._targets[name].copy_(parameter.data.to(self._targets[name].device))

    def save_optimizer(self, optimizer: torch.optim.Optimizer, directory: Path) -> None:
        """DeepSpeed's own checkpoint (each rank writes its partition): resuming needs the same number of ranks."""
        assert self.engine is not None
        self.engine.save_checkpoint(str(directory / CHECKPOINT_FOLDER), tag=CHECKPOINT_TAG, client_state={"world_size": self.dist.world})
        if self.dist.is_main:
            torch.save({"vistool_optimizer_format": self.optimizer_format, "world_size": self.dist.world,
                        "folder": CHECKPOINT_FOLDER}, directory / "optimizer.pt")

    def load_optimizer(self, optimizer: torch.optim.Optimizer, directory: Path) -> None:
        assert self.engine is not None
        marker = self.read_optimizer_file(directory)
        if marker["world_size"] != self.dist.world:
            raise RuntimeError(f"{directory} holds ZeRO-3 partitions for {marker['world_size']} processes and this run has "
                               f"{self.dist.world}: resume with {marker['world_size']} processes")
        self.engine.load_checkpoint(str(directory / CHECKPOINT_FOLDER), tag=CHECKPOINT_TAG, load_optimizer_states=True,
                                    load_lr_scheduler_states=False)
        self.sync_rollout_weights()

    def state_tensors(self, optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
        """ZeRO-3's partitions: the model-dtype and fp32 flat partitions, their gradients, the inner optimizer's state."""
        tensors: list[torch.Tensor] = []
        for name in ("fp16_partitioned_groups_flat", "fp32_partitioned_groups_flat"):
            for flat in getattr(optimizer, name, []) or []:
                tensors.append(flat)
                if flat.grad is not None:
                    tensors.append(flat.grad)
        buffer = getattr(optimizer, "grad_partitions_flat_buffer", None)
        if torch.is_tensor(buffer):
            tensors.append(buffer)
        inner = getattr(optimizer, "optimizer", None)
        return tensors + ([value for state in inner.state.values() for value in state.values() if torch.is_tensor(value)] if inner else [])

    def close(self) -> None:
        if self.engine is not None:
            self.engine.destroy()
            self.engine = None
