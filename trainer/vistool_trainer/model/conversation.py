"""An episode as its policy read and wrote it: before each of its turns, the prompt the env server
presented, and the turn. The env renders every prompt (its presentation: the system turn, the view
of earlier images; docs/CONTRACTS.md), so this module only keeps them; it never writes or hides
anything a policy reads.

The sequences a conversation is trained as follow from it (conversation_encoding.py): while each
prompt is the one before it plus the reply and the new observation (the env says so:
`prompts_only_grow`), the whole conversation is one sequence; once the view hides earlier images,
each turn is trained in its own prompt, exactly the context it was written in.

`without_images` is a training device, not a presentation: SFT trains tool calls with the images
of their context left out (docs/DEMO.md), a sequence no episode ever shows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]

# What stands for an image in a sequence trained without its images (sft.calls_without_images_steps).
IMAGE_LEFT_OUT = "(image)"


@dataclass
class Conversation:
    # prompts[k]: what the policy read before writing replies[k] (its earlier replies inside it as it wrote them).
    prompts: list[list[Message]] = field(default_factory=list)
    replies: list[Message] = field(default_factory=list)
    # The env's word that no prompt changes what an earlier one showed (presentation.prompts_only_grow).
    prompts_only_grow: bool = True

    @property
    def prompt(self) -> list[Message]:
        """What the policy reads before its next turn."""
        return self.prompts[-1]

    @property
    def messages(self) -> list[Message]:
        """The conversation as its last turn saw it: the last prompt and, once written, the last reply."""
        last = self.prompts[-1]
        return last + [self.replies[-1]] if len(self.replies) == len(self.prompts) else list(last)

    def turns(self) -> list[tuple[list[Message], Message]]:
        """(prompt, reply) for each turn written."""
        return list(zip(self.prompts, self.replies))

    @classmethod
    def from_messages(cls, messages: list[Message]) -> "Conversation":
        """A conversation whose prompts only grow, from its whole list of messages: each assistant
        message is a reply, and its prompt is every message before it."""
        replies = [index for index, message in enumerate(messages) if message.get("role") == "assistant"]
        prompts = [messages[:index] for index in replies]
        if not replies or replies[-1] != len(messages) - 1:
            prompts.append(list(messages))
        return cls(prompts=prompts, replies=[messages[index] for index in replies])


def with_replies(prompt: list[Message], replies: list[Message]) -> list[Message]:
    """The env's prompt with its assistant messages replaced by the replies as the policy wrote them
    (their sampled token ids), in order. The env echoes each reply's text; a prompt whose assistant
    texts are not the replies' is an error, never guessed around."""
    assistants = [index for index, message in enumerate(prompt) if message.get("role") == "assistant"]
    if len(assistants) != len(replies):
        raise ValueError(f"the env server's prompt holds {len(assistants)} assistant turns, but {len(replies)} were written")
    merged = list(prompt)
    for index, reply in zip(assistants, replies):
        if _text(prompt[index]) != _text(reply):
            raise ValueError(f"the env server's prompt holds another text for assistant turn {assistants.index(index)} "
                             f"than the policy wrote ({_text(prompt[index])[:80]!r} vs {_text(reply)[:80]!r})")
        merged[index] = reply
    return merged


def _text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict) and part.get("type") == "text")


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image"


def without_images(messages: list[Message]) -> list[Message]:
    """`messages` with every image part replaced by IMAGE_LEFT_OUT (a new list)."""
    return [{**message, "content": [{"type": "text", "text": IMAGE_LEFT_OUT} if _is_image(part) else part for part in message["content"]]}
            if isinstance(message.get("content"), list) else message for message in messages]
