"""The policy a checkpoint holds, loaded to go on training (a resume) or to compare with (the KL
reference a resumed RL stage reads back)."""
from __future__ import annotations

from pathlib import Path

from ..config import RunConfig
from ..model.policy import Policy, gradient_checkpointing_wanted
from .run_directory import RunDirectory

BASE_POLICY = "base-policy"  # a LoRA run's frozen micro base, saved once (a hub model is its own base)


def load_checkpoint_policy(config: RunConfig, run: RunDirectory, checkpoint: Path) -> Policy:
    """The policy to continue training from a checkpoint. A LoRA run goes on with its adapters on
    the untouched base (the run's saved base for the micro model, else policy.model); the merged
    weights in policy/ are for evaluation and serving."""
    device, dtype = config.device, config.policy.dtype
    if not config.policy.lora.enabled:
        policy = Policy.load(checkpoint / "policy", device, dtype)
    else:
        if not (checkpoint / "adapter").is_dir():
            raise RuntimeError(f"{checkpoint} has no adapter/ folder: it was not written by a LoRA run (or predates LoRA resume); "
                               "resume with policy.lora.enabled false, or start a new run")
        base = run.root / BASE_POLICY if config.policy.model == "micro" else config.policy.model
        policy = Policy.load_with_adapter(base, checkpoint / "adapter", checkpoint / "policy", device, dtype)
    policy.set_gradient_checkpointing(gradient_checkpointing_wanted(config.policy))
    return policy
