"""The policy: a Qwen2.5-VL model plus its processor, and the two things training asks of it —
sample a turn, and score tokens (log-probabilities and entropy).

`model` is "micro" (the embedded default, built from the task corpus), a Hugging Face id, or a
local path; all load through transformers' real classes. bf16 on CUDA, float32 on CPU; LoRA via
peft when asked. Nothing here talks to the env server or parses what the model wrote.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForImageTextToText

from ..config import PolicyConfig
from .context_view import ContextView
from .patch_embedding import use_matmul_patch_embedding
from .conversation_encoding import ConversationEncoder, EncodedConversation, collate, expand_images
from .micro_model import build_micro_policy, save_policy
from .policy_processor import PolicyProcessor


def pick_device(requested: str) -> torch.device:
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {requested!r} was requested but torch sees no CUDA device; use 'cpu' or 'auto'")
    return torch.device(requested)


def pick_dtype(requested: str, device: torch.device) -> torch.dtype:
    if requested == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[requested]


def unwrap_model(model: torch.nn.Module) -> torch.nn.Module:
    """The transformers model under a peft or DDP wrapper (LoRA layers stay injected in it)."""
    if hasattr(model, "module") and isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = model.module
    if hasattr(model, "get_base_model"):
        model = model.get_base_model()
    return model


def _scored_logits(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(float logits at the positions the loss reads [N, V], that mask [B, L-1]): only those
    positions go through the LM head, and each distinct image through the vision tower once."""
    from transformers.modeling_outputs import BaseModelOutputWithPooling

    core = unwrap_model(model)
    backbone, head = core.model, core.lm_head
    mask = inputs["loss_mask"][:, 1:].bool()
    forward: dict[str, Any] = {key: inputs[key] for key in ("input_ids", "attention_mask", "mm_token_type_ids")}
    if "pixel_values" in inputs:
        features = backbone.get_image_features(inputs["pixel_values"].to(core.dtype), inputs["unique_grid_thw"], return_dict=True).pooler_output
        slots = [features[i] for i in inputs["image_index"].tolist()]
        forward["mm_encoder_outputs"] = {"image": BaseModelOutputWithPooling(pooler_output=slots)}
        forward["image_grid_thw"] = inputs["image_grid_thw"]
    hidden = backbone(**forward, use_cache=False).last_hidden_state[:, :-1]
    return head(hidden[mask]).float(), mask


