"""Where the gradients of a multi-process run live: replicated on every rank (DDP semantics), or
sharded across ranks (FSDP2 full shard, DeepSpeed ZeRO-3).

The policy's own `model` is always a complete copy on each rank: it samples the rollouts, is
what a checkpoint saves and what the KL reference is copied from. A sharded engine trains its own
sharded copy and writes the new weights into the policy's model after every optimizer step
(`sync_rollout_weights`) — the same hand-over a colocated inference engine gets, so rollouts run
on each rank independently while parameters, gradients and optimizer state are split.

Every method with a collective inside is called by every rank in the same order. A sharded
engine gathers parameters in each forward and reduces gradients in each backward, so all ranks
must run the same number of micro-batches (`matched_micro_batches`); callers pad with
zero-weight ones.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..model.policy import Policy, score_tokens
from .distributed import Distributed
from .master_weights import MasterWeights
from .optimizer import DEFAULT_BETAS, adamw

ScoreResult = tuple[torch.Tensor, torch.Tensor, "torch.Tensor | None"]


class TokenScorer(torch.nn.Module):
    """A module whose forward is the trainer's token scoring (backbone, then the LM head on loss
    positions only). Sharding libraries hook a module's forward: they gather the parameters and
    count micro-steps around this one, which the scoring's direct calls into submodules bypass."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.policy_model = model

    def forward(self, inputs: dict[str, torch.Tensor], with_entropy: bool = False, temperature: float = 1.0,
                suppressed_token_ids: tuple[int, ...] = ()) -> ScoreResult:
        return score_tokens(self.policy_model, inputs, with_entropy, temperature, suppressed_token_ids)


