"""What each GPU-check stage is expected to hold in memory, and the time each may take: small pure
functions, so the README's arithmetic, the check's decisions and the tests are the same numbers.

Memory (full fine-tune, bf16 weights with fp32 masters, engines/master_weights.py): per trained
parameter 2 B (bf16 weight) + 4 B (fp32 master) + 8 B (AdamW's two fp32 moments) = 14 B held
between steps, + 4 B (the fp32 gradient on the master) from the first backward to the step = 18 B.
AdamW is fused on CUDA (engines/optimizer.py), so its step adds no parameter-sized temporary.
Activations per token and the fixed part are the CPU bench's (trainer/README.md, "Memory per
GPU", run of 2026-12-04: rows of 1,024 tokens with a 256-token image, 40 % of tokens trained);
with checkpointing, backward re-materialises one decoder layer at a time, which the bench's
per-token figure leaves out, so one layer's worth (0.124 MiB per token for 3B) is added.
The estimate adds the gradients to the whole activation footprint although backward frees
activations as it writes gradients: an upper bound, by a few GiB.
"""
from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30
MIB = 2**20

BF16_WEIGHT_B = 2
FP32_MASTER_B = 4
ADAMW_MOMENTS_B = 8
FP32_GRADIENT_B = 4
HELD_B_PER_PARAM = BF16_WEIGHT_B + FP32_MASTER_B + ADAMW_MOMENTS_B  # 14: between steps
STEP_B_PER_PARAM = HELD_B_PER_PARAM + FP32_GRADIENT_B  # 18: from the first backward to the step


@dataclass(frozen=True)
class Activations:
    """Measured activation memory of one size (trainer/README.md): MiB per token and fixed MiB,
    checkpointing off and on, and one decoder layer's MiB per token (re-materialised under
    checkpointing)."""

    per_token_mib: dict[bool, float]
    fixed_mib: dict[bool, float]
    layer_per_token_mib: float

    def bytes(self, tokens: int, checkpointing: bool) -> float:
        recompute = self.layer_per_token_mib * tokens if checkpointing else 0.0
        return (self.per_token_mib[checkpointing] * tokens + self.fixed_mib[checkpointing] + recompute) * MIB


ACTIVATIONS = {
    "qwen2.5-vl-3b": Activations({False: 6.49, True: 0.274}, {False: 638.0, True: 600.0}, 0.124),
    "qwen2.5-vl-7b": Activations({False: 8.05, True: 0.527}, {False: 638.0, True: 354.0}, 0.215),
}

# What torch cannot hand out on an otherwise empty GPU: the CUDA context and cuBLAS/cuDNN
# workspaces (~0.5-1 GiB), plus room for the caching allocator's fragmentation.
RESERVE_GIB = 3.0


def usable_bytes(total_bytes: int, reserve_gib: float = RESERVE_GIB) -> float:
    """What a stage may plan to hold on a GPU of `total_bytes` (torch's total_memory)."""
    return total_bytes - reserve_gib * GIB


def full_finetune_step_bytes(parameters: int, size_name: str, tokens: int, checkpointing: bool) -> float | None:
    """Upper estimate of one full fine-tune micro-batch's peak (state, fp32 gradients, activations);
    None for a size without measured activations (the dry run's tiny model)."""
    activations = ACTIVATIONS.get(size_name)
    if activations is None:
        return None
    return parameters * STEP_B_PER_PARAM + activations.bytes(tokens, checkpointing)


def precision_stage_bytes(parameters: int, size_name: str, tokens: int) -> float | None:
    """The precision stage's fp32-master half: a full fine-tune step with checkpointing (its copy
    of the weights before the step is kept in host memory, not on the GPU)."""
    return full_finetune_step_bytes(parameters, size_name, tokens, checkpointing=True)


def fits(estimate: float | None, usable: float | None) -> tuple[bool, str]:
    """Whether a stage or point estimated at `estimate` bytes runs, and why not."""
    if estimate is None or usable is None:
        return True, ""
    if estimate <= usable:
        return True, ""
    return False, f"estimated {estimate / GIB:.1f} GiB > {usable / GIB:.1f} GiB usable on this GPU"


# ---- time ------------------------------------------------------------------------------------

WALL_S = 360.0  # the whole command, start-up included (issue 39: one H100, at most 6 minutes)
FINALIZE_S = 12.0  # what check.sh keeps for writing summary.json after check.py


@dataclass(frozen=True)
class StageBudget:
    """`needs_s`: the stage starts only with this much of the wall budget left (else it is recorded
    "skipped: budget"); `cap_s`: the most it may take (subprocesses are stopped there, sweeps stop
    adding points)."""

    needs_s: float
    cap_s: float


STAGE_BUDGETS: dict[str, StageBudget] = {
    "environment": StageBudget(5, 20),
    "qwen-tokenizer": StageBudget(20, 60),
    "forward": StageBudget(30, 60),
    "generate": StageBudget(20, 45),
    "memory": StageBudget(30, 75),
    "demo": StageBudget(50, 100),
    "resume": StageBudget(25, 50),
    "precision": StageBudget(20, 40),
    "lora": StageBudget(15, 35),
    "release": StageBudget(0, 10),
}