def score_tokens(model: torch.nn.Module, inputs: dict[str, torch.Tensor], with_entropy: bool = False, temperature: float = 1.0
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Per-token log-probabilities of `inputs` under `model` (see Policy.token_scores). The logits are
    divided by `temperature`, the one the tokens were sampled at, so RL scores the distribution
    that sampled them (as veRL does); SFT and greedy evaluation score at 1."""
    logits, mask = _scored_logits(model, inputs)
    if temperature != 1.0:
        logits = logits / temperature
    log_probs_all = torch.log_softmax(logits, dim=-1)
    picked = log_probs_all.gather(-1, inputs["input_ids"][:, 1:][mask].unsqueeze(-1)).squeeze(-1)
    log_probs = torch.zeros(mask.shape, dtype=picked.dtype, device=picked.device).masked_scatter(mask, picked)
    entropy = None
    if with_entropy:
        per_token = -(log_probs_all.exp() * log_probs_all).sum(-1)
        entropy = torch.zeros(mask.shape, dtype=per_token.dtype, device=per_token.device).masked_scatter(mask, per_token)
    return log_probs, mask.float(), entropy


@torch.no_grad()
def greedy_token_matches(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(whether each scored next token is the model's most likely one [B, L-1], the loss mask [B, L-1]):
    teacher-forced, so a turn whose tokens all match is the turn greedy decoding writes from that context."""
    logits, mask = _scored_logits(model, inputs)
    matches = logits.argmax(-1) == inputs["input_ids"][:, 1:][mask]
    return torch.zeros(mask.shape, dtype=torch.bool, device=mask.device).masked_scatter(mask, matches), mask


@dataclass
class SampledTurn:
    token_ids: list[int]
    text: str
    truncated: bool


class Policy:
    def __init__(self, model: torch.nn.Module, processor: PolicyProcessor, device: torch.device, view: ContextView | None = None):
        self.model = model
        self.processor = processor
        self.device = device
        # What the model reads of each conversation (policy.view): the same when sampling and training.
        self.encoder = ConversationEncoder(processor, view)
        if device.type == "cpu":  # the same product, without oneDNN's slow Conv3d (patch_embedding.py)
            use_matmul_patch_embedding(model)

    # ---- loading -------------------------------------------------------------------------
    @classmethod
    def create(cls, policy_config: PolicyConfig, corpus: list[str], seed: int, device_name: str = "auto",
               base_directory: Path | None = None) -> "Policy":
        """With LoRA, `base_directory` receives the frozen base model before the adapters are added
        (once per run: a resumed run loads it and puts the checkpoint's adapters back on it)."""
        device = pick_device(device_name)
        dtype = pick_dtype(policy_config.dtype, device)
        source = policy_config.model
        if source == "micro":
            size = policy_config.micro
            model, processor = build_micro_policy(corpus, size, seed)
            model = model.to(device=device, dtype=dtype)
        else:
            processor = PolicyProcessor.from_pretrained(source, policy_config.min_pixels, policy_config.max_pixels)
            model = AutoModelForImageTextToText.from_pretrained(source, dtype=dtype).to(device)
        lora = policy_config.lora
        if lora.enabled:
            from peft import LoraConfig, get_peft_model

            if base_directory is not None:
                save_policy(model, processor, base_directory)
            model = get_peft_model(model, LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                                                     target_modules=list(lora.target_modules)))
        return cls(model, processor, device, ContextView.from_config(policy_config.view))

    @classmethod
    def load(cls, directory: Path, device_name: str = "auto", dtype_name: str = "auto", view: ContextView | None = None) -> "Policy":
        """A saved policy; `view` must be the one it was trained with (its run config's policy.view)."""
        device = pick_device(device_name)
        dtype = pick_dtype(dtype_name, device)
        processor = PolicyProcessor.from_pretrained(directory)
        model = AutoModelForImageTextToText.from_pretrained(directory, dtype=dtype).to(device)
        return cls(model, processor, device, view)

    @classmethod
    def load_with_adapter(cls, base: str | Path, adapter_directory: Path, processor_directory: Path, device_name: str = "auto",
                          dtype_name: str = "auto", view: ContextView | None = None) -> "Policy":
        """A LoRA run resumed: the base model (a run's saved base, a hub id or a folder) with the
        checkpoint's adapters on it, trainable."""
        from peft import PeftModel

        device = pick_device(device_name)
        dtype = pick_dtype(dtype_name, device)
        base_model = AutoModelForImageTextToText.from_pretrained(base, dtype=dtype).to(device)
        model = PeftModel.from_pretrained(base_model, adapter_directory, is_trainable=True)
        return cls(model, PolicyProcessor.from_pretrained(processor_directory), device, view)

    @property
    def has_adapters(self) -> bool:
        return hasattr(self.model, "merge_and_unload")

    def save(self, directory: Path, adapter_directory: Path | None = None) -> None:
        """save_pretrained into `directory`. A LoRA policy is saved merged there (so eval, serve-policy
        and any Hugging Face loader read it as a plain model) and, when `adapter_directory` is given,
        as adapters alone there too (what resuming trains on)."""
        if not self.has_adapters:
            save_policy(self.model, self.processor, directory)
            return
        if adapter_directory is not None:
            self.model.save_pretrained(adapter_directory)
        # A copy to merge: merging in place and unmerging would not give back the same base weights bit for bit.
        save_policy(copy.deepcopy(self.model).merge_and_unload(), self.processor, directory)

    # ---- batches -------------------------------------------------------------------------
    def batch(self, encoded: list[EncodedConversation]) -> dict[str, torch.Tensor]:
        inputs = collate(encoded, self.processor.pad_id, self.processor.image_token_id)
        return {key: value.to(self.device) for key, value in inputs.items()}

    def token_scores(self, inputs: dict[str, torch.Tensor], with_entropy: bool = False,
                     model: torch.nn.Module | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(log p of each next token, its loss mask, entropy or None), all [B, L-1]; zero off the mask.

        Only positions the loss reads go through the LM head and the softmax (policy-written
        tokens: a third of an SFT conversation, less in RL), and each distinct image goes through
        the vision tower once. `model` scores with another model of the same family (the KL
        reference); the default is the policy.
        """
        return score_tokens(model if model is not None else self.model, inputs, with_entropy)

    # ---- sampling    # ---- sampling ------------------------------------------------------------------------
    @torch.no_grad()
    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float, greedy: bool) -> list[SampledTurn]:
        encoded = [self.encoder.encode(messages, add_generation_prompt=True) for messages in conversations]
        inputs = expand_images(self.batch(encoded))
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        was_training = self.model.training
        self.model.eval()
        try:
            generated = self.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=not greedy,
                temperature=temperature if not greedy else None,
                top_k=0 if not greedy else None,
                top_p=1.0 if not greedy else None,
                eos_token_id=self.processor.end_of_turn_id,
                pad_token_id=self.processor.pad_id,
                # A sampled vision token would desynchronise image tokens and pixel values (the
                # next turn's rope index fails), and a sampled <|im_start|> breaks the turn structure.
                suppress_tokens=self.processor.control_token_ids,
            )
        finally:
            if was_training:
                self.model.train()
        prompt_length = inputs["input_ids"].shape[1]
        turns: list[SampledTurn] = []
        for row in generated[:, prompt_length:].tolist():
            ids: list[int] = []
            truncated = True
            for token in row:
                ids.append(int(token))
                if token == self.processor.end_of_turn_id:
                    truncated = False
                    break
            text_ids = ids[:-1] if not truncated else ids
            text = self.processor.tokenizer.decode(text_ids, skip_special_tokens=False)
            turns.append(SampledTurn(token_ids=ids, text=text, truncated=truncated))
        return turns
