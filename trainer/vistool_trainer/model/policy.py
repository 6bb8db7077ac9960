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
from .patch_embedding import use_matmul_patch_embedding
from .conversation_encoding import ConversationEncoder, EncodedConversation, collate, expand_images
from .micro_model import build_micro_policy, save_policy
from .policy_processor import PolicyProcessor
from .sampling import SamplingFields, isolated_generation_config, suppression_mask


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


def to_device_and_dtype(model: torch.nn.Module, device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
    """Parameters to `dtype`, buffers kept in their own (the rotary frequencies stay fp32, as
    transformers' from_pretrained keeps them: rounded to bf16 they shift every position's angle, and
    a model built here would differ from the same model saved and loaded back)."""
    buffers = {(id(module), name): buffer for module in model.modules() for name, buffer in module._buffers.items() if buffer is not None}
    model = model.to(device=device, dtype=dtype)
    for module in model.modules():
        for name in list(module._buffers):
            if (id(module), name) in buffers:
                module._buffers[name] = buffers[(id(module), name)].to(device)
    return model


# How many scored positions go through the LM head and the log-softmax at once: at most this many
# [positions, vocabulary] entries per fp32 buffer (2^25 is 128 MiB; with Qwen's 151,936-token
# vocabulary about 220 positions). With gradients on, each slice of positions is recomputed in
# backward instead of kept, so the softmax's buffers of a whole micro-batch never exist at once
# (trainer/README.md, "A real model on one GPU"). A small vocabulary (the micro model's) never splits.
SCORING_CHUNK_ELEMENTS = 2**25


def _scored_hidden(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(the backbone's last hidden state at the positions the loss reads [N, H], that mask
    [B, L-1]), each distinct image through the vision tower once.

    The image features are placed into the token embeddings here (`inputs_embeds`), and the
    backbone gets the token ids beside them only to compute the 3-D rope positions: the same call
    works on transformers 5.17 (no `mm_encoder_outputs` argument, which it would silently drop)
    and 5.18."""
    core = unwrap_model(model)
    backbone = core.model
    mask = inputs["loss_mask"][:, 1:].bool()
    input_ids = inputs["input_ids"]
    embeds = backbone.get_input_embeddings()(input_ids)
    forward: dict[str, Any] = {key: inputs[key] for key in ("attention_mask", "mm_token_type_ids")}
    if "pixel_values" in inputs:
        features = backbone.get_image_features(inputs["pixel_values"].to(core.dtype), inputs["unique_grid_thw"], return_dict=True).pooler_output
        slots = torch.cat([features[i] for i in inputs["image_index"].tolist()]).to(embeds.dtype)
        image_positions = (input_ids == core.config.image_token_id).unsqueeze(-1)
        if int(image_positions.sum()) * embeds.shape[-1] != slots.numel():
            raise ValueError(f"{int(image_positions.sum())} image tokens in the batch but {slots.shape[0]} image features")
        embeds = embeds.masked_scatter(image_positions, slots)
        forward["image_grid_thw"] = inputs["image_grid_thw"]
    hidden = backbone(input_ids=input_ids, inputs_embeds=embeds, **forward, use_cache=False).last_hidden_state[:, :-1]
    return hidden[mask], mask


def _scored_logits(model: torch.nn.Module, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(float logits at the positions the loss reads [N, V], that mask [B, L-1]): only those
    positions go through the LM head."""
    hidden, mask = _scored_hidden(model, inputs)
    return unwrap_model(model).lm_head(hidden).float(), mask


def _head_scores(head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor, temperature: float,
                 suppressed: torch.Tensor | None, with_entropy: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log p(target) of each position [n], and its entropy [n] (no gradient: it is only logged)."""
    logits = head(hidden).float()
    if temperature != 1.0:
        logits = logits / temperature
    if suppressed is not None:
        logits = logits.masked_fill(suppressed, float("-inf"))
    log_probs_all = torch.log_softmax(logits, dim=-1)
    picked = log_probs_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            # A suppressed token has p = 0 and log p = -inf: its term is 0 (p·log p → 0), not 0·(-inf).
            finite = log_probs_all if suppressed is None else log_probs_all.masked_fill(suppressed, 0.0)
            entropy = -(log_probs_all.exp() * finite).sum(-1)
    return picked, entropy


def score_tokens(model: torch.nn.Module, inputs: dict[str, torch.Tensor], with_entropy: bool = False, temperature: float = 1.0,
                 suppressed_token_ids: tuple[int, ...] | list[int] = ()) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Per-token log-probabilities of `inputs` under `model` (see Policy.token_scores). The logits are
    divided by `temperature`, the one the tokens were sampled at, and `suppressed_token_ids` (the
    ones the sampler never draws, SamplingFields.suppressed_token_ids) get probability 0, so RL
    scores exactly the distribution that sampled them (as veRL does); SFT and greedy evaluation
    score at 1 over the whole vocabulary. The entropy carries no gradient (the loss does not use it).

    The LM head and the softmax run over slices of SCORING_CHUNK_ELEMENTS // vocabulary positions,
    each recomputed in backward when gradients are on: the values are the unsliced ones, the
    memory one slice's."""
    hidden, mask = _scored_hidden(model, inputs)
    head = unwrap_model(model).lm_head
    vocabulary = int(head.out_features)
    targets = inputs["input_ids"][:, 1:][mask]
    suppressed = suppression_mask(vocabulary, suppressed_token_ids, hidden.device) if suppressed_token_ids else None
    rows = max(1, SCORING_CHUNK_ELEMENTS // vocabulary)
    # Under DeepSpeed ZeRO-3 each call of the head fetches its partitioned weight with a collective:
    # ranks holding different numbers of positions would call it a different number of times and
    # hang, so the head runs once per micro-batch there (unsliced).
    partitioned = hasattr(head.weight, "ds_id")
    if hidden.shape[0] <= rows or partitioned:
        picked, per_token = _head_scores(head, hidden, targets, temperature, suppressed, with_entropy)
    else:
        from torch.utils.checkpoint import checkpoint

        pieces = []
        for start in range(0, hidden.shape[0], rows):
            arguments = (head, hidden[start:start + rows], targets[start:start + rows], temperature, suppressed, with_entropy)
            pieces.append(checkpoint(_head_scores, *arguments, use_reentrant=False) if torch.is_grad_enabled() and hidden.requires_grad
                          else _head_scores(*arguments))
        picked = torch.cat([piece[0] for piece in pieces])
        per_token = torch.cat([piece[1] for piece in pieces]) if with_entropy else None
    log_probs = torch.zeros(mask.shape, dtype=picked.dtype, device=picked.device).masked_scatter(mask, picked)
    entropy = None
    if per_token is not None:
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
    # log p of each sampled token under the distribution it was drawn from, when the sampler
    # reports it (vLLM does; transformers' generate does when asked: `sample_turns(with_log_probs=True)`).
    log_probs: list[float] | None = None


class Policy:
    def __init__(self, model: torch.nn.Module, processor: PolicyProcessor, device: torch.device):
        self.model = model
        self.processor = processor
        self.device = device
        # Messages arrive as the env presented them (policy.view included): the encoder only tokenises.
        self.encoder = ConversationEncoder(processor)
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
            model = to_device_and_dtype(model, device, dtype)
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
        policy = cls(model, processor, device)
        policy.set_gradient_checkpointing(gradient_checkpointing_wanted(policy_config))
        return policy

    @classmethod
    def load(cls, directory: Path, device_name: str = "auto", dtype_name: str = "auto") -> "Policy":
        """A saved policy (what it reads of a conversation is the env's presentation, not the policy's)."""
        device = pick_device(device_name)
        dtype = pick_dtype(dtype_name, device)
        processor = PolicyProcessor.from_pretrained(directory)
        model = AutoModelForImageTextToText.from_pretrained(directory, dtype=dtype).to(device)
        return cls(model, processor, device)

    @classmethod
    def load_with_adapter(cls, base: str | Path, adapter_directory: Path, processor_directory: Path, device_name: str = "auto",
                          dtype_name: str = "auto") -> "Policy":
        """A LoRA run resumed: the base model (a run's saved base, a hub id or a folder) with the
        checkpoint's adapters on it, trainable."""
        from peft import PeftModel

        device = pick_device(device_name)
        dtype = pick_dtype(dtype_name, device)
        base_model = AutoModelForImageTextToText.from_pretrained(base, dtype=dtype).to(device)
        model = PeftModel.from_pretrained(base_model, adapter_directory, is_trainable=True)
        return cls(model, PolicyProcessor.from_pretrained(processor_directory), device)

    def set_gradient_checkpointing(self, enabled: bool) -> None:
        """Recompute each decoder layer's and vision block's activations in backward instead of
        keeping them (policy.gradient_checkpointing): activation memory per token drops from every
        layer's intermediates to one hidden state per layer, for about a third more compute
        (bench/trainer_memory.py measures both). transformers' layers checkpoint only in train
        mode; non-reentrant, so LoRA needs no input gradients and FSDP2 wraps it."""
        core = unwrap_model(self.model)
        if enabled:
            core.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        elif getattr(core, "is_gradient_checkpointing", False):
            core.gradient_checkpointing_disable()

    @property
    def gradient_checkpointing(self) -> bool:
        return bool(getattr(unwrap_model(self.model), "is_gradient_checkpointing", False))

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

    # ---- sampling ------------------------------------------------------------------------
    @property
    def suppressed_token_ids(self) -> tuple[int, ...]:
        """The ids no sampler may draw and the scorer gives probability 0: the control tokens
        (vision placeholders, turn openers), and every row of the LM head past the tokenizer.
        Qwen2.5-VL pads its embedding to 151,936 rows while its tokenizer has 151,665 tokens: an id
        from the padding decodes to nothing (the text the env server reads would silently lose it)
        and no vLLM before 0.32 accepts it in a request. The micro policy has no padding rows."""
        config = unwrap_model(self.model).config
        rows = int(getattr(config, "text_config", config).vocab_size)
        padding = range(len(self.processor.tokenizer), rows)
        return tuple(sorted(set(self.processor.control_token_ids) | set(padding)))

    def sampling_fields(self, max_new_tokens: int, temperature: float, greedy: bool) -> SamplingFields:
        """The fields a turn is sampled with: softmax(logits / T) over the whole vocabulary but the
        suppressed tokens (`suppressed_token_ids`), stopping at the end of the turn (model/sampling.py). The trainer scores
        RL tokens with the same temperature and suppressed tokens."""
        return SamplingFields(max_new_tokens=max_new_tokens, temperature=temperature if not greedy else 1.0, greedy=greedy,
                              stop_token_ids=(self.processor.end_of_turn_id,), pad_token_id=self.processor.pad_id,
                              # A sampled vision token would desynchronise image tokens and pixel values (the
                              # next turn's rope index fails), and a sampled <|im_start|> breaks the turn structure.
                              suppressed_token_ids=self.suppressed_token_ids)

    @torch.no_grad()
    def sample_turns(self, conversations: list[list[dict[str, Any]]], max_new_tokens: int, temperature: float, greedy: bool,
                     with_log_probs: bool = False) -> list[SampledTurn]:
        """One assistant turn per conversation, sampled with `sampling_fields(...)` in eval mode
        (no dropout). `with_log_probs` also returns the sampler's log-probability of each token
        (from the processed scores `generate` sampled from: memory grows with turns × vocabulary,
        so it is for checks, not for training runs)."""
        fields = self.sampling_fields(max_new_tokens, temperature, greedy)
        encoded = [self.encoder.encode(messages, add_generation_prompt=True) for messages in conversations]
        inputs = expand_images(self.batch(encoded))
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        was_training = self.model.training
        self.model.eval()
        extra: dict[str, Any] = {"output_scores": True, "return_dict_in_generate": True} if with_log_probs else {}
        try:
            with isolated_generation_config(self.model):
                generated = self.model.generate(**inputs, generation_config=fields.generation_config(), **extra)
        finally:
            if was_training:
                self.model.train()
        sequences = generated.sequences if with_log_probs else generated
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = sequences[:, prompt_length:]
        sampler_log_probs = None
        if with_log_probs:
            steps = torch.stack([torch.log_softmax(scores.float(), dim=-1) for scores in generated.scores], dim=1)  # [B, T, V]
            sampler_log_probs = steps.gather(-1, new_tokens[:, :steps.shape[1]].unsqueeze(-1)).squeeze(-1).tolist()
        turns: list[SampledTurn] = []
        for index, row in enumerate(new_tokens.tolist()):
            ids: list[int] = []
            truncated = True
            for token in row:
                ids.append(int(token))
                if token == self.processor.end_of_turn_id:
                    truncated = False
                    break
            text_ids = ids[:-1] if not truncated else ids
            text = self.processor.tokenizer.decode(text_ids, skip_special_tokens=False)
            turns.append(SampledTurn(token_ids=ids, text=text, truncated=truncated,
                                     log_probs=sampler_log_probs[index][:len(ids)] if sampler_log_probs is not None else None))
        return turns


def gradient_checkpointing_wanted(policy_config: PolicyConfig) -> bool:
    """policy.gradient_checkpointing, with null meaning on for every model but the embedded micro
    one (whose activations are a few MB and which the demo times on 2 CPU cores)."""
    setting = policy_config.gradient_checkpointing
    return policy_config.model != "micro" if setting is None else bool(setting)
