"""Randomly initialised Qwen2.5-VL policies at a real model's dimensions, built from an explicit
config (nothing is downloaded): what the memory bench (bench/trainer_memory.py) and the GPU check
(scripts/gpu/check.sh) measure when no weights can be fetched.

The dimensions are those of Qwen/Qwen2.5-VL-3B-Instruct and -7B-Instruct's config.json (text:
hidden, MLP width, layers, heads, KV heads, vocabulary, tied embeddings; vision: the 32-block
ViT of width 1280 both share). Memory and speed depend on these shapes, not on the weights'
values, so a random model of the same shape measures what the real one costs; its outputs are
noise, which is what a non-confident model is for.

Weights are allocated empty (parameters on the meta device, in the compute dtype, then `to_empty`
on the target device, so a 3B model never exists on the CPU first), then drawn N(0, 0.02) with
norms at 1 and biases at 0; buffers (rotary frequencies) are computed on the CPU in fp32 as usual
and copied over, kept in fp32 as from_pretrained keeps them. The tokenizer is
the micro model's (byte-level BPE trained on a small corpus): its special tokens are the ones the
config names, and every id it produces is valid in the larger vocabulary.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from .micro_model import MERGE, PATCH
from .policy_processor import PolicyProcessor
from .tokenizer_builder import train_micro_tokenizer


@dataclass(frozen=True)
class QwenVlSize:
    """A Qwen2.5-VL shape: the text decoder and the vision tower."""

    name: str
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    tie_embeddings: bool
    vision_hidden: int = 1280
    vision_intermediate: int = 3420
    vision_depth: int = 32
    vision_heads: int = 16
    vision_full_attention: tuple[int, ...] = (7, 15, 23, 31)
    mrope_section: tuple[int, int, int] = field(default=(16, 24, 24))

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def scaled(self, name: str, **changes: Any) -> "QwenVlSize":
        return replace(self, name=name, **changes)


QWEN2_5_VL_3B = QwenVlSize("qwen2.5-vl-3b", hidden=2048, intermediate=11008, layers=36, heads=16, kv_heads=2, vocab=151936, tie_embeddings=True)
QWEN2_5_VL_7B = QwenVlSize("qwen2.5-vl-7b", hidden=3584, intermediate=18944, layers=28, heads=28, kv_heads=4, vocab=152064, tie_embeddings=False)
# The CPU dry run of the GPU check: the same code at a size a CPU runs in seconds.
TINY = QwenVlSize("tiny", hidden=64, intermediate=160, layers=2, heads=4, kv_heads=2, vocab=4096, tie_embeddings=True,
                  vision_hidden=32, vision_intermediate=64, vision_depth=2, vision_heads=2, vision_full_attention=(1,),
                  mrope_section=(2, 3, 3))
SIZES = {size.name: size for size in (QWEN2_5_VL_3B, QWEN2_5_VL_7B, TINY)}

TOKENIZER_CORPUS = ["Question: Is the revenue of D low, medium or high?", "<answer>low</answer>", "<answer>medium</answer>",
                    '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["D"]}}</tool_call>',
                    "OBSERVATION: The edited image follows."] * 20


def qwen_vl_config(size: QwenVlSize, token_ids: dict[str, int]) -> Any:
    from transformers import Qwen2_5_VLConfig

    return Qwen2_5_VLConfig(
        text_config={
            "vocab_size": size.vocab, "hidden_size": size.hidden, "intermediate_size": size.intermediate,
            "num_hidden_layers": size.layers, "num_attention_heads": size.heads, "num_key_value_heads": size.kv_heads,
            "max_position_embeddings": 128000, "rms_norm_eps": 1e-6,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": list(size.mrope_section)},
            "bos_token_id": token_ids["<|endoftext|>"], "eos_token_id": token_ids["<|im_end|>"], "pad_token_id": token_ids["<|endoftext|>"],
        },
        vision_config={
            "depth": size.vision_depth, "hidden_size": size.vision_hidden, "intermediate_size": size.vision_intermediate,
            "num_heads": size.vision_heads, "patch_size": PATCH, "spatial_merge_size": MERGE, "temporal_patch_size": 2,
            "window_size": 112, "out_hidden_size": size.hidden, "fullatt_block_indexes": list(size.vision_full_attention),
            "tokens_per_second": 2,
        },
        image_token_id=token_ids["<|image_pad|>"], video_token_id=token_ids["<|video_pad|>"],
        vision_start_token_id=token_ids["<|vision_start|>"], vision_end_token_id=token_ids["<|vision_end|>"],
        tie_word_embeddings=size.tie_embeddings,
    )


def random_processor(min_pixels: int = 3136, max_pixels: int = 401408) -> PolicyProcessor:
    """The micro tokenizer (special tokens and chat template included) and a Qwen2-VL image processor."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from .chat_template import TOOL_CHAT_TEMPLATE

    tokenizer = train_micro_tokenizer(TOKENIZER_CORPUS, 512)
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    image_processor = Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels, patch_size=PATCH, merge_size=MERGE,
                                               temporal_patch_size=2)
    return PolicyProcessor(tokenizer=tokenizer, image_processor=image_processor)


