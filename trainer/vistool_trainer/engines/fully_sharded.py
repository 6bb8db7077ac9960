"""FSDP2 full shard (torch.distributed.fsdp.fully_shard): parameters, gradients and AdamW state
split across ranks, optionally kept in CPU memory (the seed paper's "FSDP full shard + CPU
offload"). Works on CPU ranks with gloo and on GPUs with NCCL.

Units: each text decoder layer and each vision block is one; the root holds the rest (the tied
embedding / LM head, norms, patch embedding, merger). The trainer scores tokens through the
backbone and the LM head separately (only loss positions reach the head), so the root is a small
module whose forward is that scoring: FSDP's hooks gather the root's parameters around it and
reduce-scatter their gradients after backward.

A half-precision policy (`policy.dtype` bfloat16/float16) trains fp32 master shards and computes
in the policy's dtype (FSDP's MixedPrecisionPolicy, gradients reduced in fp32): at RL learning
rates (1e-6) most bf16 weights would not move at all under a bf16 AdamW step. The whole copy that
samples stays in the policy's dtype.

Gradients are summed across ranks, not averaged: the loss is already normalised by the global
token or sequence count (as in the replicated engine). Gloo has no pre-multiplied sum, so every
unit is told to reduce with a plain sum and a divide factor of 1.
"""
from __future__ import annotations

import copy
import math
from pathlib import Path

import torch
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict, get_optimizer_state_dict, set_model_state_dict,
                                                     set_optimizer_state_dict)
from torch.distributed.fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard
from torch.distributed.tensor import DTensor

from ..config import DistributedConfig
from ..model.policy import Policy, unwrap_model
from .distributed import Distributed
from .master_weights import MASTER_FILE
from .training_engine import ScoreResult, TokenScorer, TrainingEngine

def shard_units(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The repeated blocks that become their own FSDP units (Qwen2.5-VL: decoder layers, vision blocks)."""
    core = unwrap_model(model)
    units: list[torch.nn.Module] = []
    language = getattr(core.model, "language_model", None)
    visual = getattr(core.model, "visual", None)
    if language is not None:
        units.extend(language.layers)
    if visual is not None:
        units.extend(visual.blocks)
    if not units:
        raise RuntimeError(f"distributed.strategy 'fsdp' found no decoder layers or vision blocks in {type(core).__name__}")
    return units


class FullyShardedTraining(TrainingEngine):
    strategy = "fsdp"
    optimizer_format = "fsdp-full"  # gathered whole, keyed by parameter name
    matched_micro_batches = True
    fp32_master_weights = True

    def __init__(self, policy: Policy, dist: Distributed, cpu_offload: bool = DistributedConfig.cpu_offload,
                 reshard_after_forward: bool = DistributedConfig.reshard_after_forward):
        super().__init__(policy, dist)
        offload: OffloadPolicy = CPUOffloadPolicy() if cpu_offload else OffloadPolicy()
        # A copy to shard: the policy's model stays whole on every rank and samples the rollouts.
        self.trained = copy.deepcopy(policy.model)
        compute_dtype = next(policy.model.parameters()).dtype
        precision = MixedPrecisionPolicy()
        self._half_precision = compute_dtype in (torch.bfloat16, torch.float16)
        if self._half_precision:
            self.trained.float()
            precision = MixedPrecisionPolicy(param_dtype=compute_dtype, reduce_dtype=torch.float32)
        for unit in shard_units(self.trained):
            fully_shard(unit, reshard_after_forward=reshard_after_forward, offload_policy=offload, mp_policy=precision)
        self.scorer = TokenScorer(self.trained)
        # The root's parameters (embeddings, LM head) are needed again at once by backward: keep them gathered.
        fully_shard(self.scorer, reshard_after_forward=False, offload_policy=offload, mp_policy=precision)
        for unit in self.scorer.modules():
            if isinstance(unit, FSDPModule):
                unit.set_force_sum_reduction_for_comms(True)
                unit.set_gradient_divide_factor(1.0)
        self._targets = dict(policy.model.named_parameters())

    @property
    def module(self) -> torch.nn.Module:
        return self.trained

    def score(self, inputs: dict[str, torch.Tensor], with_entropy: bool = False, temperature: float = 1.0,
              suppressed_token_ids: tuple[int, ...] = ()) -> ScoreResult:
        return self.scorer(inputs, with_entropy, temperature, suppressed_token_ids)

    def step(self, optimizer: torch.optim.Optimizer, max_grad_norm: float) -> float:
        parameters = [p for p in self.trained.parameters() if p.requires_grad]
        grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)  # the global norm over every shard
        norm = float(grad_norm.full_tensor() if isinstance(grad_norm, DTensor) else grad_norm)
        if not math.isfinite(norm):  # the same global value on every rank: all skip (TrainingEngine.step)
            self.skip_step(optimizer)
            return norm
        optimizer.step()
        self.sync_rollout_weights()
        return norm

    @torch.no_grad()
    def sync_rollout_weights(self) -> None:
        """All-gather each trained parameter into the policy's whole model (the names match: it is a copy)."""
        for name, parameter in self.trained.named_parameters():
            if not parameter.requires_grad:
                continue
            if isinstance(parameter, DTensor):
                if parameter.device.type != parameter.device_mesh.device_type:  # a CPU-offloaded shard
                    parameter = parameter.to(parameter.device_mesh.device_type)
                full = parameter.full_tensor()
            else:
                full = parameter
            self._targets[name].copy_(full.to(self._targets[name].device))

    def save_master_weights(self, directory: Path) -> None:
        """With a half-precision policy, the fp32 master shards gathered whole to rank 0 and saved
        by parameter name (the policy/ folder holds only their bf16 rounding): resuming puts
        them back on any number of ranks."""
        if not self._half_precision:
            return
        from safetensors.torch import save_file

        state = get_model_state_dict(self.trained, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if self.dist.is_main:
            save_file({name: tensor.contiguous() for name, tensor in state.items()}, str(directory / MASTER_FILE))

    def load_master_weights(self, directory: Path) -> bool:
        path = directory / MASTER_FILE
        # Every rank sees the same checkpoint folder, so every rank takes the same branch.
        if not self._half_precision or not path.exists():
            return False
        from safetensors.torch import load_file

        state = load_file(str(path)) if self.dist.is_main else {}
        set_model_state_dict(self.trained, state, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
        self.sync_rollout_weights()
        return True

    def save_optimizer(self, optimizer: torch.optim.Optimizer, directory: Path) -> None:
        """The whole optimizer state keyed by parameter name, gathered to rank 0: a checkpoint
        resumes on any number of ranks."""
        state = get_optimizer_state_dict(self.trained, optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if self.dist.is_main:
            torch.save({"vistool_optimizer_format": self.optimizer_format, "state": state}, directory / "optimizer.pt")

    def load_optimizer(self, optimizer: torch.optim.Optimizer, directory: Path) -> None:
        saved = self.read_optimizer_file(directory)
        set_optimizer_state_dict(self.trained, optimizer, saved["state"] if self.dist.is_main else {},
                                 options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
