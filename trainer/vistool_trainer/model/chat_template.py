"""The tool-capable chat template, and the same rendering in Python, piece by piece.

The Jinja template is saved with every processor so checkpoints render like any HF model. The
Python renderer produces the same text split into pieces that say which tokens the policy wrote
(trained) and which the environment wrote (observations, masked from the loss). A test checks
the two agree. Roles other than system/user/assistant/tool are errors: never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOOL_CHAT_TEMPLATE = (Path(__file__).parent / "tool_chat_template.jinja").read_text()


@dataclass
class Piece:
    """Text (or an image slot) in a rendered conversation; `trained` marks policy-written tokens."""

    kind: str  # "text" | "image" | "ids"
    text: str = ""
    image: Any = None
    ids: list[int] | None = None
    trained: bool = False


def _content_pieces(content: Any, trained: bool) -> list[Piece]:
    if isinstance(content, str):
        return [Piece("text", content, trained=trained)]
    pieces: list[Piece] = []
    for part in content:
        if part.get("type") == "image":
            pieces.append(Piece("text", "<|vision_start|>"))
            pieces.append(Piece("image", image=part))
            pieces.append(Piece("text", "<|vision_end|>"))
        elif part.get("type") == "text":
            pieces.append(Piece("text", part.get("text", ""), trained=trained))
        else:
            raise ValueError(f"message part of type {part.get('type')!r} is not supported: use 'text' or 'image'")
    return pieces


def render_pieces(messages: list[dict[str, Any]], add_generation_prompt: bool, trained_turns: set[int] | None = None) -> list[Piece]:
    """Pieces whose concatenated text (images as <|image_pad|>) equals the Jinja template's output.

    An assistant message may carry `token_ids` (what the policy sampled, ending in <|im_end|>):
    those ids are used as they are, so the training context is exactly the rollout context.
    `trained_turns` (message indexes) limits which assistant messages are trained; None: all.
    """
    pieces: list[Piece] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        previous = messages[index - 1]["role"] if index > 0 else None
        following = messages[index + 1]["role"] if index + 1 < len(messages) else None
        if role == "tool":
            if previous != "tool":
                pieces.append(Piece("text", "<|im_start|>user\n"))
            pieces.append(Piece("text", "<tool_response>\n"))
            pieces.extend(_content_pieces(message["content"], trained=False))
            pieces.append(Piece("text", "\n</tool_response>"))
            pieces.append(Piece("text", "<|im_end|>\n" if following != "tool" else "\n"))
        elif role == "assistant":
            trained = trained_turns is None or index in trained_turns
            pieces.append(Piece("text", "<|im_start|>assistant\n"))
            if message.get("token_ids") is not None:
                pieces.append(Piece("ids", ids=list(message["token_ids"]), trained=trained))
            else:
                pieces.extend(_content_pieces(message["content"], trained=trained))
                pieces.append(Piece("text", "<|im_end|>", trained=trained))
            pieces.append(Piece("text", "\n"))
        elif role in ("system", "user"):
            pieces.append(Piece("text", f"<|im_start|>{role}\n"))
            pieces.extend(_content_pieces(message["content"], trained=False))
            pieces.append(Piece("text", "<|im_end|>\n"))
        else:
            raise ValueError(f"message {index} has role {role!r}: expected system, user, assistant or tool")
    if add_generation_prompt:
        pieces.append(Piece("text", "<|im_start|>assistant\n"))
    return pieces


def pieces_as_text(pieces: list[Piece]) -> str:
    return "".join("<|image_pad|>" if piece.kind == "image" else piece.text for piece in pieces)
