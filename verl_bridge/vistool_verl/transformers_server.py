"""veRL's rollout-server call (`generate(prompt_ids, sampling_params, request_id, image_data,
mm_processor_kwargs) -> TokenOutput`) on top of transformers' `generate`.

This is the one stand-in in the CPU path: on a cluster veRL sends the same call to vLLM or SGLang,
which need a GPU. `TransformersGenerator` answers it; `TransformersServerManager` is the
server-manager face the smoke and the agent-loop tests call directly, and
`cpu_stand_in.transformers_replica` puts the same generator behind a Ray actor for veRL's own
trainer. Token ids go in and come out, with log-probs, as veRL's async rollout servers answer.

It samples as veRL 0.9.1 configures vLLM (vllm_async_server.py), so the policy's mistakes reach
the loop as they would on a cluster:
- **What is banned.** veRL patches vLLM's `compute_logits` to set -inf on the vision placeholders
  (`get_vision_placeholder_token_ids`: `<|image_pad|>`, `<|video_pad|>`) and on the rows past the
  tokenizer (the padded vocabulary: Qwen2.5-VL's 151,665-151,935). Those and nothing else are
  banned here: `<|im_start|>`, `<|endoftext|>`, `<|vision_start|>` and the rest stay sampleable.
- **Where a turn stops.** vLLM stops on every end-of-sequence id of the model's generation config
  and the tokenizer's (Qwen2.5-VL-Instruct: `<|im_end|>` and `<|endoftext|>`) and returns the stop
  token; so does this.
- **No inherited defaults.** veRL overrides vLLM's generation-config defaults with the rollout's
  temperature, top-k and top-p and a repetition penalty of 1.0; the checkpoint's own
  (Qwen2.5-VL-Instruct: top-k 1, top-p 0.001, temperature 0.1, repetition penalty 1.05) are never
  used. transformers' `generate` would inherit them, so the model's generation config is replaced by
  a neutral one and every setting is passed.
- **Log-probs** are `processed_logprobs` (veRL's `rollout.logprobs_mode`): the log-softmax of the
  logits after the ban and the temperature, the distribution the token was drawn from.

The prompt's image placeholders must be the ones the images expand to at the resolution the
caller names (`mm_processor_kwargs`, else the processor's defaults); a mismatch raises instead of
generating from a prompt the trainer will never score (docs/VERL.md, item 4).
"""
from __future__ import annotations

import asyncio
from typing import Any

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList
from verl.workers.rollout.replica import TokenOutput
from verl.workers.rollout.utils import get_vision_placeholder_token_ids

IMAGE_PAD = "<|image_pad|>"


def banned_token_ids(processor: Any, vocab_size: int) -> list[int]:
    """What veRL 0.9.1 makes vLLM unable to sample: the vision placeholders and every row of the
    model's vocabulary past the tokenizer's (monkey_patch_compute_logits with vocab_size=len(tokenizer))."""
    placeholders = get_vision_placeholder_token_ids(processor)
    return sorted(set(placeholders) | set(range(len(processor.tokenizer), int(vocab_size))))


def stop_token_ids(model: Any, tokenizer: Any) -> list[int]:
    """The ids vLLM stops a turn on: the generation config's end-of-sequence ids and the tokenizer's."""
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = configured if isinstance(configured, (list, tuple)) else [configured]
    return sorted({int(i) for i in [*ids, tokenizer.eos_token_id] if i is not None})


class BanTokens(LogitsProcessor):
    """-inf on the banned ids before sampling, as veRL's patched compute_logits does in vLLM."""

    def __init__(self, banned: list[int]):
        self.banned = torch.tensor(banned, dtype=torch.long)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.banned.numel():
            scores = scores.index_fill(-1, self.banned.to(scores.device), float("-inf"))
        return scores


class ImageResolutionMismatch(ValueError):
    """The prompt was built for images at another resolution than the one the rollout would see."""


