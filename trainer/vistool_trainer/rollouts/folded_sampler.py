"""The transformers sampler with the LoRA adapters folded into the weights while it samples
(`rl.fold_lora_for_sampling`; model/folded_adapters.py says why and what it costs).

It samples exactly as the policy's own sampler does (the same encoder, sampling fields and
suppressed tokens) from the folded model, and the trained model is given back bit for bit after
every call, before the trainer scores what was sampled.
"""
from __future__ import annotations

from typing import Any

from ..model.folded_adapters import adapters_folded
from ..model.merged_weights import FoldingLoss
from ..model.policy import Policy, SampledTurn


class FoldedAdapterSampler:
    def __init__(self, policy: Policy):
        if not policy.has_adapters:
            raise ValueError("rl.fold_lora_for_sampling needs a LoRA policy (policy.lora.enabled: true): "
                             "a full model has no adapters to fold")
        self.policy = policy
        # The share of the adapters' update the fold's dtype rounded away, from the newest call.
        self.lora_delta_lost: float | None = None
        self.folded_layers = 0

    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float,
                     greedy: bool) -> list[SampledTurn]:
        loss = FoldingLoss(self.policy.model.get_base_model().dtype)
        with adapters_folded(self.policy.model, loss) as folded:
            turns = self.policy.sample_turns(conversations, max_new_tokens, temperature, greedy)
        self.folded_layers = folded
        self.lora_delta_lost = loss.share_lost()
        return turns

    def close(self) -> None:
        """Nothing runs beside the trainer: the folded copies live only inside a call."""
