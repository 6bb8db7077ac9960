"""What turns messages into model inputs: the tokenizer, the Qwen2-VL image processor, the template.

transformers' Qwen2_5_VLProcessor insists on a video processor, which needs torchvision; the
trainer never feeds video, so it holds the two parts it uses and saves them the standard way
(`tokenizer.save_pretrained` + `image_processor.save_pretrained`), which
AutoTokenizer/AutoImageProcessor and Qwen2_5_VLProcessor.from_pretrained both read back.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer, PreTrainedTokenizerBase
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

from .chat_template import TOOL_CHAT_TEMPLATE


@dataclass
class PolicyProcessor:
    tokenizer: PreTrainedTokenizerBase
    image_processor: Any

    @property
    def image_token_id(self) -> int:
        return int(self.tokenizer.convert_tokens_to_ids("<|image_pad|>"))

    @property
    def end_of_turn_id(self) -> int:
        return int(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.convert_tokens_to_ids("<|endoftext|>"))

    @property
    def control_token_ids(self) -> list[int]:
        """Tokens the policy must never write: vision placeholders and turn openers."""
        names = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|im_start|>", "<|endoftext|>"]
        # A name the tokenizer lacks maps to its unknown token; keep an id only if it maps back to the
        # name. (Not `id != unk_token_id`: Qwen2Tokenizer's unk_token defaults to <|endoftext|> when a
        # checkpoint does not set it to null, and that test then dropped <|endoftext|> itself.)
        ids = [(name, self.tokenizer.convert_tokens_to_ids(name)) for name in names]
        return [int(i) for name, i in ids if i is not None and self.tokenizer.convert_ids_to_tokens(int(i)) == name]

    @property
    def pixel_bounds(self) -> dict[str, int]:
        """{"min_pixels", "max_pixels"}: the bounds the image processor resizes every image into
        (its size's shortest_edge/longest_edge; from_pretrained sets them from the run config)."""
        return image_processor_pixel_bounds(self.image_processor)

    @property
    def merge_size(self) -> int:
        return int(getattr(self.image_processor, "merge_size", 2))

    def save_pretrained(self, directory: Path) -> None:
        self.tokenizer.save_pretrained(directory)
        self.image_processor.save_pretrained(directory)

    @classmethod
    def from_pretrained(cls, source: str | Path, min_pixels: int | None = None, max_pixels: int | None = None) -> "PolicyProcessor":
        tokenizer = AutoTokenizer.from_pretrained(source)
        # Qwen's own template drops images inside tool messages (TRL #5663): always use ours.
        tokenizer.chat_template = TOOL_CHAT_TEMPLATE
        image_processor = Qwen2VLImageProcessorPil.from_pretrained(source)
        if min_pixels is not None or max_pixels is not None:
            size = dict(image_processor.size)
            size["shortest_edge"] = min_pixels if min_pixels is not None else size["shortest_edge"]
            size["longest_edge"] = max_pixels if max_pixels is not None else size["longest_edge"]
            image_processor.size = size
        return cls(tokenizer=tokenizer, image_processor=image_processor)


def image_processor_pixel_bounds(image_processor: Any) -> dict[str, int]:
    """A Qwen2-VL image processor's {"min_pixels", "max_pixels"}: its size's shortest_edge and
    longest_edge (transformers keeps them there), else its min_pixels/max_pixels attributes."""
    size = getattr(image_processor, "size", None) or {}
    get = size.get if hasattr(size, "get") else (lambda key: getattr(size, key, None))
    low, high = get("shortest_edge"), get("longest_edge")
    if low is None or high is None:
        low, high = getattr(image_processor, "min_pixels", None), getattr(image_processor, "max_pixels", None)
    if low is None or high is None:
        raise ValueError(f"the image processor {type(image_processor).__name__} names no min/max pixels (size {dict(size) if size else size})")
    return {"min_pixels": int(low), "max_pixels": int(high)}
