"""Checks of the run directory `make verl-e2e` leaves (VISTOOL_VERL_E2E_DIR, default runs/verl-e2e):
veRL's own trainer (`verl.trainer.main_ppo`, v1: Ray, TransferQueue, the FSDP2 actor, the
agent-loop and reward workers) ran 2 GRPO steps on CPU with vistool's agent loop, reward and env
server. The rollout engine was the transformers stand-in for vLLM (vistool_verl.cpu_stand_in):
every number here about log-probs compares that stand-in with veRL's actor, not vLLM.

Expected values come from what the env server and the agent loop recorded (rollouts/step-N.jsonl),
computed here independently of veRL, and are compared with what veRL's trainer logged
(metrics.jsonl, veRL's names) and trained (trained/step-N.jsonl: every row of the batch its update
read, padding included, recorded inside the trainer by the stand-in's sampler). The workbench's own
readers (test/runs/read-run-dir.ts) read the run.

The policy is warmed up on gold tool trajectories, so most episodes call a tool and carry its edited
image into the next turn: veRL's multi-turn image path (the image back into the prompt, its M-RoPE
positions, the response mask over the observation) is trained here. With `--faults` (make verl-e2e
VERL_E2E_FAULTS=0.1) a share of tool calls fails at the env (logs/injected-faults.jsonl), and the
checks hold veRL's failed-group handling to docs/VERL.md ("A group with a failed episode").
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
# At least this share of every step's rollouts calls a tool the env runs and reads its edited image.
TOOL_SHARE = 0.5
TOOL_SHARE_WITH_FAULTS = 0.25
VISION_TOKENS = ("<|image_pad|>", "<|vision_start|>", "<|vision_end|>", "<|video_pad|>")
STOP_TOKENS = ("<|im_end|>", "<|endoftext|>")


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


@pytest.fixture(scope="module")
def trained() -> dict[int, list[dict]]:
    """The rows veRL's update read each step (cpu_stand_in/trained_batches.py)."""
    return {step: [json.loads(line) for line in (RUN / "trained" / f"step-{step:06d}.jsonl").read_text().splitlines()]
            for step in range(1, STEPS + 1)}


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(RUN / "model")


def _injected() -> list[dict]:
    path = RUN / "logs" / "injected-faults.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _edited_image(record: dict) -> bool:
    return any(turn.get("images") for turn in record["turns"])


def test_the_warm_up_ended_on_its_probe_with_most_sampled_first_turns_a_tool_call_the_env_ran():
    warm_up = json.loads((RUN / "e2e.json").read_text())["warm_up"]
    last = warm_up["probes"][-1]
    assert warm_up["reached"], ("the warm-up ran its cap without reaching its probe target", warm_up["probes"])
    # Recomputed from the probe's own counts, not taken from the driver's verdict.
    assert last["first_turn_tool_images"] >= warm_up["target"] * last["episodes"] and last["step"] == warm_up["steps"] <= warm_up["cap"]


def test_at_least_half_of_every_step_s_rollouts_call_a_tool_and_read_its_edited_image(records):
    # With injected faults only tool calls fail, and a group with a failed one is dropped whole: the
    # trained groups are then those that called tools less (measured: 31 % in a step where the run
    # without faults had 81 %). That run still needs a multi-image path in every step.
    bound = TOOL_SHARE if _config()["faults"] == 0 else TOOL_SHARE_WITH_FAULTS
    for step, step_records in records.items():
        share = sum(_edited_image(r) for r in step_records) / len(step_records)
        assert share >= bound, (step, share, "the warmed-up policy should call a tool the env runs in most episodes")


def test_every_trained_row_is_a_whole_group_s_episode_and_no_padding_or_failed_episode_trains_a_token(records, trained):
    for step, rows in trained.items():
        episodes = {(r["group_uid"], r["group"]) for r in records[step]}
        real = [row for row in rows if not row["padding"]]
        # Every row veRL trained is an episode the env scored and the loop wrote whole, with its group;
        # a failed episode left no row, and (failed_groups drop) neither did its group's survivors.
        assert {(row["uid"], row["session"]) for row in real} == episodes, step
        assert len(real) == len(episodes)
        assert all(row["trained_ids"] == [] for row in rows if row["padding"]), "a padding row carries a trained token"
        failed = {fault["uid"] for fault in _injected()}
        assert not failed & {row["uid"] for row in rows}, "a row of a group with a failed episode was trained"


def test_the_response_mask_trains_the_policy_s_turns_and_not_the_observations(records, trained, tokenizer):
    vision = {int(tokenizer.convert_tokens_to_ids(t)) for t in VISION_TOKENS}
    stops = {int(tokenizer.convert_tokens_to_ids(t)) for t in STOP_TOKENS}
    image_pad = int(tokenizer.convert_tokens_to_ids("<|image_pad|>"))
    multi_image = 0
    for step, rows in trained.items():
        by_episode = {(r["group_uid"], r["group"]): r for r in records[step]}
        for row in rows:
            if row["padding"]:
                continue
            record = by_episode[(row["uid"], row["session"])]
            # Mask 1: exactly the assistant turns' text as the env server received it (each turn's sampled
            # tokens; stop tokens are not text), so no observation token is trained.
            assert not vision & set(row["trained_ids"]), "an image token is under response_mask 1"
            text = tokenizer.decode([t for t in row["trained_ids"] if t not in stops], skip_special_tokens=False)
            assert text == "".join(turn["text"] for turn in record["turns"] if turn["role"] == "assistant"), (row["key"], text)
            # Mask 0: the observation, with one image's placeholders per edited image the env returned.
            if _edited_image(record):
                assert image_pad in row["masked_ids"], "the edited image did not join the sequence"
                multi_image += 1
    assert multi_image > 0


def test_failed_episodes_and_dropped_groups_are_counted_in_metrics_jsonl(seen):
    config = _config()
    faults = _injected()
    dropped = failed = 0
    for step in range(1, STEPS + 1):
        metrics = row(seen, step)
        assert "env/failed_episodes" in metrics and "env/failed_groups_dropped" in metrics, sorted(metrics)
        failed += metrics["env/failed_episodes"]
        dropped += metrics["env/failed_groups_dropped"]
    # Each injected fault failed one episode; each group with one is dropped whole (failed_groups: drop).
    assert failed == len(faults)
    assert dropped == (len({fault["uid"] for fault in faults}) if config["failed_groups"] == "drop" else 0)
    if config["faults"] > 0:
        assert faults, "the run injected no fault: the failed-group path was not exercised"
