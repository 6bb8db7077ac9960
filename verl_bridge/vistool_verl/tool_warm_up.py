"""A few supervised steps that teach a fresh policy to call a tool and answer after its image, not the answer.

A fresh model writes noise, never a parseable call or answer, so every episode scores 0 and GRPO
has nothing to learn from; and a policy that never calls a tool leaves veRL's multi-turn image path
(the edited image back into the prompt, its M-RoPE positions, the response mask over the
observation) untrained. The end-to-end test of veRL's trainer (`vistool_verl.e2e`) needs a policy
that calls tools and whose rewards vary within a group. This warm-up trains it, as the demo's SFT
does (trainer/vistool_trainer/trainers/sft.py), on gold trajectories replayed through the env
server: the task's gold tool call, the env's real observation (its text and the edited image),
then an answer. The answer level is drawn AT RANDOM, so the policy knows the episode's shape and
how to call, and nothing about the chart: about one answer in three is right, by chance, and
groups get a reward spread. A `direct_share` of the examples answers at once without a call.

The conversations are rendered as the agent loop renders them (the env's messages, the processor's
chat template and image tokens); the loss covers the assistant turns only (each from after its
`<|im_start|>assistant\\n` to its `<|im_end|>`). It is a test fixture, not a way to train.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .env_messages import to_verl_messages

LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class WarmUpExample:
    messages: list[dict[str, Any]]
    images: list[Any]


def gold_examples(client: Any, tasks: list[dict[str, Any]], options: dict[str, Any], seed: int,
                  direct_share: float = 0.1) -> list[WarmUpExample]:
    """One conversation per task, replayed on the env server: the gold tool turns and their
    observations, then `<answer>LEVEL</answer>` with a random level (or that answer alone, for a
    `direct_share` of the tasks or a task without a gold call)."""
    rng = random.Random(seed)
    gold = client.gold(tasks)
    chosen = []
    for task, transcript in zip(tasks, gold, strict=True):
        calls = list(transcript["tool_turns"]) if rng.random() >= direct_share else []
        answer = f"<answer>{rng.choice(LEVELS)}</answer>"
        opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")},
                                         "task_dir": task["_task_dir"], "options": options}])[0]
        prompt = opened["observation"]["prompt"]
        try:
            for call in calls:
                step = client.step_episodes([{"episode_id": opened["episode_id"], "text": call}])[0]
                if step["done"] or "prompt" not in step["observation"]:
                    raise ValueError(f"the env server ended the gold episode of task {task.get('id')} at its tool call {call!r}")
                prompt = step["observation"]["prompt"]
        finally:
            client.close_episode(opened["episode_id"])
        messages, images = to_verl_messages(prompt)
        chosen.append(WarmUpExample(messages + [{"role": "assistant", "content": answer}], images))
    return chosen


def assistant_spans(ids: list[int], header: list[int], end: int) -> list[tuple[int, int]]:
    """[start, stop) of each assistant turn's tokens: after `header` (<|im_start|>assistant\\n) up to
    and including the next `end` (<|im_end|>)."""
    spans, i = [], 0
    while i <= len(ids) - len(header):
        if ids[i:i + len(header)] == header:
            start = i + len(header)
            stop = ids.index(end, start) + 1 if end in ids[start:] else len(ids)
            spans.append((start, stop))
            i = stop
        else:
            i += 1
    return spans


def encode(processor: Any, example: WarmUpExample) -> dict[str, torch.Tensor]:
    """The conversation as the agent loop builds it; labels on the assistant turns only."""
    text = processor.apply_chat_template(example.messages, tokenize=False, add_generation_prompt=False)
    batch = processor(text=[text], images=example.images or None, return_tensors="pt")
    tokenizer = processor.tokenizer
    header = tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    end = int(tokenizer.convert_tokens_to_ids("<|im_end|>"))
    ids = batch["input_ids"][0].tolist()
    labels = torch.full_like(batch["input_ids"], -100)
    spans = assistant_spans(ids, header, end)
    if len(spans) != sum(1 for m in example.messages if m["role"] == "assistant"):
        raise ValueError(f"found {len(spans)} assistant turns in the rendered conversation, expected "
                         f"{sum(1 for m in example.messages if m['role'] == 'assistant')}")
    for start, stop in spans:
        labels[0, start:stop] = batch["input_ids"][0, start:stop]
    encoded = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"], "labels": labels}
    if "pixel_values" in batch:
        # mm_token_type_ids marks the image tokens, without which transformers' Qwen2.5-VL computes 1-D
        # positions instead of the M-RoPE ones the rollout and veRL's actor use (transformers_server.py).
        image_pad = int(tokenizer.convert_tokens_to_ids("<|image_pad|>"))
        encoded.update(pixel_values=batch["pixel_values"], image_grid_thw=batch["image_grid_thw"],
                       mm_token_type_ids=(batch["input_ids"] == image_pad).long())
    return encoded


def loss_of(model: Any, example: dict[str, torch.Tensor]) -> torch.Tensor:
    """The mean cross-entropy of the labelled tokens, with the LM head applied only where it predicts
    one (`logits_to_keep`): on Qwen2.5's 151,936-row vocabulary the head over every position is most
    of a step's time on a CPU."""
    labels = example["labels"][0]
    targets = torch.nonzero(labels != -100)[:, 0]
    inputs = {key: value for key, value in example.items() if key != "labels"}
    logits = model(**inputs, logits_to_keep=targets - 1).logits[0]
    return torch.nn.functional.cross_entropy(logits.float(), labels[targets])


def warm_up(model: Any, processor: Any, chosen: list[WarmUpExample], steps: int, lr: float, seed: int,
            train_embeddings: bool = True, check_every: int = 0, learned: Callable[[int], bool] | None = None) -> list[float]:
    """Up to `steps` AdamW steps, one example each, cycling through them in a seeded order; the losses.
    With `learned`, it is asked after every `check_every` steps (the step count so far, the model in
    eval mode) and a True ends the warm-up there: the step count at which a small model picks up the
    call's shape varies with the CPU's summation order (400 fixed steps gave 5 of 8 probe episodes
    a call on one machine, fewer on another), so the e2e stops on what was learned, not on a count.
    `train_embeddings=False` keeps the (tied) token embeddings as they are: on a 151,936-row
    vocabulary their gradient and optimizer step are most of a step on a CPU."""
    torch.manual_seed(seed)
    encoded = [encode(processor, example) for example in chosen]
    embeddings = {id(model.get_input_embeddings().weight), id(model.get_output_embeddings().weight)}
    trained = [p for p in model.parameters() if train_embeddings or id(p) not in embeddings]
    frozen = [p for p in model.parameters() if id(p) in embeddings and not train_embeddings]
    for parameter in frozen:
        parameter.requires_grad_(False)
    optimizer = torch.optim.AdamW(trained, lr=lr, weight_decay=0.0, fused=True)
    order = random.Random(seed)
    losses = []
    model.train()
    for step in range(steps):
        if step % len(encoded) == 0:
            order.shuffle(encoded)
        loss = loss_of(model, encoded[step % len(encoded)])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if learned is not None and check_every > 0 and (step + 1) % check_every == 0:
            model.eval()
            with torch.no_grad():
                done = learned(step + 1)
            model.train()
            if done:
                break
    for parameter in frozen:
        parameter.requires_grad_(True)
    model.eval()
    return losses
