"""veRL's rollout-server call (`generate(prompt_ids, sampling_params, request_id, image_data,
mm_processor_kwargs) -> TokenOutput`) on top of transformers' `generate`.

This is the one stand-in in the CPU path: on a cluster veRL sends the same call to vLLM or SGLang,
which need a GPU. `TransformersGenerator` answers it; `TransformersServerManager` is the
server-manager face the smoke and the agent-loop tests call directly, and
`cpu_stand_in.transformers_replica` puts the same generator behind a Ray actor for veRL's own
trainer. Token ids go in and come out, with log-probs, as veRL's async rollout servers answer.

Two rules differ from vLLM, both said wherever the stand-in is used:
- The vision placeholders and turn openers are never sampled (`suppress_tokens`): an untrained
  micro model would otherwise write image tokens with no image behind them. A real model does not
  write them, and vLLM has no such rule.
- The log-prob of each sampled token is taken from the model's own logits (divided by the sampling
  temperature), not from the masked distribution it was drawn from: that is the quantity veRL's
  actor recomputes, so any rollout/trainer gap measures the data path and nothing else. (vLLM's
  default log-probs are its raw ones, the same at temperature 1.)

The prompt's image placeholders must be the ones the images expand to at the resolution the
caller names (`mm_processor_kwargs`, else the processor's defaults); a mismatch raises instead of
generating from a prompt the trainer will never score (docs/VERL.md, item 4).
"""
from __future__ import annotations

import asyncio
from typing import Any

import torch
from verl.workers.rollout.replica import TokenOutput

CONTROL_TOKENS = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|im_start|>", "<|endoftext|>"]
IMAGE_PAD = "<|image_pad|>"


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
        unknown = tokenizer.unk_token_id
        self.suppressed = [int(i) for i in (tokenizer.convert_tokens_to_ids(t) for t in CONTROL_TOKENS) if i is not None and i != unknown]
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
                    top_k=int(sampling_params["top_k"]) if not greedy and int(sampling_params.get("top_k", -1)) > 0 else None,
                    eos_token_id=self.end_of_turn, pad_token_id=self.end_of_turn, suppress_tokens=self.suppressed,
                    return_dict_in_generate=True, output_logits=True,
                )
        finally:
            self.generator.set_state(torch.random.get_rng_state())
            torch.random.set_rng_state(torch_state)
        tokens = out.sequences[0, len(prompt_ids):].tolist()
        scale = temperature if temperature > 0 else 1.0
        log_probs = [float(torch.log_softmax(logits[0].float() / scale, dim=-1)[token]) for logits, token in zip(out.logits, tokens)]
        stopped = bool(tokens) and tokens[-1] == self.end_of_turn
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
