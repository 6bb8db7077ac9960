"""Messages → model inputs: token ids, the loss mask, pixel values, grid sizes, mm_token_type_ids.

Only tokenisation and the chat template live here: the messages are the env server's, already as
the policy reads them (docs/CONTRACTS.md, Presentation), and this module never adds, hides or
rewords any of them. Images expand to <|image_pad|> × (t·h·w / merge²) exactly as
Qwen2_5_VLProcessor does, and `mm_token_type_ids` marks them (1) — without it Qwen2.5-VL silently
falls back to 1-D positions for image tokens (docs/ARCHITECTURE.md). Observation tokens (system,
user, tool) are never trained.
"""
from __future__ import annotations

import base64
import io
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from PIL import Image

from .chat_template import render_pieces
from .conversation import Conversation, without_images
from .policy_processor import PolicyProcessor


@dataclass
class EncodedConversation:
    input_ids: list[int]
    loss_mask: list[int]
    pixel_values: torch.Tensor | None
    image_grid_thw: torch.Tensor | None
    # One key per image, in order (the content hash `ref`, else the path): equal keys are equal
    # pixels, so a batch runs the vision tower once per distinct image.
    image_keys: list[str] = field(default_factory=list)


def load_image_part(part: dict[str, Any]) -> Image.Image:
    """The PIL image of a message part: `image` (already loaded), `path`, or inline base64 `data`."""
    if isinstance(part.get("image"), Image.Image):
        return part["image"]
    if part.get("path"):
        path = Path(part["path"])
        if not path.is_file():
            # SFT's gold conversations keep only the path and decode it at each encode (trainers/sft.py).
            raise FileNotFoundError(f"image part {part.get('ref', '?')}: its file {path} is gone; a conversation that names an image by path "
                                    "needs the env server's images folder (--images-dir) for as long as it is encoded")
        with Image.open(path) as opened:
            return opened.convert("RGB")
    if part.get("data"):
        raw = part["data"]
        if raw.startswith("data:"):
            raw = raw.split(",", 1)[1]
        with Image.open(io.BytesIO(base64.b64decode(raw))) as opened:
            return opened.convert("RGB")
    raise ValueError(f"image part {part.get('ref', '?')} has neither a path nor inline data: start episodes with images 'path' (shared run dir) or 'inline'")


def is_tool_call_turn(message: dict[str, Any]) -> bool:
    """Whether an assistant message writes a tool call (the gold turns are hermes `<tool_call>`s)."""
    return message.get("role") == "assistant" and any(
        "<tool_call>" in part.get("text", "") for part in message.get("content", []) if isinstance(part, dict))


