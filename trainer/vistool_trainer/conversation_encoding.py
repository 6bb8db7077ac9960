"""Messages → model inputs: token ids, the loss mask, pixel values, grid sizes, mm_token_type_ids.

Images expand to <|image_pad|> × (t·h·w / merge²) exactly as Qwen2_5_VLProcessor does, and
`mm_token_type_ids` marks them (1) — without it Qwen2.5-VL silently falls back to 1-D positions
for image tokens (REFERENCE §8). Observation tokens (system, user, tool) are never trained.
"""
from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from PIL import Image

from .chat_template import render_pieces
from .policy_processor import PolicyProcessor


@dataclass
class EncodedConversation:
    input_ids: list[int]
    loss_mask: list[int]
    pixel_values: torch.Tensor | None
    image_grid_thw: torch.Tensor | None


def load_image_part(part: dict[str, Any]) -> Image.Image:
    """The PIL image of a message part: `image` (already loaded), `path`, or inline base64 `data`."""
    if isinstance(part.get("image"), Image.Image):
        return part["image"]
    if part.get("path"):
        with Image.open(Path(part["path"])) as opened:
            return opened.convert("RGB")
    if part.get("data"):
        raw = part["data"]
        if raw.startswith("data:"):
            raw = raw.split(",", 1)[1]
        with Image.open(io.BytesIO(base64.b64decode(raw))) as opened:
            return opened.convert("RGB")
    raise ValueError(f"image part {part.get('ref', '?')} has neither a path nor inline data: start episodes with images 'path' (shared run dir) or 'inline'")


class ConversationEncoder:
    def __init__(self, processor: PolicyProcessor):
        self.processor = processor
        self._text_cache: dict[str, list[int]] = {}
        self._image_cache: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def _tokens(self, text: str) -> list[int]:
        cached = self._text_cache.get(text)
        if cached is None:
            cached = list(self.processor.tokenizer(text, add_special_tokens=False)["input_ids"])
            if len(self._text_cache) < 50_000:
                self._text_cache[text] = cached
        return cached

    def _image(self, part: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        key = part.get("ref") or part.get("path")
        if key and key in self._image_cache:
            return self._image_cache[key]
        features = self.processor.image_processor(images=[load_image_part(part)], return_tensors="pt")
        result = (features["pixel_values"], features["image_grid_thw"])
        if key and len(self._image_cache) < 20_000:
            self._image_cache[key] = result
        return result

    def encode(self, messages: list[dict[str, Any]], add_generation_prompt: bool) -> EncodedConversation:
        ids: list[int] = []
        mask: list[int] = []
        pixels: list[torch.Tensor] = []
        grids: list[torch.Tensor] = []
        merge = self.processor.merge_size
        for piece in render_pieces(messages, add_generation_prompt):
            if piece.kind == "image":
                values, grid = self._image(piece.image)
                count = int(grid[0].prod().item()) // (merge * merge)
                ids.extend([self.processor.image_token_id] * count)
                mask.extend([0] * count)
                pixels.append(values)
                grids.append(grid)
                continue
            piece_ids = piece.ids if piece.kind == "ids" and piece.ids is not None else self._tokens(piece.text)
            ids.extend(piece_ids)
            mask.extend([1 if piece.trained else 0] * len(piece_ids))
        return EncodedConversation(
            input_ids=ids,
            loss_mask=mask,
            pixel_values=torch.cat(pixels) if pixels else None,
            image_grid_thw=torch.cat(grids) if grids else None,
        )


def collate(batch: list[EncodedConversation], pad_id: int, image_token_id: int) -> dict[str, torch.Tensor]:
    """Left-padded batch (generation and training share it). Images concatenate in sample order."""
    length = max(len(item.input_ids) for item in batch)
    input_ids = torch.full((len(batch), length), pad_id, dtype=torch.long)
    attention = torch.zeros((len(batch), length), dtype=torch.long)
    loss_mask = torch.zeros((len(batch), length), dtype=torch.long)
    for row, item in enumerate(batch):
        start = length - len(item.input_ids)
        input_ids[row, start:] = torch.tensor(item.input_ids, dtype=torch.long)
        attention[row, start:] = 1
        loss_mask[row, start:] = torch.tensor(item.loss_mask, dtype=torch.long)
    inputs: dict[str, torch.Tensor] = {
        "input_ids": input_ids,
        "attention_mask": attention,
        "loss_mask": loss_mask,
        "mm_token_type_ids": (input_ids == image_token_id).long() * attention,
    }
    pixels = [item.pixel_values for item in batch if item.pixel_values is not None]
    grids = [item.image_grid_thw for item in batch if item.image_grid_thw is not None]
    if pixels:
        inputs["pixel_values"] = torch.cat(pixels)
        inputs["image_grid_thw"] = torch.cat(grids)
    return inputs
