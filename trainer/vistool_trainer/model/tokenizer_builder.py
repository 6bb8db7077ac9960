"""A byte-level BPE tokenizer trained in-process on the task corpus, with Qwen2.5-VL's special tokens.

The real Qwen vocabulary (151k) makes a micro model 39M parameters and 35x slower on CPU
(docs/ARCHITECTURE.md), so the embedded micro policy gets a small vocabulary learned from the text it
will actually read and write. Training is deterministic for a given corpus. It must never reach
the network: nothing here downloads a vocabulary.
"""
from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from ..config import PolicyMicroConfig

# Qwen2.5-VL's control tokens, in Qwen's order, so the same chat template and processor work.
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
# Qwen keeps these as added but not special tokens: they survive decoding, so the env server
# sees the tags the model wrote.
TEXT_TAG_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<answer>", "</answer>"]


def train_micro_tokenizer(corpus: Iterable[str], vocab_size: int = PolicyMicroConfig.vocab_size) -> PreTrainedTokenizerFast:
    """Learn a byte-level BPE of `vocab_size` tokens (specials included) from `corpus`."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS + TEXT_TAG_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(list(corpus), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
        model_max_length=4096,
        padding_side="left",
    )
    return tokenizer
