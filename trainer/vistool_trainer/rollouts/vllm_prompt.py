"""A conversation as vLLM must receive it: the trainer encoder's token ids with each image's
run of <|image_pad|> collapsed to one pad, and the images themselves, in order.

vLLM expands every <|image_pad|> it is given into a whole run (one per merged patch), so ids
whose runs are already expanded get expanded again and the model reads a longer, different
prompt (docs/VLLM.md). Collapsed, vLLM's expansion gives back exactly the encoder's ids, which
the sampler checks on every request: the context a turn is sampled in must be the context the
trainer scores it in. Nothing here imports vLLM.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PIL import Image

from ..model.chat_template import render_pieces
from ..model.conversation_encoding import ConversationEncoder, load_image_part


@dataclass
class VllmPrompt:
    # The encoder's ids, image runs expanded: what vLLM's prompt_token_ids must equal.
    expected_ids: list[int]
    # What vLLM is given: one <|image_pad|> per image.
    collapsed_ids: list[int]
    images: list[Image.Image]


def collapse_image_runs(ids: list[int], image_token_id: int) -> tuple[list[int], int]:
    """(ids with every run of `image_token_id` reduced to one, the number of runs)."""
    collapsed: list[int] = []
    runs = 0
    for index, token in enumerate(ids):
        if token == image_token_id:
            if index > 0 and ids[index - 1] == image_token_id:
                continue
            runs += 1
        collapsed.append(token)
    return collapsed, runs


def vllm_prompt(encoder: ConversationEncoder, messages: list[dict[str, Any]]) -> VllmPrompt:
    """The next assistant turn's prompt for `messages` (the prompt the env server presented:
    its image view is already applied)."""
    encoded = encoder.encode(messages, add_generation_prompt=True)
    images = [load_image_part(piece.image) for piece in render_pieces(messages, True) if piece.kind == "image"]
    collapsed, runs = collapse_image_runs(encoded.input_ids, encoder.processor.image_token_id)
    if runs != len(images):
        # Two images with nothing between them would merge into one run; the chat template always
        # wraps an image in <|vision_start|>…<|vision_end|>, so this means the template changed.
        raise ValueError(f"the encoded prompt has {runs} image-token runs for {len(images)} images: "
                         "each image must be wrapped in <|vision_start|>…<|vision_end|> (model/chat_template.py)")
    return VllmPrompt(expected_ids=encoded.input_ids, collapsed_ids=collapsed, images=images)
