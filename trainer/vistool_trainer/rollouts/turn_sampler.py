"""What the rollout loop asks of whatever writes the policy's turns: given each conversation so
far, the next assistant turn (its exact token ids, its text, whether max_new_tokens cut it).

Two implementations: the Policy itself (transformers `generate` on the trained model) and
VllmSampler (vllm_sampler.py: a vLLM engine in the same process, holding a copy of the weights
that the trainer pushes after every update). `rl.rollout_engine` picks one; the rollout loop
never knows which. Neither parses what the model wrote. A sampler with limits of its own (vLLM's
max_model_len and images per prompt) also has `refusal(messages, max_new_tokens)`: the reason it
cannot continue a conversation, or None; the rollout loop ends such an episode.
"""
from __future__ import annotations

from typing import Any, Protocol

from ..model.policy import SampledTurn


class TurnSampler(Protocol):
    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float,
                     greedy: bool) -> list[SampledTurn]:
        """One turn per conversation, in order. The conversations are the prompts the env
        server presented (images as loaded parts; its presentation already applied the image view);
        the sampler encodes them with the policy's encoder, so what it conditions on is exactly
        what the trainer scores."""
        ...
