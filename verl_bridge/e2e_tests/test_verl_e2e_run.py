"""Checks of the run directory `make verl-e2e` leaves (VISTOOL_VERL_E2E_DIR, default runs/verl-e2e):
veRL's own trainer (`verl.trainer.main_ppo`, v1: Ray, TransferQueue, the FSDP2 actor, the
agent-loop and reward workers) ran 2 GRPO steps on CPU with vistool's agent loop, reward and env
server. The rollout engine was the transformers stand-in for vLLM (vistool_verl.cpu_stand_in):
every number here about log-probs compares that stand-in with veRL's actor, not vLLM.

Expected values come from what the env server and the agent loop recorded (rollouts/step-N.jsonl),
computed here independently of veRL, and are compared with what veRL's trainer logged
(metrics.jsonl, veRL's names). The workbench's own readers (test/runs/read-run-dir.ts) read the run.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from vistool_trainer.checkout import repo_root

RUN = Path(os.environ.get("VISTOOL_VERL_E2E_DIR", repo_root() / "runs" / "verl-e2e")).resolve()
READER = repo_root() / "test" / "runs" / "read-run-dir.ts"
# The run's steps: `make verl-e2e` trains 2; the GPU smoke (scripts/gpu/verl-smoke.sh) says how many it ran.
STEPS = int(os.environ.get("VISTOOL_VERL_E2E_STEPS", "2"))
# Rollout vs trainer: the same fp32 weights, the same tokens, images and position ids on both sides.
# What is left is the order of floating-point sums (batched training forward vs one-sequence
# generation, sdpa on different shapes): measured ~1e-6 in probability on the micro model.
PROBS_DIFF_BOUND = 1e-3


def _config() -> dict:
    return json.loads((RUN / "config.json").read_text())


@pytest.fixture(scope="module")
def seen() -> dict:
    if not (RUN / "run.json").exists():
        pytest.fail(f"{RUN} holds no run: `make verl-e2e` writes it (python -m vistool_verl e2e --out {RUN})")
    result = subprocess.run(["node", "--import", "tsx", str(READER), str(RUN)], cwd=repo_root(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def records() -> dict[int, list[dict]]:
    return {step: [json.loads(line) for line in (RUN / "rollouts" / f"step-{step:06d}.jsonl").read_text().splitlines()]
            for step in range(1, STEPS + 1)}


def row(seen: dict, step: int) -> dict:
    table = seen["metrics"]["table"]
    index = table["steps"].index(step)
    return {name: column[index] for name, column in table["columns"].items()}


def test_the_run_finished_and_says_it_ran_on_veRL(seen):
    run = json.loads((RUN / "run.json").read_text())
    assert run["status"] == "finished", run.get("error")
    assert run["engine"] == "verl" and run["verl_version"] == "0.9.1"
    assert _config()["rollout_engine"].startswith("transformers stand-in")


def test_veRLs_file_logger_wrote_every_step_with_veRLs_metric_names(seen):
    assert seen["metrics"]["problems"] == []
    assert seen["metrics"]["table"]["steps"] == list(range(1, STEPS + 1))
    names = set(seen["metrics"]["names"])
    for name in ["critic/score/mean", "critic/advantages/max", "critic/advantages/min", "actor/grad_norm", "actor/pg_loss",
                 "training/rollout_probs_diff_max", "response_length/mean", "prompt_length/mean", "timing_s/step", "training/global_step"]:
        assert name in names, name


def test_each_step_s_rollouts_are_in_the_viewer_one_group_per_prompt_with_images_that_resolve(seen, records):
    config = _config()
    assert [f["step"] for f in seen["stepFiles"]] == list(range(1, STEPS + 1))
    for listed in seen["steps"]:
        assert listed["skipped"] == []
        assert len(listed["groups"]) == config["prompts"]
        assert all(group["size"] == config["group"] for group in listed["groups"])
    episodes = 0
    for step_records in records.values():
        for record in step_records:
            assert record["engine"] == "verl"
            # The task image, and an edited image for each successful tool call (the warmed-up micro policy
            # rarely writes one: docs/VERL.md says what the e2e does not cover).
            refs = [record["task"]["image"]] + [ref for turn in record["turns"] for ref in turn.get("images") or []]
            assert all((RUN / "images" / f"{ref}.png").is_file() for ref in refs), refs
            episodes += 1
    assert episodes == STEPS * config["prompts"] * config["group"]


def test_veRL_trained_on_the_rewards_the_env_server_gave(seen, records):
    for step, step_records in records.items():
        rewards = np.array([r["reward"] for r in step_records])
        assert row(seen, step)["critic/score/mean"] == pytest.approx(rewards.mean(), abs=1e-5)
        assert row(seen, step)["critic/score/max"] == pytest.approx(rewards.max(), abs=1e-5)


def test_a_step_learned_GRPO_advantages_from_a_reward_spread_and_a_non_zero_gradient(seen, records):
    learned = []
    for step, step_records in records.items():
        groups: dict[str, list[float]] = {}
        for record in step_records:
            groups.setdefault(record["group_uid"], []).append(record["reward"])
        # GRPO as veRL computes it (core_algos): (r - mean) / (unbiased std + 1e-6) within each prompt's group.
        advantages = [(r - np.mean(g)) / (np.std(g, ddof=1) + 1e-6) for g in groups.values() for r in g]
        metrics = row(seen, step)
        assert metrics["critic/advantages/max"] == pytest.approx(max(advantages), abs=1e-3)
        assert metrics["critic/advantages/min"] == pytest.approx(min(advantages), abs=1e-3)
        if max(abs(a) for a in advantages) > 0:
            learned.append((step, metrics["actor/grad_norm"]))
    assert learned, "no step had a group with a reward spread: GRPO had nothing to learn from"
    assert any(norm > 0 for _, norm in learned), learned


def test_the_trainer_scores_the_sampled_tokens_as_the_rollout_did(seen):
    for step in range(1, STEPS + 1):
        metrics = row(seen, step)
        assert metrics["training/rollout_probs_diff_valid"] == 1
        assert metrics["training/rollout_probs_diff_max"] <= PROBS_DIFF_BOUND, (step, metrics["training/rollout_probs_diff_max"])
