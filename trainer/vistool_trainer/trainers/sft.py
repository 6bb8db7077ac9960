"""SFT warm-up on the generator's gold trajectories.

Each task's `gold` tool calls are replayed through the env server as the text a good policy
would write (hermes `<tool_call>` JSON, then `<answer>`), so the prompts, observations and edited
images are exactly what RL will show (the server presents them: docs/CONTRACTS.md). The loss covers assistant tokens only. A plain loop rather than
TRL's SFTTrainer: the inputs are multi-image conversations with per-token masks that the
encoder already builds, and at this size the loop is a few lines (measured step times in the report).
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from ..algorithms.micro_batches import MicroBatching
from ..algorithms.sft_schedule import SftSchedule
from ..config import SftConfig
from ..engines.distributed import Distributed
from ..engines.training_engine import TrainingEngine
from ..model.conversation import Conversation
from ..model.conversation_encoding import EncodedConversation
from ..model.policy import Policy
from ..rollouts.env_client import EnvClient
from ..rollouts.presentation import EpisodeOptions, continue_conversation, opened_conversation
from ..rollouts.rollout import _task_payload
from .encoding_cache import SFT_ENCODING_CACHE_BYTES, EncodingCache

WHOLE, AFTER_TOOL, CALLS_WITHOUT_IMAGES, AFTER_TOOL_AND_CALLS = "whole", "after_tool", "calls_without_images", "after_tool_and_calls"


def gold_conversations(client: EnvClient, tasks: list[dict[str, Any]], options: EpisodeOptions, chunk: int = 64,
                       no_tool_fraction: float = 0.0, seed: int = 0, direct_answers: bool = False,
                       decode_images: bool = False, progress: Callable[[int], None] | None = None) -> list[Conversation]:
    """Replay gold turns through the server; returns one full conversation per task.

    A `no_tool_fraction` share of the tasks (chosen by `seed`) is replayed in a tools-off episode
    as a direct answer, so the policy also sees what answering without tools looks like. With
    `direct_answers` every task is answered directly in a tools-on episode instead: the answers a
    policy gives when it could call a tool and does not (sft.direct_answer_fraction mixes them in).

    Images the server gives by path (options.images 'path', the run's default) stay undecoded: the
    encoder decodes the file each time it encodes a conversation that is in neither of its bounded
    caches (ConversationEncoder's preprocessed images, EncodingCache's encodings), and the same PNG
    decodes to the same pixels, so training is unchanged bit for bit (test_sft_lazy_images.py).
    Decoded, every conversation held its images for the whole warm-up, so memory grew with tasks
    times image size: 200 of the search demo's tasks (768x576 scenes, 1.8 MB each in Pillow; tool
    and direct conversations) held 719 MiB decoded against 3.1 MiB as paths, ~14 GB for its 4,000
    (bench/gold_image_memory.py, docs/DEMO.md). The price: a scene's file decoded again, 2-10 ms.
    The files must outlive the conversations: the server's image store never deletes one, and
    `decode_images` decodes them here for a caller whose images folder goes away first.
    `progress` is called with the count replayed so far after each chunk (the search demo's 4,000
    scenes take minutes on 2 cores, with nothing else to show).
    """
    chooser = random.Random(seed * 104_729 + 17)
    tool_free = {index for index in range(len(tasks)) if chooser.random() < no_tool_fraction} if options.tools else set(range(len(tasks)))
    direct = set(range(len(tasks))) if direct_answers and options.tools else set()
    if direct:
        tool_free = set()
    conversations: list[Conversation] = []
    for offset in range(0, len(tasks), chunk):
        batch = tasks[offset:offset + chunk]
        arms = [(offset + i) not in tool_free for i in range(len(batch))]
        # Two turns and calls to spare, so a gold script longer than the run's limits is still replayed whole.
        opened = client.start_episodes([{"task": _task_payload(task), "task_dir": task["_task_dir"],
                                         "options": options.request(tools=with_tools, extra_turns=2)}
                                        for task, with_tools in zip(batch, arms)])
        ids = [result["episode_id"] for result in opened]
        images: list[dict[str, Any]] = [{} for _ in opened]
        replayed = [opened_conversation(result, loaded, decode_images) for result, loaded in zip(opened, images)]
        gold = client.gold(batch)
        scripts = [(transcript["tool_turns"] if with_tools and (offset + i) not in direct else []) + [transcript["answer"]]
                   for i, (transcript, with_tools) in enumerate(zip(gold, arms))]
        done = [False] * len(batch)
        for turn_index in range(max(len(script) for script in scripts)):
            pending = [i for i in range(len(batch)) if not done[i] and turn_index < len(scripts[i])]
            if not pending:
                break
            steps = client.step_episodes([{"episode_id": ids[i], "text": scripts[i][turn_index]} for i in pending])
            for i, step in zip(pending, steps):
                continue_conversation(replayed[i], {"role": "assistant", "content": [{"type": "text", "text": scripts[i][turn_index]}]}, step, images[i], decode_images)
                done[i] = bool(step["done"])
        for episode_id in ids:
            client.close_episode(episode_id)
        conversations.extend(replayed)
        if progress is not None:
            progress(len(conversations))
    return conversations


def sft_step(policy: Policy, optimizer: torch.optim.Optimizer, encoded: list[EncodedConversation],
             dist: Distributed = Distributed(), engine: TrainingEngine | None = None,
             micro_batching: MicroBatching = MicroBatching()) -> float:
    """One step on this rank's share of the batch; the loss is the mean over the whole batch's policy
    tokens (summed across ranks), so N processes take the step one process would. The share goes
    through the model in micro-batches (`micro_batching`: by count or by a padded-token budget),
    gradients accumulating, so memory is bounded by the micro-batch, not by the batch."""
    engine = engine or TrainingEngine(policy, dist)
    engine.zero_grad(optimizer)
    # Positions the loss reads: every trained token but a sequence's first (nothing predicts it).
    tokens = float(sum(sum(item.loss_mask[1:]) for item in encoded))
    total_tokens = max(dist.sum(tokens), 1.0)
    parts = micro_batching.split([len(item.input_ids) for item in encoded])
    # A sharded engine gathers parameters in every forward: every rank runs as many passes as the
    # busiest, the extra ones on one of its own sequences with weight zero.
    passes: list[tuple[list[EncodedConversation], float]] = [([encoded[i] for i in part], 1.0) for part in parts]
    if engine.matched_micro_batches and encoded:
        passes += [([encoded[0]], 0.0)] * (int(dist.max(len(passes))) - len(passes))
    loss_sum = 0.0
    for chunk, weight in passes:
        inputs = policy.batch(chunk)
        log_probs, mask, _ = engine.score(inputs)
        loss = -(log_probs * mask).sum() / total_tokens * weight
        engine.backward(loss)
        loss_sum += float(loss.item())
    engine.step(optimizer, 1.0)
    return dist.sum(loss_sum)


def sft_micro_batching(config: SftConfig) -> MicroBatching:
    """sft.use_dynamic_bsz / max_token_len_per_gpu, else sft.micro_batch_size (null: one pass)."""
    return MicroBatching(max_tokens=config.max_token_len_per_gpu) if config.use_dynamic_bsz else MicroBatching(size=config.micro_batch_size)


def run_sft(policy: Policy, conversations: list[Conversation], config: SftConfig, seed: int,
            on_step: Callable[[int, float, float], None], start_step: int = 0, should_stop: Callable[[bool], bool] | None = None,
            optimizer: torch.optim.Optimizer | None = None, dist: Distributed = Distributed(),
            engine: TrainingEngine | None = None, direct_conversations: list[Conversation] | None = None,
            schedule: SftSchedule | None = None, encoding_cache_bytes: int = SFT_ENCODING_CACHE_BYTES) -> tuple[int, torch.optim.Optimizer]:
    """Train for config.steps steps or config.max_seconds, or until the probe ends the schedule's
    mixture; `on_step(step, loss, seconds)` after each.

    Each batch element is a gold conversation, or — with `direct_conversations` (the same tasks
    answered directly with the tools on) — a direct answer with the share the `schedule` gives the
    step (sft_schedule.py; built from `config` when not given, and read before every step, so
    `on_step` may end a phase early). `should_stop(time_is_up)` decides, for every rank at once,
    whether to stop before the next step. `encoding_cache_bytes` bounds the encoded conversations
    kept between steps (encoding_cache.py); it changes memory and time, never the result."""
    schedule = schedule or SftSchedule.from_config(config)
    engine = engine or TrainingEngine(policy, dist)
    optimizer = optimizer or engine.make_optimizer(config.lr, config.weight_decay, 1.0, config.betas)
    engine.train_mode()
    micro_batching = sft_micro_batching(config)
    started = time.perf_counter()
    step = start_step
    # Gold conversations never change: each is tokenised and its images preprocessed once (as one
    # sequence, or one per turn when the policy's view shows each turn a different past).
    pools = [conversations, direct_conversations or []]
    # With the tools off no conversation has a tool result, and an after-tool-only step would train
    # nothing: such a run trains whole answers from its first step, so both demo arms get the same
    # number of SFT steps that teach something.
    has_tool_results = any(message.get("role") == "tool" for conversation in conversations for message in conversation.messages)
    # How a drawn conversation is trained: WHOLE (every assistant turn), AFTER_TOOL (the answers after
    # a tool result), CALLS_WITHOUT_IMAGES (the tool calls, their images left out: sft_schedule.py), or
    # AFTER_TOOL_AND_CALLS (both, as separate sequences: sft.calls_alongside_answers).
    encoded = EncodingCache(encoding_cache_bytes)

    def encode(key: tuple[int, int, str]) -> list[EncodedConversation]:
        segments = encoded.get(key)
        if segments is None:
            conversation = pools[key[0]][key[1]]
            mode = key[2]
            if mode == CALLS_WITHOUT_IMAGES:
                segments = policy.encoder.call_segments_without_images(conversation)
            elif mode == AFTER_TOOL_AND_CALLS:
                segments = encode((key[0], key[1], AFTER_TOOL)) + encode((key[0], key[1], CALLS_WITHOUT_IMAGES))
            else:
                segments = policy.encoder.after_tool_segments(conversation) if mode == AFTER_TOOL else policy.encoder.training_segments(conversation)
            # The after-tool and the whole encodings of one conversation hold the same pixels: keep
            # them once (for the demo's 4,000 tasks that is gigabytes).
            sibling = (encoded.peek((key[0], key[1], WHOLE if mode == AFTER_TOOL else AFTER_TOOL)) or []) if mode in (WHOLE, AFTER_TOOL) else []
            if len(sibling) == len(segments):
                segments = [replace(segment, pixel_values=other.pixel_values)
                            if other.image_keys == segment.image_keys and other.pixel_values is not None
                            and segment.pixel_values is not None and torch.equal(other.pixel_values, segment.pixel_values) else segment
                            for segment, other in zip(segments, sibling)]
            encoded.put(key, segments)
        return segments

    def draw(order: random.Random, share: float, mode: str) -> tuple[int, int, str]:
        if share > 0 and pools[1] and order.random() < share:
            return 1, order.randrange(len(pools[1])), WHOLE
        return 0, order.randrange(len(pools[0])), mode

    while step < config.steps and not schedule.finished(step):
        time_is_up = config.max_seconds is not None and time.perf_counter() - started > config.max_seconds
        if (should_stop or (lambda up: up))(time_is_up):
            break
        # The batch is a pure function of (seed, step): every rank draws the same, resume repeats it.
        order = random.Random(seed * 7919 + step)
        share = schedule.direct_share(step) if direct_conversations else 0.0
        mode = WHOLE
        if has_tool_results and schedule.calls_without_images(step):
            mode = CALLS_WITHOUT_IMAGES
        elif has_tool_results and schedule.after_tool(step):
            mode = AFTER_TOOL_AND_CALLS if schedule.calls_alongside else AFTER_TOOL
        batch = [draw(order, share, mode) for _ in range(config.batch_size)]
        step_started = time.perf_counter()
        loss = sft_step(policy, optimizer, [segment for index in dist.share(batch) for segment in encode(index)], dist, engine,
                        micro_batching)
        step += 1
        on_step(step, loss, time.perf_counter() - step_started)
    return step, optimizer
