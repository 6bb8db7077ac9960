"""veRL's server-manager interface (`generate(request_id, prompt_ids=..., sampling_params=...,
image_data=...) -> TokenOutput`) on top of transformers' `generate`.

This is the one stand-in in the CPU path: on a cluster veRL's own manager sends the same call to
vLLM or SGLang, which need a GPU. Token ids go in and come out, with the sampled tokens'
log-probs, exactly as veRL's async rollout servers answer.

The vision placeholders and turn openers are never sampled (`suppress_tokens`): an untrained
micro model would otherwise write image tokens with no image behind them. A vLLM server has no
such rule; a real model does not write them.
"""
from __future__ import annotations

import asyncio
from typing import Any

import torch
from verl.workers.rollout.replica import TokenOutput

CONTROL_TOKENS = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|im_start|>", "<|endoftext|>"]


class TransformersServerManager:
    def __init__(self, model: Any, processor: Any, max_new_tokens: int = 64, seed: int = 0):
        self.model = model.eval()
        self.processor = processor
        self.max_new_tokens = max_new_tokens
        tokenizer = processor.tokenizer
        self.end_of_turn = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.image_token = int(tokenizer.convert_tokens_to_ids("<|image_pad|>"))
        unknown = tokenizer.unk_token_id
        self.suppressed = [int(i) for i in (tokenizer.convert_tokens_to_ids(t) for t in CONTROL_TOKENS) if i is not None and i != unknown]
        self.generator = torch.Generator().manual_seed(seed)
        # One generate at a time: torch on CPU already uses every core for one call.
        self._lock = asyncio.Lock()

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       image_data: list[Any] | None = None, **_: Any) -> TokenOutput:
        async with self._lock:
            return await asyncio.get_running_loop().run_in_executor(None, self._generate, prompt_ids, sampling_params, image_data)

    def _generate(self, prompt_ids: list[int], sampling_params: dict[str, Any], image_data: list[Any] | None) -> TokenOutput:
        inputs: dict[str, Any] = {"input_ids": torch.tensor([prompt_ids]), "attention_mask": torch.ones(1, len(prompt_ids), dtype=torch.long)}
        # Qwen2.5-VL places image tokens in 3-D (mrope) only when told which tokens are images; without
        # it transformers silently falls back to 1-D positions and the policy reads another sequence
        # than the one it was trained on (docs/ARCHITECTURE.md).
        inputs["mm_token_type_ids"] = (inputs["input_ids"] == self.image_token).long()
        if image_data:
            vision = self.processor.image_processor(images=image_data, return_tensors="pt")
            inputs["pixel_values"], inputs["image_grid_thw"] = vision["pixel_values"], vision["image_grid_thw"]
        temperature = float(sampling_params.get("temperature", 1.0))
        greedy = temperature <= 0 or sampling_params.get("top_k") == 1
        max_new = int(sampling_params.get("max_tokens") or sampling_params.get("max_new_tokens") or self.max_new_tokens)
        torch_state = torch.random.get_rng_state()
        torch.random.set_rng_state(self.generator.get_state())
        try:
            with torch.no_grad():
                out = self.model.generate(
                    **inputs, max_new_tokens=max_new, do_sample=not greedy,
                    temperature=temperature if not greedy else None,
                    top_p=float(sampling_params.get("top_p", 1.0)) if not greedy else None,
                    top_k=int(sampling_params["top_k"]) if not greedy and int(sampling_params.get("top_k", -1)) > 0 else None,
                    eos_token_id=self.end_of_turn, pad_token_id=self.end_of_turn, suppress_tokens=self.suppressed,
                    return_dict_in_generate=True, output_scores=True,
                )
        finally:
            self.generator.set_state(torch.random.get_rng_state())
            torch.random.set_rng_state(torch_state)
        tokens = out.sequences[0, len(prompt_ids):].tolist()
        # The log-prob of each sampled token under the distribution it was sampled from.
        log_probs = [float(torch.log_softmax(scores[0].float(), dim=-1)[token]) for scores, token in zip(out.scores, tokens)]
        stopped = bool(tokens) and tokens[-1] == self.end_of_turn
        return TokenOutput(token_ids=tokens, log_probs=log_probs, stop_reason="completed" if stopped else None)
