"""What the model reads of a conversation: `policy.view` in the run config.

The env sends every message with every image; a policy may read less. `latest_images: N` keeps
the newest N images and writes EARLIER_IMAGE in place of each older one (agents that look at many
screenshots keep the last few, for the same reason: the newest image is the one that matters, and
the others cost tokens and attention). `images_first` puts a message's images before its text
(for a tool result: the edited image, then what was done — DeepEyes' order), so the words after
the image are there to be read in its light.

The view is applied in the encoder, to sampling and training alike, so the training context stays
the rollout context. The env's messages, the trajectories and the rollout records keep everything.
The demo reads everything (the default); docs/DEMO.md has what the view changed when we tried it
on the micro model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import PolicyViewConfig

EARLIER_IMAGE = "(earlier image)"
# What stands for an image in a sequence trained without its images (sft.calls_without_images_steps).
IMAGE_LEFT_OUT = "(image)"


@dataclass(frozen=True)
class ContextView:
    latest_images: int | None = None
    images_first: bool = False

    @classmethod
    def from_config(cls, view: PolicyViewConfig | None) -> "ContextView":
        view = view or PolicyViewConfig()
        latest = view.latest_images
        if latest is not None and (not isinstance(latest, int) or latest < 1):
            raise ValueError(f"policy.view.latest_images must be a whole number ≥ 1 or null; got {latest!r}")
        return cls(latest_images=latest, images_first=bool(view.images_first))

    @property
    def is_identity(self) -> bool:
        return self.latest_images is None and not self.images_first


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image"


def apply_view(messages: list[dict[str, Any]], view: ContextView) -> list[dict[str, Any]]:
    """`messages` as the model reads them under `view` (a new list; the input is not changed)."""
    if view.is_identity:
        return messages
    total = sum(1 for message in messages if isinstance(message.get("content"), list) for part in message["content"] if _is_image(part))
    dropped = total - view.latest_images if view.latest_images is not None else 0
    seen = 0
    shown: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            shown.append(message)
            continue
        parts = []
        for part in content:
            if _is_image(part):
                seen += 1
                if seen <= dropped:
                    part = {"type": "text", "text": EARLIER_IMAGE}
            parts.append(part)
        if view.images_first:
            parts = [part for part in parts if _is_image(part)] + [part for part in parts if not _is_image(part)]
        shown.append({**message, "content": parts})
    return shown


def without_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with every image part replaced by IMAGE_LEFT_OUT (a new list)."""
    return [{**message, "content": [{"type": "text", "text": IMAGE_LEFT_OUT} if _is_image(part) else part for part in message["content"]]}
            if isinstance(message.get("content"), list) else message for message in messages]