class TrainingEngine:
    """Replicated (the default): every rank holds the whole model, gradients are summed in one flat
    all-reduce before identical optimizer steps (distributed.py). A half-precision policy trains
    fp32 master weights (master_weights.py) and computes in its own dtype; `master_weights=False`
    steps the half-precision weights themselves (only to measure what that loses)."""

    strategy = "ddp"
    matched_micro_batches = False
    # The marker its optimizer.pt carries (the replicated engine writes the optimizer's own state dict, unmarked).
    optimizer_format = "ddp"
    # Whether the optimizer steps fp32 copies of half-precision weights (FSDP's mixed precision,
    # DeepSpeed's bf16 optimizer, master_weights.py here).
    fp32_master_weights = False

    def __init__(self, policy: Policy, dist: Distributed = Distributed(), master_weights: bool = True):
        self.policy = policy
        self.dist = dist
        self.masters: MasterWeights | None = None
        if master_weights and type(self) is TrainingEngine:
            masters = MasterWeights(policy.model)
            if masters:
                self.masters = masters
                self.fp32_master_weights = True

    @property
    def module(self) -> torch.nn.Module:
        """The module whose parameters the optimizer updates."""
        return self.policy.model

    def make_optimizer(self, lr: float, weight_decay: float, max_grad_norm: float,
                       betas: Sequence[float] = DEFAULT_BETAS) -> torch.optim.Optimizer:
        """A fresh AdamW for a stage (SFT and RL each get one); `max_grad_norm` is for engines that clip inside.
        Fused on CUDA: torch's CUDA default (foreach) allocates a copy of every parameter's second
        moment during step() (engines/optimizer.py)."""
        return adamw(self.trained_tensors(), lr=lr, weight_decay=weight_decay, betas=betas)

    def trained_tensors(self) -> list[torch.Tensor]:
        """What the optimizer steps: the fp32 masters of half-precision parameters, and the
        trainable parameters already in fp32 (LoRA adapters) as they are."""
        if self.masters is None:
            return [p for p in self.module.parameters() if p.requires_grad]
        mastered = {id(p) for p in self.masters.params}
        return list(self.masters.masters) + [p for p in self.module.parameters() if p.requires_grad and id(p) not in mastered]

    def train_mode(self, dropout: bool = True) -> None:
        """Train mode (layers checkpoint only in it). `dropout=False` keeps every dropout layer
        in eval mode: RL scores with the model that sampled, which ran without dropout."""
        self.module.train()
        if not dropout:
            disable_dropout(self.module)

    def score(self, inputs: dict[str, torch.Tensor], with_entropy: bool = False, temperature: float = 1.0,
              suppressed_token_ids: tuple[int, ...] = ()) -> ScoreResult:
        return score_tokens(self.module, inputs, with_entropy, temperature, suppressed_token_ids)

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def zero_grad(self, optimizer: torch.optim.Optimizer) -> None:
        optimizer.zero_grad(set_to_none=True)

    def step(self, optimizer: torch.optim.Optimizer, max_grad_norm: float) -> float:
        """Reduce gradients across ranks, clip to `max_grad_norm` (the global norm), step; the norm before clipping.

        A non-finite norm (one inf or NaN gradient anywhere) skips the step, as veRL's actor does:
        the gradients are dropped and the weights, the fp32 masters and AdamW's moments are left as
        they were. Stepping would make every weight the NaN touches NaN for good (AdamW's second
        moment keeps it) and the next weight push would hand it to the rollout engine. The norm is
        global (after the all-reduce), so every rank skips the same steps. `skipped_steps` counts them."""
        trained = self.trained_tensors()
        self.dist.sum_tensor_gradients(trained)
        grad_norm = float(torch.nn.utils.clip_grad_norm_(trained, max_grad_norm))
        if not math.isfinite(grad_norm):
            self.skip_step(optimizer)
            return grad_norm
        optimizer.step()
        if self.masters is not None:
            self.masters.write_to_model()
        self.sync_rollout_weights()
        return grad_norm

    skipped_steps = 0

    def skip_step(self, optimizer: torch.optim.Optimizer) -> None:
        """Drop this step's gradients without stepping (the weights stay what the rollout engine holds)."""
        self.zero_grad(optimizer)
        for parameter in self.module.parameters():
            parameter.grad = None
        self.skipped_steps += 1

    def sync_rollout_weights(self) -> None:
        """Make the policy's model (the one that samples) hold the trained weights; here it is the trained model."""

    def save_master_weights(self, directory: Path) -> None:
        """The fp32 masters into a checkpoint folder (collective: every rank calls it): the
        policy/ folder holds the model's half-precision rounding of them, which would not resume
        the same run."""
        if self.masters is not None and self.dist.is_main:
            self.masters.save(directory)

    def load_master_weights(self, directory: Path) -> bool:
        """The masters a checkpoint saved (then rounded into the model); False when it has none
        (an fp32 run, or a checkpoint written before masters were saved)."""
        return self.masters.load(directory) if self.masters is not None else False

    def save_optimizer(self, optimizer: torch.optim.Optimizer, directory: Path) -> None:
        """Write the optimizer state into a checkpoint folder (collective: every rank calls it)."""
        if self.dist.is_main:
            torch.save(optimizer.state_dict(), directory / "optimizer.pt")

    def has_optimizer(self, directory: Path) -> bool:
        return (directory / "optimizer.pt").exists()

    def load_optimizer(self, optimizer: torch.optim.Optimizer, directory: Path) -> None:
        optimizer.load_state_dict(self.read_optimizer_file(directory))

    def read_optimizer_file(self, directory: Path) -> dict[str, Any]:
        """optimizer.pt, refused when another strategy wrote it. The replicated engine writes the
        optimizer's own state dict; the others wrap theirs as {"vistool_optimizer_format": optimizer_format, ...}.
        Every rank reads the same file, so every rank raises alike."""
        saved = torch.load(directory / "optimizer.pt")
        written = (saved.get("vistool_optimizer_format") if isinstance(saved, dict) else None) or "ddp"
        if written != self.optimizer_format:
            written_by = {"fsdp-full": "fsdp"}.get(written, written)
            raise RuntimeError(f"{directory / 'optimizer.pt'} was written by the {written_by!r} strategy and this run uses "
                               f"{self.strategy!r}: resume with the strategy that wrote it (distributed.strategy)")
        return saved

    def state_tensors(self, optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
        """The tensors this rank holds for training: trained parameters (and their fp32 masters),
        their gradients, optimizer state."""
        trained = [p for p in self.module.parameters() if p.requires_grad] + (list(self.masters.masters) if self.masters else [])
        return trained + [p.grad for p in trained if p.grad is not None] + _optimizer_tensors(optimizer)

    def state_megabytes(self, optimizer: torch.optim.Optimizer) -> float:
        """MiB of training state on this rank (each storage counted once; a shard counts its local part):
        what sharding divides. The whole copy that samples rollouts is not included."""
        return storage_bytes(self.state_tensors(optimizer)) / 2**20

    def close(self) -> None:
        if self.masters is not None:
            self.masters.close()


def disable_dropout(model: torch.nn.Module) -> None:
    """Every dropout layer (LoRA's included) to eval mode, the rest untouched."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.eval()


def _optimizer_tensors(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [value for state in optimizer.state.values() for value in state.values() if torch.is_tensor(value)]


def storage_bytes(tensors: list[torch.Tensor]) -> int:
    seen: dict[int, int] = {}
    for tensor in tensors:
        local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
        storage = local.untyped_storage()
        if storage.nbytes():
            seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def half_precision_warning(engine: TrainingEngine, lr: float) -> str | None:
    """A warning when AdamW would step half-precision weights themselves at a learning rate whose
    updates they cannot represent: bf16 keeps 8 significant bits, so a weight of 0.02 moves only
    by steps of ~1e-4, and an update of lr (~1e-6) rounds to nothing."""
    dtypes = {p.dtype for p in engine.module.parameters() if p.requires_grad}
    half = dtypes & {torch.bfloat16, torch.float16}
    if engine.fp32_master_weights or not half or lr >= 1e-4:
        return None
    name = "bfloat16" if torch.bfloat16 in half else "float16"
    return (f"the optimizer steps {name} weights at lr {lr:g}: most updates are smaller than {name} can represent next to the "
            "weights and round to nothing, so the policy barely trains. Use distributed.strategy 'fsdp' or 'zero3' on several "
            "GPUs, the default replicated engine with its fp32 master weights, policy.dtype 'float32', or LoRA "
            "(policy.lora.enabled: adapters train in float32)")
