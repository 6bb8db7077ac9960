"""A few supervised steps that teach a fresh micro Qwen2.5-VL the shape of an answer, not the answer.

A fresh micro model writes bytes, never a parseable answer or call, so every episode scores 0 and
GRPO has nothing to learn from: no advantage, no gradient. The end-to-end test of veRL's trainer
(`vistool_verl.e2e`) needs a policy whose rewards vary within a group. This warm-up trains the
model, on each task's real opening prompt (the env server's messages, rendered by the processor as
the agent loop renders them), to answer with either the task's gold tool call or an answer level
drawn AT RANDOM. So the policy knows the format and how to call a tool, and knows nothing about
the chart: about one answer in three is right, by chance, and groups get a reward spread.

It is a test fixture: it says nothing about learning the task, and the demo's real warm-up is the
trainer's SFT (trainer/vistool_trainer/trainers/sft.py).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import torch

LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class WarmUpExample:
    messages: list[dict[str, Any]]
    images: list[Any]
    target: str


def examples(openings: list[tuple[list[dict[str, Any]], list[Any]]], gold_calls: list[str], seed: int,
             call_share: float = 0.5) -> list[WarmUpExample]:
    """One target per opening prompt: the gold call (share `call_share`) or `<answer>LEVEL</answer>` with a random level."""
    rng = random.Random(seed)
    chosen = []
    for (messages, images), call in zip(openings, gold_calls, strict=True):
        target = call if call and rng.random() < call_share else f"<answer>{rng.choice(LEVELS)}</answer>"
        chosen.append(WarmUpExample(messages, images, target))
    return chosen


def encode(processor: Any, example: WarmUpExample) -> dict[str, torch.Tensor]:
    """The prompt as the agent loop builds it, then the target and <|im_end|>; labels only on the target."""
    text = processor.apply_chat_template(example.messages, tokenize=False, add_generation_prompt=True)
    prompt = processor(text=[text], images=example.images or None, return_tensors="pt")
    tokenizer = processor.tokenizer
    target = tokenizer(example.target + "<|im_end|>", add_special_tokens=False, return_tensors="pt")["input_ids"]
    input_ids = torch.cat([prompt["input_ids"], target], dim=1)
    labels = torch.full_like(input_ids, -100)
    labels[:, prompt["input_ids"].shape[1]:] = target
    batch = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": labels}
    for key in ("pixel_values", "image_grid_thw"):
        if key in prompt:
            batch[key] = prompt[key]
    return batch


def warm_up(model: Any, processor: Any, chosen: list[WarmUpExample], steps: int, lr: float, seed: int) -> list[float]:
    """`steps` AdamW steps, one example each, cycling through them in a seeded order; the losses."""
    torch.manual_seed(seed)
    encoded = [encode(processor, example) for example in chosen]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    order = random.Random(seed)
    losses = []
    model.train()
    for step in range(steps):
        if step % len(encoded) == 0:
            order.shuffle(encoded)
        loss = model(**encoded[step % len(encoded)]).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return losses
