"""The env server's chat messages → the messages veRL's token builder renders.

The server sends content parts {"type": "text"} and {"type": "image", "ref", "path", ...}; veRL's
VL builder wants each image part to carry the image itself under "image". The ref stays in the
part, so a rollout record can name the image without holding its pixels.
"""
from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from PIL import Image


def load_image(part: dict[str, Any]) -> Image.Image:
    if part.get("data"):
        return Image.open(io.BytesIO(base64.b64decode(part["data"]))).convert("RGB")
    path = part.get("path")
    if not path:
        raise ValueError(f"an image part from the env server has neither a path nor inline data: {sorted(part)}")
    with Image.open(Path(path)) as image:
        return image.convert("RGB")


def to_verl_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Image.Image]]:
    """The messages with their images loaded, and the images in the order they appear."""
    converted: list[dict[str, Any]] = []
    images: list[Image.Image] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                if part.get("type") == "image":
                    image = load_image(part)
                    images.append(image)
                    parts.append({"type": "image", "image": image, "ref": part.get("ref")})
                else:
                    parts.append({"type": "text", "text": str(part.get("text", ""))})
            message = {**{k: v for k, v in message.items() if k != "content"}, "content": parts}
        converted.append(message)
    return converted, images