@torch.no_grad()
def build_random_model(size: QwenVlSize, processor: PolicyProcessor, device: torch.device | str, dtype: torch.dtype,
                       seed: int = 0) -> Any:
    """A Qwen2_5_VLForConditionalGeneration of `size`, random weights, on `device` in `dtype`."""
    from accelerate import init_empty_weights
    from transformers import Qwen2_5_VLForConditionalGeneration

    tokenizer = processor.tokenizer
    token_ids = {token: int(tokenizer.convert_tokens_to_ids(token)) for token in
                 ["<|endoftext|>", "<|im_end|>", "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>"]}
    config = qwen_vl_config(size, token_ids)
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # parameters are created (on meta) in the compute dtype: no fp32 copy ever exists
    try:
        with init_empty_weights(include_buffers=False):
            model = Qwen2_5_VLForConditionalGeneration(config)
    finally:
        torch.set_default_dtype(default_dtype)
    buffers = {name: buffer.clone() for name, buffer in model.named_buffers()}
    model = model.to_empty(device=device)
    for name, buffer in model.named_buffers():
        buffer.copy_(buffers[name].to(device=buffer.device, dtype=buffer.dtype))
    generator = torch.Generator(device=device).manual_seed(seed)
    for name, parameter in model.named_parameters():
        if parameter.dim() == 1:
            # In Qwen2.5-VL every 1-D weight is a norm's scale; biases start at zero.
            parameter.fill_(1.0 if name.endswith("weight") else 0.0)
        else:
            parameter.normal_(0.0, 0.02, generator=generator)
    if size.tie_embeddings:
        model.tie_weights()
    model.generation_config.eos_token_id = token_ids["<|im_end|>"]
    model.generation_config.pad_token_id = token_ids["<|endoftext|>"]
    return model


def random_policy(size: QwenVlSize, device: str = "cpu", dtype: torch.dtype = torch.bfloat16, seed: int = 0,
                  gradient_checkpointing: bool = False) -> Any:
    """A Policy (the trainer's own wrapper: encoder, sampling, scoring) around a random model of `size`."""
    from .policy import Policy, pick_device

    processor = random_processor()
    target = pick_device(device)
    model = build_random_model(size, processor, target, dtype, seed)
    policy = Policy(model, processor, target)
    policy.set_gradient_checkpointing(gradient_checkpointing)
    return policy


def size_parameter_counts(size: QwenVlSize) -> dict[str, int]:
    """parameter_counts of a model of `size`, built on the meta device (no memory, a second)."""
    from accelerate import init_empty_weights
    from transformers import Qwen2_5_VLForConditionalGeneration

    tokenizer = random_processor().tokenizer
    token_ids = {token: int(tokenizer.convert_tokens_to_ids(token)) for token in
                 ["<|endoftext|>", "<|im_end|>", "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>"]}
    with init_empty_weights():
        model = Qwen2_5_VLForConditionalGeneration(qwen_vl_config(size, token_ids))
    if size.tie_embeddings:
        model.tie_weights()
    return parameter_counts(model)


def parameter_counts(model: torch.nn.Module) -> dict[str, int]:
    """Parameters of the text decoder layers, the vision tower, and the rest (embeddings, head, final norm)."""
    core = model
    while hasattr(core, "get_base_model"):
        core = core.get_base_model()
    seen: set[int] = set()
    counts = {"text_layers": 0, "vision": 0, "other": 0}
    for name, parameter in core.named_parameters():
        if id(parameter) in seen:
            continue
        seen.add(id(parameter))
        key = "vision" if ".visual." in f".{name}" else "text_layers" if ".layers." in name else "other"
        counts[key] += parameter.numel()
    counts["total"] = sum(counts.values())
    return counts


def synthetic_conversations(policy: Any, rows: int, length: int, image_tokens: int, seed: int) -> list[Any]:
    """`rows` conversations of `length` tokens: an image of `image_tokens` merged tokens, then text,
    the last 40 % policy-written (trained). Random ids and pixels: the shapes are what costs."""
    from .conversation_encoding import EncodedConversation

    tokenizer = policy.processor.tokenizer
    start, end = tokenizer.convert_tokens_to_ids("<|vision_start|>"), tokenizer.convert_tokens_to_ids("<|vision_end|>")
    side = int(math.isqrt(image_tokens)) * 2
    if (side // 2) ** 2 != image_tokens:
        raise ValueError(f"image_tokens must be a square number (a square image), got {image_tokens}")
    generator = torch.Generator().manual_seed(seed)
    special = set(policy.processor.control_token_ids) | {policy.processor.end_of_turn_id}
    text_pool = torch.tensor([i for i in range(40, 480) if i not in special])
    out = []
    for row in range(rows):
        text = length - image_tokens - 2
        ids = [start] + [policy.processor.image_token_id] * image_tokens + [end]
        ids += text_pool[torch.randint(len(text_pool), (text,), generator=generator)].tolist()
        trained = int(length * 0.4)
        mask = [0] * (length - trained) + [1] * trained
        pixels = torch.randn((side * side, 3 * 2 * 14 * 14), generator=generator)
        out.append(EncodedConversation(input_ids=ids, loss_mask=mask, pixel_values=pixels,
                                       image_grid_thw=torch.tensor([[1, side, side]]), image_keys=[f"synthetic-{seed}-{row}"]))
    return out
