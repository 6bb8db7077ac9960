"""Every field that decides which distribution a rollout turn is drawn from, in one object.

A sampler that leaves a field unset lets a library fill it (transformers copies a checkpoint's
`generation_config`, which for Qwen's Instruct models carries a repetition penalty): the rollouts
are then drawn from a distribution the trainer's scorer never computes. Each field here is set
to the value the trainer scores, and each rollout engine translates all of them.

The scorer (policy.score_tokens) computes softmax(logits / temperature) with no top-k, no top-p
and no penalty; the samplers keep those off. The one deliberate difference is the control tokens
(image placeholders, <|im_start|>): both engines never sample them (docs/VLLM.md says what
that does to the log-probabilities).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SamplingSettings:
    max_new_tokens: int
    temperature: float = 1.0
    # Greedy decoding (evaluation): temperature is then ignored.
    greedy: bool = False
    # 0: no top-k cut (every token stays a candidate).
    top_k: int = 0
    # 1.0: no nucleus cut.
    top_p: float = 1.0
    # 1.0: no penalty (anything else samples from a distribution the scorer does not compute).
    repetition_penalty: float = 1.0

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1; got {self.max_new_tokens}")
        if not self.greedy and not self.temperature > 0:
            raise ValueError(f"temperature must be > 0 when sampling (use greedy=True for argmax); got {self.temperature}")
        if self.top_k < 0 or not 0 < self.top_p <= 1 or self.repetition_penalty <= 0:
            raise ValueError(f"top_k must be ≥ 0, top_p in (0, 1], repetition_penalty > 0; got {self.top_k}, {self.top_p}, "
                             f"{self.repetition_penalty}")
