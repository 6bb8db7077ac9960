"""The e2e's gold-tool warm-up (tool_warm_up.py) on the micro model and a real env server: its
examples are the gold trajectories the server replays, and it ends at the first probe that says
the skill is learned, not at a step count."""
from __future__ import annotations

import torch
from transformers import Qwen2_5_VLForConditionalGeneration

from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.processor import load_processor
from vistool_verl.tool_warm_up import gold_examples, warm_up


def _examples(env_server, tasks_path):
    client, _, _ = env_server
    tasks = load_tasks(tasks_path)
    options = {"tools": True, "max_turns": 3, "max_tool_calls": 2, "images": "path"}
    return gold_examples(client, tasks, options, seed=0, direct_share=0.0), len(tasks)


def test_the_warm_up_stops_at_the_first_probe_that_says_learned_asking_it_in_eval_mode(micro_dir, env_server, tasks_path):
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(micro_dir, dtype=torch.float32)
    processor = load_processor(micro_dir)
    examples, n = _examples(env_server, tasks_path)
    assert len(examples) == n and all(any(m["role"] == "tool" for m in e.messages) for e in examples)
    asked: list[tuple[int, bool]] = []

    def learned(step: int) -> bool:
        asked.append((step, model.training))
        return step >= 6

    before = [p.detach().clone() for p in model.parameters()]
    losses = warm_up(model, processor, examples, steps=20, lr=1e-3, seed=0, check_every=3, learned=learned)
    # Asked after steps 3 and 6, in eval mode each time; True at 6 ends it there.
    assert asked == [(3, False), (6, False)]
    assert len(losses) == 6 and not model.training
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_without_a_probe_the_warm_up_runs_every_step(micro_dir, env_server, tasks_path):
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(micro_dir, dtype=torch.float32)
    examples, _ = _examples(env_server, tasks_path)
    losses = warm_up(model, load_processor(micro_dir), examples, steps=5, lr=1e-3, seed=0)
    assert len(losses) == 5
