"""The embedded default policy: a micro Qwen2.5-VL built deterministically from a small config.

It is the real architecture (transformers' Qwen2_5_VLForConditionalGeneration, Qwen2VL image
processor, the processor class), only tiny (docs/ARCHITECTURE.md: text hidden 128, 2 layers, 4 heads;
vision hidden 64, depth 2; ~0.7M parameters), with a byte-level BPE learned from the task corpus.
Saved with save_pretrained, so a checkpoint loads like any HF model. It never downloads weights.
"""
from __future__ import annotations

from pathlib import Path

import torch
from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

from ..config import PolicyMicroConfig
from .chat_template import TOOL_CHAT_TEMPLATE
from .policy_processor import PolicyProcessor
from .tokenizer_builder import train_micro_tokenizer

PATCH = 14
MERGE = 2


# The micro model's size is the run config's policy.micro section (config.py), one definition.
MicroSize = PolicyMicroConfig


def micro_config(size: MicroSize, tokenizer_vocab: int, token_ids: dict[str, int]) -> Qwen2_5_VLConfig:
    head_dim = size.text_hidden // size.text_heads
    # mrope splits the rotary half-dimension across (time, height, width) like Qwen's [16, 24, 24] of 64.
    half = head_dim // 2
    section_t = half // 4
    section_hw = (half - section_t) // 2
    mrope_section = [section_t, section_hw, half - section_t - section_hw]
    return Qwen2_5_VLConfig(
        text_config={
            "vocab_size": tokenizer_vocab,
            "hidden_size": size.text_hidden,
            "intermediate_size": size.text_intermediate,
            "num_hidden_layers": size.text_layers,
            "num_attention_heads": size.text_heads,
            "num_key_value_heads": size.text_kv_heads,
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": mrope_section},
            "bos_token_id": token_ids["<|endoftext|>"],
            "eos_token_id": token_ids["<|im_end|>"],
            "pad_token_id": token_ids["<|endoftext|>"],
        },
        vision_config={
            "depth": size.vision_depth,
            "hidden_size": size.vision_hidden,
            "intermediate_size": size.vision_intermediate,
            "num_heads": size.vision_heads,
            "patch_size": PATCH,
            "spatial_merge_size": MERGE,
            "temporal_patch_size": 2,
            "window_size": 112,
            "out_hidden_size": size.text_hidden,
            "fullatt_block_indexes": [size.vision_depth - 1],
        },
        image_token_id=token_ids["<|image_pad|>"],
        video_token_id=token_ids["<|video_pad|>"],
        vision_start_token_id=token_ids["<|vision_start|>"],
        vision_end_token_id=token_ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )


def seeded_model(config: Qwen2_5_VLConfig, seed: int) -> Qwen2_5_VLForConditionalGeneration:
    """A freshly initialised model whose weights depend on `seed` alone; the global generator is left as it was."""
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return Qwen2_5_VLForConditionalGeneration(config)
    finally:
        torch.random.set_rng_state(generator_state)


def build_micro_policy(corpus: list[str], size: MicroSize, seed: int) -> tuple[Qwen2_5_VLForConditionalGeneration, PolicyProcessor]:
    """Same corpus, size and seed give the same tokenizer and bit-identical weights."""
    tokenizer = train_micro_tokenizer(corpus, size.vocab_size)
    token_ids = {token: int(tokenizer.convert_tokens_to_ids(token)) for token in
                 ["<|endoftext|>", "<|im_end|>", "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>"]}
    config = micro_config(size, len(tokenizer), token_ids)
    model = seeded_model(config, seed)
    model.generation_config.eos_token_id = token_ids["<|im_end|>"]
    model.generation_config.pad_token_id = token_ids["<|endoftext|>"]
    image_processor = Qwen2VLImageProcessorPil(
        min_pixels=size.min_pixels, max_pixels=size.max_pixels, patch_size=PATCH, merge_size=MERGE, temporal_patch_size=2
    )
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    return model, PolicyProcessor(tokenizer=tokenizer, image_processor=image_processor)


def parameter_count(model: torch.nn.Module) -> int:
    return sum(parameter.numel() for parameter in model.parameters())


def save_policy(model: torch.nn.Module, processor: PolicyProcessor, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
