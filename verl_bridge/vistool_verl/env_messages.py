"""The env server's chat messages → the messages veRL's token builder renders.

The server sends content parts {"type": "text"} and {"type": "image", "ref", "path", ...}; veRL's
VL builder wants each image part to carry the image itself under "image". The ref stays in the
part, so a rollout record can name the image without holding its pixels. Images load as the
trainer loads them (`load_image_part`: a shared path or inline data).
"""
from __future__ import annotations

from typing import Any

from PIL import Image

from vistool_trainer.model.conversation_encoding import load_image_part


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
                    image = load_image_part(part)
                    images.append(image)
                    parts.append({"type": "image", "image": image, "ref": part.get("ref")})
                else:
                    parts.append({"type": "text", "text": str(part.get("text", ""))})
            message = {**{k: v for k, v in message.items() if k != "content"}, "content": parts}
        converted.append(message)
    return converted, images
