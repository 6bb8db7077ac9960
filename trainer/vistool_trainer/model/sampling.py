"""The sampling fields: every setting that decides which distribution a rollout token is drawn
from, in one object that every sampler reads (transformers' `generate` here; a vLLM engine builds
its `SamplingParams` from the same object) and that the scorer mirrors.

Why it exists: RL's importance ratio divides the trainer's probability of a sampled token by the
probability of the distribution that drew it. The trainer scores softmax(logits / T) with the
suppressed tokens removed (`score_tokens`); a sampler that also applies a repetition penalty, an
n-gram block, a min-p cut or anything else draws from another distribution, and the "old"
log-probs stop describing the sampler (veRL issues #1246 and #7270 are this bug). transformers
fills every generation field left unset from the checkpoint's `generation_config`, and Qwen's
Instruct checkpoints ship `repetition_penalty: 1.05`, `top_k`, `top_p` and `temperature`; so
`generate` is called with every field set here AND with the checkpoint's generation config
swapped for a blank one for the call (`isolated_generation_config`), so that no field this module
does not know of can leak in either (docs/ALGORITHMS.md, "Sampling matches scoring").

For a vLLM sampler the same fields map one to one: temperature; top_k 0 is vLLM's -1; top_p;
min_p; repetition_penalty; max_new_tokens is max_tokens; stop_token_ids; the suppressed tokens are
left out with a `logit_bias` of -inf on each (a few ids, where `allowed_token_ids` would be every
other id of a 151k vocabulary, which vLLM before 0.32 refuses for Qwen's padded one); and the log-probs to
compare with the scorer's are the processed ones (`logprobs_mode="processed_logprobs"`), which
include the temperature and the token mask.

It never samples or scores by itself and holds no model.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True)
class SamplingFields:
    """What a rollout turn is sampled with. Greedy decoding (evaluation) ignores temperature,
    top_k and top_p. `suppressed_token_ids` get probability 0 (vision placeholders and turn
    openers: a sampled one would break the conversation's structure); the trainer's scorer
    removes the same tokens, so sampler and scorer describe one distribution."""

    max_new_tokens: int
    temperature: float = 1.0
    greedy: bool = False
    top_k: int = 0  # 0: the whole vocabulary (veRL's rollout.top_k -1, vLLM's -1)
    top_p: float = 1.0
    min_p: float = 0.0
    repetition_penalty: float = 1.0  # 1: none; transformers and vLLM both read 1 as off
    stop_token_ids: tuple[int, ...] = ()
    pad_token_id: int | None = None
    suppressed_token_ids: tuple[int, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"sampling max_new_tokens must be at least 1, got {self.max_new_tokens}")
        if not self.greedy and not self.temperature > 0:
            raise ValueError(f"sampling temperature must be above 0 (use greedy for argmax decoding), got {self.temperature}")
        if self.top_k < 0 or not 0 < self.top_p <= 1 or not 0 <= self.min_p < 1 or self.repetition_penalty <= 0:
            raise ValueError(f"sampling fields out of range: top_k {self.top_k} (>= 0), top_p {self.top_p} (0, 1], "
                             f"min_p {self.min_p} [0, 1), repetition_penalty {self.repetition_penalty} (> 0)")

    @property
    def scoring_temperature(self) -> float:
        """The temperature the trainer divides logits by to score these samples (1 for greedy)."""
        return 1.0 if self.greedy else self.temperature

    @property
    def plain_softmax(self) -> bool:
        """Whether the sampled distribution is softmax(logits / T) over the non-suppressed tokens,
        the one `score_tokens` computes: no truncation and no penalty. RL needs this."""
        return self.top_k == 0 and self.top_p == 1.0 and self.min_p == 0.0 and self.repetition_penalty == 1.0

    def generation_config(self) -> Any:
        """A transformers GenerationConfig with every field that shapes the distribution set
        explicitly (off where this object does not ask for it)."""
        from transformers import GenerationConfig

        sampling = not self.greedy
        return GenerationConfig(
            max_new_tokens=self.max_new_tokens,
            min_new_tokens=0,
            do_sample=sampling,
            num_beams=1,
            num_return_sequences=1,
            temperature=self.temperature if sampling else None,
            top_k=self.top_k if sampling else None,
            top_p=self.top_p if sampling else None,
            min_p=(self.min_p or None) if sampling else None,
            typical_p=1.0 if sampling else None,
            epsilon_cutoff=0.0 if sampling else None,
            eta_cutoff=0.0 if sampling else None,
            repetition_penalty=self.repetition_penalty,
            encoder_repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            encoder_no_repeat_ngram_size=0,
            renormalize_logits=False,
            remove_invalid_values=False,
            guidance_scale=None,
            eos_token_id=list(self.stop_token_ids) or None,
            pad_token_id=self.pad_token_id,
            suppress_tokens=list(self.suppressed_token_ids) or None,
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain values (for a vLLM SamplingParams, a log line or a record)."""
        return {"max_new_tokens": self.max_new_tokens, "temperature": self.temperature, "greedy": self.greedy, "top_k": self.top_k,
                "top_p": self.top_p, "min_p": self.min_p, "repetition_penalty": self.repetition_penalty,
                "stop_token_ids": list(self.stop_token_ids), "pad_token_id": self.pad_token_id,
                "suppressed_token_ids": list(self.suppressed_token_ids)}


@contextmanager
def isolated_generation_config(model: torch.nn.Module) -> Iterator[None]:
    """For the duration of a `generate` call, the transformers model under any peft wrapper reads
    a blank GenerationConfig as its own: transformers fills every field the call leaves unset from
    the model's `generation_config` (the checkpoint's generation_config.json), and this keeps the
    checkpoint's sampling defaults out. The model's own config is put back afterwards (a saved
    checkpoint keeps it)."""
    from transformers import GenerationConfig

    target = model
    while hasattr(target, "get_base_model"):
        target = target.get_base_model()
    saved = getattr(target, "generation_config", None)
    target.generation_config = GenerationConfig()
    try:
        yield
    finally:
        target.generation_config = saved


def suppression_mask(vocab_size: int, token_ids: tuple[int, ...] | list[int], device: torch.device) -> torch.Tensor | None:
    """[vocab] True at the suppressed tokens (None when there are none): the scorer sets their
    logits to -inf, as transformers' SuppressTokensLogitsProcessor does before sampling."""
    ids = [int(i) for i in token_ids if 0 <= int(i) < vocab_size]
    if not ids:
        return None
    mask = torch.zeros(vocab_size, dtype=torch.bool, device=device)
    mask[torch.tensor(ids, dtype=torch.long, device=device)] = True
    return mask
