"""What the trainer asks of the env server when it opens an episode, and how it takes the prompts
the server presents.

The presentation — the system turn (policy.system_prompt, chosen by the episode's tools switch),
the view of earlier images (policy.view), the observation words, the limits — is the env server's
(docs/CONTRACTS.md, Presentation). The trainer sends the run config's two keys as the episode-start
`presentation` block, as they are, and reads back `observation.prompt`: the conversation exactly
as the policy will read it. Nothing here writes or hides text a policy reads. The CLI's
`vistool eval` builds the same request from a run config (env/presentation/run-config.ts); a test
checks that the two agree.

Every episode also carries `pixel_bounds`: the min/max pixels of the policy's image processor,
which the env's crop tool reads boxes through (the image as the policy was shown it, env/tools/
README.md). From the processor itself when the caller has it (`episode_options(config, processor)`),
else from the run config as the processor is built from it (policy_pixel_bounds).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import EnvConfig, PolicyConfig, RunConfig, to_dict
from ..model.conversation import Conversation, Message, with_replies
from ..model.conversation_encoding import load_image_part
from ..model.policy_processor import PolicyProcessor
from ..model.qwen_fixture import QWEN_MAX_PIXELS, QWEN_MIN_PIXELS
from .env_client import EnvClient

# The band labels of a task's metadata: a policy copies them into its calls.
BAND_KEYS = ("columns_bbox", "rows_bbox", "x_values_bbox", "y_values_bbox")


@dataclass
class EpisodeOptions:
    tools: bool = EnvConfig.tools
    max_turns: int = EnvConfig.max_turns
    max_tool_calls: int = EnvConfig.max_tool_calls
    images: str = EnvConfig.images
    # The episode-start `presentation` block ({"system_prompt", "view"}); None: the env's own.
    presentation: dict[str, Any] | None = None
    # The counterfactual replay (rollouts/counterfactual.py): the server runs calls as usual but
    # shows the unedited image (`withhold_results`, docs/CONTRACTS.md).
    withhold_results: bool = False
    # The policy's image processor bounds, {"min_pixels", "max_pixels"} (docs/CONTRACTS.md); None:
    # the env's default (Qwen2.5-VL's processor).
    pixel_bounds: dict[str, int] | None = None

    def request(self, tools: bool | None = None, extra_turns: int = 0) -> dict[str, Any]:
        """The episode-start `options` (`tools` overrides the switch: one arm of a run with the
        other's presentation; `extra_turns` widens both limits, for replaying gold turns)."""
        options: dict[str, Any] = {"tools": self.tools if tools is None else tools, "max_turns": self.max_turns + extra_turns,
                                   # The server counts at least one call (env/presentation/run-config.ts does the same).
                                   "max_tool_calls": max(self.max_tool_calls, 1) + extra_turns, "images": self.images}
        if self.presentation is not None:
            options["presentation"] = self.presentation
        if self.withhold_results:
            options["withhold_results"] = True
        if self.pixel_bounds is not None:
            options["pixel_bounds"] = dict(self.pixel_bounds)
        return options


def presentation_of(policy: PolicyConfig) -> dict[str, Any]:
    """The run config's presentation block: policy.system_prompt and policy.view, key for key."""
    return {"system_prompt": to_dict(policy)["system_prompt"], "view": to_dict(policy.view)}


def policy_pixel_bounds(policy: PolicyConfig) -> dict[str, int]:
    """The bounds the run config gives the policy's image processor (model/policy.py builds it so):
    policy.micro's for the micro model, else policy.min_pixels/max_pixels, a null one Qwen2.5-VL's
    default (env/config/prompt-token-budget.ts `pixelBoundsOf` reads the config alike)."""
    if policy.model == "micro":
        return {"min_pixels": policy.micro.min_pixels, "max_pixels": policy.micro.max_pixels}
    return {"min_pixels": policy.min_pixels if policy.min_pixels is not None else QWEN_MIN_PIXELS,
            "max_pixels": policy.max_pixels if policy.max_pixels is not None else QWEN_MAX_PIXELS}


def episode_options(config: RunConfig, processor: PolicyProcessor | None = None) -> EpisodeOptions:
    """The run's episode options; `processor` (the policy's, when loaded) gives the pixel bounds it
    really resizes with (a hub model's own preprocessor_config where the run config leaves them null)."""
    env = config.env
    bounds = processor.pixel_bounds if processor is not None else policy_pixel_bounds(config.policy)
    return EpisodeOptions(tools=env.tools, max_turns=env.max_turns, max_tool_calls=env.max_tool_calls,
                          images=env.images, presentation=presentation_of(config.policy), pixel_bounds=bounds)


def load_images(messages: list[Message], loaded: dict[str, Any] | None = None, decode_files: bool = True) -> list[Message]:
    """Image parts with the image itself under "image" (PIL, loaded once per ref in `loaded`), so
    every later encode of the conversation reuses it; inline data is dropped once loaded.

    `decode_files` False: a part with a `path` stays as the server wrote it, and the encoder decodes
    the file when it encodes the conversation (ConversationEncoder._image, load_image_part). For
    conversations kept a long time (SFT's gold, trainers/sft.py): the file must outlive them. Inline
    data is still decoded here: it has no file to go back to."""
    loaded = {} if loaded is None else loaded
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                if part.get("type") == "image" and not (part.get("path") and not decode_files):
                    key = part.get("ref")
                    image = loaded.get(key) if key else None
                    if image is None:
                        image = load_image_part(part)
                        if key:
                            loaded[key] = image
                    part = {**part, "image": image}
                    part.pop("data", None)
                parts.append(part)
            message = {**message, "content": parts}
        out.append(message)
    return out


def opened_conversation(opened: dict[str, Any], loaded: dict[str, Any] | None = None, decode_files: bool = True) -> Conversation:
    """The conversation of an episode the server just started: its first prompt (`decode_files`: as load_images)."""
    presentation = opened.get("presentation") or {}
    if "prompt" not in opened.get("observation", {}):
        raise ValueError("the env server opened an episode without its prompt (observation.prompt): it predates the presentation "
                         "contract (docs/CONTRACTS.md); run this checkout's `vistool serve`")
    return Conversation(prompts=[load_images(opened["observation"]["prompt"], loaded, decode_files)],
                        prompts_only_grow=bool(presentation.get("prompts_only_grow", True)))


def continue_conversation(conversation: Conversation, reply: Message, step: dict[str, Any], loaded: dict[str, Any] | None = None,
                          decode_files: bool = True) -> None:
    """Adds the policy's `reply` and, while the episode goes on, the next prompt the server presents
    (`decode_files`: as load_images)."""
    conversation.replies.append(reply)
    if step.get("done"):
        return
    prompt = step.get("observation", {}).get("prompt")
    if prompt is None:
        raise ValueError("the env server answered a step without the next prompt (observation.prompt): it predates the presentation "
                         "contract (docs/CONTRACTS.md); run this checkout's `vistool serve`")
    conversation.prompts.append(with_replies(load_images(prompt, loaded, decode_files), conversation.replies))


def policy_corpus(client: EnvClient, tasks: list[dict[str, Any]], presentation: dict[str, Any] | None) -> list[str]:
    """Every text a policy of `tasks` reads or writes, as the env writes it: each task's user turn,
    its gold turns and its band labels, then the presentation's texts (the fixed observation words,
    the run's system turns). What the micro tokenizer learns from; the order is part of it."""
    corpus: list[str] = []
    for task, transcript in zip(tasks, client.gold(tasks), strict=True):
        corpus.append(transcript["user_text"])
        corpus.extend([*transcript["tool_turns"], transcript["answer"]])
        for key in BAND_KEYS:
            corpus.extend((task.get("meta") or {}).get(key, {}).keys())
    return corpus + client.presentation_texts(presentation)