class ConversationEncoder:
    # Preprocessed images are kept (an image is re-encoded every turn of its episode and every step
    # its SFT conversation is drawn) up to this many bytes, least recently used first out: RL makes a
    # new edited image per tool call, so an unbounded cache grows with the run.
    IMAGE_CACHE_BYTES = 256 * 2**20

    def __init__(self, processor: PolicyProcessor):
        self.processor = processor
        self._text_cache: dict[str, list[int]] = {}
        self._image_cache: OrderedDict[str, tuple[torch.Tensor, torch.Tensor]] = OrderedDict()
        self._image_cache_bytes = 0

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
            self._image_cache.move_to_end(key)
            return self._image_cache[key]
        features = self.processor.image_processor(images=[load_image_part(part)], return_tensors="pt")
        result = (features["pixel_values"], features["image_grid_thw"])
        if key:
            self._image_cache[key] = result
            self._image_cache_bytes += result[0].numel() * result[0].element_size()
            while self._image_cache_bytes > self.IMAGE_CACHE_BYTES and len(self._image_cache) > 1:
                _, (pixels, _) = self._image_cache.popitem(last=False)
                self._image_cache_bytes -= pixels.numel() * pixels.element_size()
        return result

    def after_tool_segments(self, conversation: Conversation) -> list[EncodedConversation]:
        """The training sequences with only the assistant turns that follow a tool result trained
        (the answer after an edited image); [] when no turn does (a direct answer)."""
        after_tool = [(prompt, reply) for prompt, reply in conversation.turns() if prompt and prompt[-1].get("role") == "tool"]
        if not after_tool:
            return []
        if conversation.prompts_only_grow:
            messages = conversation.messages
            trained = {index for index, message in enumerate(messages)
                       if message.get("role") == "assistant" and index > 0 and messages[index - 1].get("role") == "tool"}
            return [self.encode(messages, add_generation_prompt=False, trained_turns=trained)]
        return [self.encode(prompt + [reply], add_generation_prompt=False, trained_turns={len(prompt)}) for prompt, reply in after_tool]

    def call_segments_without_images(self, conversation: Conversation) -> list[EncodedConversation]:
        """One sequence per assistant turn that calls a tool: its prompt with every image left out
        (IMAGE_LEFT_OUT in its place), only that turn trained; [] when no turn calls.
        A call copies its arguments from the question, and a small model learns that copy far
        faster with no image tokens in its context (docs/DEMO.md)."""
        return [self.encode(without_images(prompt + [reply]), add_generation_prompt=False, trained_turns={len(prompt)})
                for prompt, reply in conversation.turns() if is_tool_call_turn(reply)]

    def training_segments(self, conversation: Conversation) -> list[EncodedConversation]:
        """The sequences a conversation is trained as, each in the context its turns were written in.

        While every prompt is the previous one plus the reply and the new observation, a turn's
        context is the conversation before it, so the whole conversation is one sequence with every
        assistant turn trained. When the env's view hides earlier images, each turn read a
        different past (the chart is visible when the tool call is written, gone when the answer
        is): each assistant turn is then its own sequence — its prompt, with only that turn trained."""
        if conversation.prompts_only_grow:
            return [self.encode(conversation.messages, add_generation_prompt=False)]
        return [self.encode(prompt + [reply], add_generation_prompt=False, trained_turns={len(prompt)}) for prompt, reply in conversation.turns()]

    def encode(self, messages: list[dict[str, Any]], add_generation_prompt: bool, trained_turns: set[int] | None = None) -> EncodedConversation:
        ids: list[int] = []
        mask: list[int] = []
        pixels: list[torch.Tensor] = []
        grids: list[torch.Tensor] = []
        keys: list[str] = []
        merge = self.processor.merge_size
        for piece in render_pieces(messages, add_generation_prompt, trained_turns):
            if piece.kind == "image":
                values, grid = self._image(piece.image)
                keys.append(str(piece.image.get("ref") or piece.image.get("path") or f"anonymous-{id(piece.image)}"))
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
            # One image: the cached tensor itself, not a copy (SFT keeps thousands of encodings).
            pixel_values=(pixels[0] if len(pixels) == 1 else torch.cat(pixels)) if pixels else None,
            image_grid_thw=torch.cat(grids) if grids else None,
            image_keys=keys,
        )


def collate(batch: list[EncodedConversation], pad_id: int, image_token_id: int) -> dict[str, torch.Tensor]:
    """Left-padded batch (generation and training share it).

    Images are deduplicated by key: `pixel_values` / `unique_grid_thw` hold each distinct image
    once, `image_index[k]` names the distinct image behind the k-th image slot (sample order),
    and `image_grid_thw` is per slot (what the rope index reads). A GRPO group shares its first
    image, and identical tool calls produce identical images, so this cuts vision work a lot.
    """
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
    unique: dict[str, int] = {}
    unique_pixels: list[torch.Tensor] = []
    unique_grids: list[torch.Tensor] = []
    slot_grids: list[torch.Tensor] = []
    index: list[int] = []
    for item in batch:
        if item.pixel_values is None or item.image_grid_thw is None:
            continue
        offsets = [0] + item.image_grid_thw.prod(-1).cumsum(0).tolist()
        for k, key in enumerate(item.image_keys):
            grid = item.image_grid_thw[k:k + 1]
            if key not in unique:
                unique[key] = len(unique_pixels)
                unique_pixels.append(item.pixel_values[offsets[k]:offsets[k + 1]])
                unique_grids.append(grid)
            index.append(unique[key])
            slot_grids.append(grid)
    if unique_pixels:
        inputs["pixel_values"] = torch.cat(unique_pixels)
        inputs["unique_grid_thw"] = torch.cat(unique_grids)
        inputs["image_grid_thw"] = torch.cat(slot_grids)
        inputs["image_index"] = torch.tensor(index, dtype=torch.long)
    return inputs


def expand_images(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The plain transformers form of a collated batch: one pixel block per image slot."""
    plain = {key: value for key, value in inputs.items() if key not in ("unique_grid_thw", "image_index", "loss_mask")}
    if "image_index" in inputs:
        sizes = inputs["unique_grid_thw"].prod(-1).tolist()
        blocks = torch.split(inputs["pixel_values"], sizes)
        plain["pixel_values"] = torch.cat([blocks[i] for i in inputs["image_index"].tolist()])
    return plain
