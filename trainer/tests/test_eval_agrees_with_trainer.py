"""`vistool eval --policy checkpoint:` plays a trained checkpoint on the episodes the trainer's own
evaluation plays, so the two agree task by task: the same turns, word for word, in both arms.

The checkpoint is a micro policy trained for real (trained_policy.py: the demo's kind of task and
its presentation, a system turn per arm and only the newest image in view); it calls the tool and
answers, so agreement means something. The eval is the real CLI (node), serving the checkpoint with
the trainer's real serve-policy, as a user runs it.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_under_test import on_qwen_fixture
from trained_policy import TASKS, counterfactual_replies, replies, train

from vistool_trainer.checkout import repo_root


@pytest.fixture(scope="session")
def trained_micro(tmp_path_factory, cli_bundle):
    return {key: Path(value) for key, value in train(tmp_path_factory.mktemp("trained-micro")).items()}


def vistool_eval(trained, out: Path, *extra: str) -> dict:
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "eval", "--policy", f"checkpoint:{trained['checkpoint']}",
               "--tasks", str(trained["tasks"]), "--out", str(out), *extra]
    result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True, timeout=900,
                            env={**os.environ, "VISTOOL_PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr[-3000:]
    turns: dict = {}
    for line in (out / "rollouts" / "step-000000.jsonl").read_text().splitlines():
        record = json.loads(line)
        turns.setdefault(record["prompt_id"], {})[record["arm"]] = {
            "turns": [turn["text"] for turn in record["turns"] if turn["role"] == "assistant"],
            "answer": record["answer"], "tool_calls": record["tool_calls"]}
    return turns


def test_vistool_eval_of_a_trained_checkpoint_writes_the_trainers_turns_task_by_task(trained_micro, tmp_path):
    trainer = replies(trained_micro["checkpoint"], trained_micro["config"], trained_micro["tasks"])
    tools = [arms["tools"] for arms in trainer.values()]
    if not on_qwen_fixture():
        # The policy learned something: it calls the tool and answers in most tool episodes.
        assert sum(1 for r in tools if r["tool_calls"] > 0 and r["answer"] is not None) >= TASKS * 2 // 3, tools
        assert len({r["answer"] for r in tools}) > 1, "the answers depend on the task"
    # On the Qwen fixture (a few SFT steps: it writes arbitrary tokens of a 151k vocabulary, CJK and
    # partial UTF-8 sequences included) the agreement below is of tokenisation: the served turns,
    # re-read by `vistool eval`, are the trainer's word for word.

    evaluated = vistool_eval(trained_micro, tmp_path / "eval")
    assert sorted(evaluated) == sorted(trainer)
    for task_id, arms in trainer.items():
        assert evaluated[task_id] == arms, task_id

    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    metrics = next(iter(results["evaluations"].values()))["metrics"]
    tasks = [json.loads(line) for line in trained_micro["tasks"].read_text().splitlines()]
    gold = {task["id"]: task["answer"] for task in tasks}
    for arm in ("tools", "no_tools"):
        expected = sum(trainer[task_id][arm]["answer"] == gold[task_id] for task_id in trainer) / len(trainer)
        assert metrics[f"eval/acc_{arm}"] == pytest.approx(expected), arm


def test_vistool_eval_counterfactual_replays_agree_with_the_trainers_task_by_task(trained_micro, tmp_path):
    """The counterfactual replay (tool results withheld, the original turns forced up to the first
    successful call, greedy after) gives the same answers in `vistool eval --counterfactual` as in the
    trainer's evaluation with eval.counterfactual."""
    trainer = counterfactual_replies(trained_micro["checkpoint"], trained_micro["config"], trained_micro["tasks"])
    if not on_qwen_fixture():
        assert sum(replay is not None for replay in trainer.values()) >= TASKS // 2, "the trained policy calls the tool: there is something to replay"
    vistool_eval(trained_micro, tmp_path / "eval", "--counterfactual", "--tools", "on")
    lines = [json.loads(line) for line in (tmp_path / "eval" / "results.jsonl").read_text().splitlines()]
    evaluated = {line["task_id"]: line["counterfactual"] for line in lines if line["arm"] == "tools"}
    assert evaluated == trainer