class TransformersGenerator:
    def __init__(self, model: Any, processor: Any, default_max_tokens: int = 64, seed: int = 0):
        self.model = model.eval()
        self.processor = processor
        self.default_max_tokens = default_max_tokens
        tokenizer = processor.tokenizer
        self.end_of_turn = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.image_pad = int(tokenizer.convert_tokens_to_ids(IMAGE_PAD))
        self.stop_ids = stop_token_ids(model, tokenizer)
        self.banned = banned_token_ids(processor, model.get_output_embeddings().weight.shape[0])
        # The checkpoint's sampling defaults must never apply (veRL overrides vLLM's with the rollout's).
        self.model.generation_config = GenerationConfig(eos_token_id=self.stop_ids, pad_token_id=self.stop_ids[0])
        self.generator = torch.Generator().manual_seed(seed)

    def vision_inputs(self, prompt_ids: list[int], image_data: list[Any] | None,
                      mm_processor_kwargs: dict[str, Any] | None) -> dict[str, torch.Tensor]:
        """pixel_values and image_grid_thw for the images, checked against the prompt's placeholders."""
        if not image_data:
            return {}
        vision = self.processor.image_processor(images=image_data, return_tensors="pt", **(mm_processor_kwargs or {}))
        merge = int(getattr(self.processor.image_processor, "merge_size", 2))
        expected = int((vision["image_grid_thw"].prod(dim=-1) // (merge * merge)).sum())
        placed = sum(1 for token in prompt_ids if token == self.image_pad)
        if placed != expected:
            raise ImageResolutionMismatch(
                f"the prompt holds {placed} image tokens, but its {len(image_data)} image(s) give {expected} at the resolution the "
                f"rollout was asked for (mm_processor_kwargs={mm_processor_kwargs or {}}): the prompt was built with other image "
                "size limits. Pass the same mm_processor_kwargs (data.mm_processor_kwargs) to generate as to the token builder.")
        # mm_token_type_ids marks the image tokens. Without it transformers' Qwen2.5-VL generates with
        # 1-D text positions for the whole prompt instead of its 3-D M-RoPE positions (it computes those
        # only when the ids are marked), while veRL's actor scores the same tokens with M-RoPE
        # positions: the rollout/trainer log-prob gap of issue item 6 (docs/VERL.md).
        image_tokens = (torch.tensor([prompt_ids]) == self.image_pad).long()
        return {"pixel_values": vision["pixel_values"], "image_grid_thw": vision["image_grid_thw"], "mm_token_type_ids": image_tokens}

    def score(self, prompt_ids: list[int], continuation: list[int], image_data: list[Any] | None = None,
              mm_processor_kwargs: dict[str, Any] | None = None, temperature: float = 1.0) -> list[float]:
        """The log-probs of `continuation` after the prompt, as `generate` reports sampled tokens' (a teacher-forced pass)."""
        ids = list(prompt_ids) + list(continuation)
        inputs: dict[str, Any] = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
        inputs.update(self.vision_inputs(ids, image_data, mm_processor_kwargs))
        with torch.no_grad():
            logits = self.model(**inputs).logits[0, len(prompt_ids) - 1:len(ids) - 1].float()
        logits = BanTokens(self.banned)(torch.tensor([ids]), logits)
        scale = temperature if temperature > 0 else 1.0
        return torch.log_softmax(logits / scale, dim=-1).gather(1, torch.tensor(continuation)[:, None])[:, 0].tolist()

    def generate(self, prompt_ids: list[int], sampling_params: dict[str, Any], image_data: list[Any] | None = None,
                 mm_processor_kwargs: dict[str, Any] | None = None, default_max_tokens: int | None = None) -> TokenOutput:
        inputs: dict[str, Any] = {"input_ids": torch.tensor([prompt_ids]), "attention_mask": torch.ones(1, len(prompt_ids), dtype=torch.long)}
        inputs.update(self.vision_inputs(prompt_ids, image_data, mm_processor_kwargs))
        temperature = float(sampling_params.get("temperature", 1.0))
        greedy = temperature <= 0 or sampling_params.get("top_k") == 1
        max_new = sampling_params.get("max_tokens") or sampling_params.get("max_new_tokens") or default_max_tokens or self.default_max_tokens
        torch_state = torch.random.get_rng_state()
        torch.random.set_rng_state(self.generator.get_state())
        try:
            with torch.no_grad():
                out = self.model.generate(
                    **inputs, max_new_tokens=max(int(max_new), 1), do_sample=not greedy,
                    temperature=temperature if not greedy else None,
                    top_p=float(sampling_params.get("top_p", 1.0)) if not greedy else None,
                    top_k=int(sampling_params["top_k"]) if not greedy and int(sampling_params.get("top_k", -1) or -1) > 0 else 0,
                    repetition_penalty=float(sampling_params.get("repetition_penalty", 1.0) or 1.0),
                    eos_token_id=self.stop_ids, pad_token_id=self.stop_ids[0],
                    logits_processor=LogitsProcessorList([BanTokens(self.banned)]),
                    return_dict_in_generate=True, output_scores=True,
                )
        finally:
            self.generator.set_state(torch.random.get_rng_state())
            torch.random.set_rng_state(torch_state)
        tokens = out.sequences[0, len(prompt_ids):].tolist()
        # `scores` are the logits after the ban and the temperature (and top-k/top-p when set): the
        # distribution each token was drawn from, vLLM's processed log-probs.
        log_probs = [float(torch.log_softmax(scores[0].float(), dim=-1)[token]) for scores, token in zip(out.scores, tokens)]
        stopped = bool(tokens) and tokens[-1] in self.stop_ids
        return TokenOutput(token_ids=tokens, log_probs=log_probs, stop_reason="completed" if stopped or len(tokens) >= int(max_new) else None)


class TransformersServerManager:
    """veRL's server-manager interface (what an agent loop's `self.server_manager` is) on one
    in-process TransformersGenerator, for the smoke and the agent-loop tests."""

    def __init__(self, model: Any, processor: Any, max_new_tokens: int = 64, seed: int = 0):
        self.generator = TransformersGenerator(model, processor, default_max_tokens=max_new_tokens, seed=seed)
        self.calls: list[dict[str, Any]] = []
        # One generate at a time: torch on CPU already uses every core for one call.
        self._lock = asyncio.Lock()

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       image_data: list[Any] | None = None, mm_processor_kwargs: dict[str, Any] | None = None, **_: Any) -> TokenOutput:
        self.calls.append({"prompt_tokens": len(prompt_ids), "sampling_params": dict(sampling_params),
                           "mm_processor_kwargs": dict(mm_processor_kwargs or {})})
        async with self._lock:
            return await asyncio.get_running_loop().run_in_executor(
                None, self.generator.generate, prompt_ids, dict(sampling_params), image_data, mm_processor_kwargs)
