"""A micro policy trained for real, and the turns the trainer's own evaluation has it write.

Tests of the other paths a checkpoint is played through (`vistool eval --policy checkpoint:`, the
veRL agent loop) compare them with the trainer's, task by task. A fresh model proves nothing there:
it writes no valid call and no answer, so every path "agrees" on garbage. This one is warmed up by
the trainer's SFT on the gold trajectories of a dozen tasks of the demo's kind, under the demo's
presentation (a system turn per arm, only the newest image in view), until it calls the tool and
answers; it is evaluated on the same tasks, because agreement, not generalisation, is what the
tests measure.

`python trainer/tests/trained_policy.py train OUT` trains into OUT and prints {checkpoint, config,
tasks}; `python trainer/tests/trained_policy.py replies CHECKPOINT CONFIG TASKS` prints the
trainer's evaluation turns, and `... first-prompts MODEL CONFIG TASKS` the token ids of the first
prompt the trainer gives a policy on each task, in each arm. The veRL bridge's tests call these
from their own environment.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from model_under_test import on_qwen_fixture, policy_section

DEMO_ARMS = {"tools": "Answer the question about the chart. You may call an image tool first.",
             "no_tools": "Answer the question about the chart. Tools are off: answer directly."}
TASKS = 12
# On the Qwen fixture (`make test-qwen`, model_under_test.py) a few steps only: a 20M-parameter
# model with a 151,936-token vocabulary does not learn the format in minutes on a CPU, and what the
# fixture checks here is that every path tokenises and detokenises a checkpoint's turns alike.
SFT_STEPS = 8 if on_qwen_fixture() else 240


def run_config(root: Path, tasks: Path) -> dict[str, Any]:
    return {
        "name": "trained-micro", "seed": 1, "output_dir": str(root / "run"), "device": "cpu", "threads": 2,
        "data": {"train": str(tasks), "eval": str(tasks)},
        "policy": policy_section(system_prompt=DEMO_ARMS, view={"latest_images": 1}),
        "env": {"tools": True, "max_turns": 3, "max_tool_calls": 2},
        # Whole gold trajectories, and a third of the tasks answered directly with the tools off, so both arms have something to say.
        "sft": {"steps": SFT_STEPS, "batch_size": 8, "lr": 0.003, "no_tool_fraction": 0.34},
        "rl": {"enabled": False},
        "eval": {"n": TASKS, "before_and_after": False, "max_new_tokens": 48},
        "checkpoint": {"every_steps": SFT_STEPS, "keep": 1},
    }


def train(root: Path) -> dict[str, str]:
    """Trains the policy into `root` (kept when already there): its checkpoint, run config and tasks."""
    from vistool_trainer.config import DataGenerateConfig
    from vistool_trainer.run.run_config import load_config
    from vistool_trainer.run.train import generate_tasks, train as train_run

    root.mkdir(parents=True, exist_ok=True)
    demo_kind = DataGenerateConfig(kind="vbar", n_train=TASKS, n_eval=TASKS, difficulty=2, image_size="224x112", families=["level"],
                                   labels=list("ABCDEF"), shuffle_labels=True, categories=[6, 6])
    tasks = generate_tasks(root / "data", demo_kind, 7, "train")
    config_path = root / "run.vistool.json"
    config_path.write_text(json.dumps(run_config(root, tasks)))
    checkpoint = root / "run" / "checkpoints" / f"step-{SFT_STEPS:06d}"
    if not (checkpoint / "trainer_state.json").exists():
        status = train_run(load_config(config_path))
        if status != 0 or not checkpoint.is_dir():
            raise RuntimeError(f"training the micro policy failed (exit {status}); see {root / 'run' / 'logs' / 'trainer.log'}")
    return {"checkpoint": str(checkpoint), "config": str(config_path), "tasks": str(tasks)}


def replies(checkpoint: Path, config_path: Path, tasks_path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """task id → arm → {"turns": the assistant texts, "answer", "tool_calls"}, from the trainer's
    own evaluation (trainers/evaluate.py: greedy, the run's presentation and reply budget)."""
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.rollouts.rollout import load_tasks
    from vistool_trainer.run.run_config import load_config
    from vistool_trainer.trainers.evaluate import evaluation_rollouts

    config = load_config(config_path)
    tasks = load_tasks(tasks_path)
    policy = Policy.load(checkpoint / "policy", "cpu", config.policy.dtype)
    scratch = checkpoint / "replies"
    scratch.mkdir(exist_ok=True)
    with LocalEnvServer(tasks_path.parent, scratch / "images", scratch / "token", scratch / "server.log") as client:
        arms = evaluation_rollouts(policy, client, tasks, episode_options(config), config.eval.max_new_tokens)
    return {task["id"]: {arm: {"turns": [turn["text"] for turn in rollout.trajectory["turns"] if turn["role"] == "assistant"],
                               "answer": rollout.trajectory.get("answer"), "tool_calls": rollout.tool_calls}
                         for arm, rollouts in arms.items() for rollout in rollouts[index:index + 1]}
            for index, task in enumerate(tasks)}


def counterfactual_replies(checkpoint: Path, config_path: Path, tasks_path: Path) -> dict[str, dict[str, Any] | None]:
    """task id → the trainer's counterfactual replay of its tools-arm episode (trainers/evaluate.py
    with eval.counterfactual: the original replies forced up to the first successful call, results
    withheld, greedy after), or None when the episode had no successful call."""
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.counterfactual import replay_withheld
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.rollouts.rollout import load_tasks
    from vistool_trainer.run.run_config import load_config
    from vistool_trainer.trainers.evaluate import evaluation_rollouts

    config = load_config(config_path)
    tasks = load_tasks(tasks_path)
    policy = Policy.load(checkpoint / "policy", "cpu", config.policy.dtype)
    scratch = checkpoint / "counterfactual"
    scratch.mkdir(exist_ok=True)
    options = episode_options(config)
    with LocalEnvServer(tasks_path.parent, scratch / "images", scratch / "token", scratch / "server.log") as client:
        tools = evaluation_rollouts(policy, client, tasks, options, config.eval.max_new_tokens, own_setting_only=True)["tools"]
        replays = replay_withheld(policy, client, tasks, tools, options, config.eval.max_new_tokens)
    return {task["id"]: replay for task, replay in zip(tasks, replays)}


def first_prompts(model: Path, config_path: Path, tasks_path: Path) -> dict[str, dict[str, list[int]]]:
    """task id → arm → the ids of the first prompt the trainer's rollout loop gives `model` (a saved
    policy folder) in that arm of the run config."""
    from dataclasses import replace

    from demo_prompts import ScriptedPolicy

    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.rollouts.rollout import load_tasks, run_rollouts
    from vistool_trainer.run.run_config import load_config

    config = load_config(config_path)
    tasks = load_tasks(tasks_path)
    policy = Policy.load(model, "cpu", config.policy.dtype)
    scratch = model.parent / "first-prompts"
    scratch.mkdir(exist_ok=True)
    prompts: dict[str, dict[str, list[int]]] = {task["id"]: {} for task in tasks}
    with LocalEnvServer(tasks_path.parent, scratch / "images", scratch / "token", scratch / "server.log") as client:
        for arm in ("tools", "no_tools"):
            recording = ScriptedPolicy(policy, ["<answer>low</answer>"] * len(tasks))
            run_rollouts(recording, client, tasks, 1, replace(episode_options(config), tools=arm == "tools"), 8, 1.0, greedy=True)
            for task, encoded in zip(tasks, recording.prompts):
                prompts[task["id"]][arm] = list(encoded.input_ids)
    return prompts


def main(argv: list[str]) -> int:
    if argv[:1] == ["train"] and len(argv) == 2:
        print(json.dumps(train(Path(argv[1]))))
    elif argv[:1] == ["replies"] and len(argv) == 4:
        print(json.dumps(replies(Path(argv[1]), Path(argv[2]), Path(argv[3]))))
    elif argv[:1] == ["first-prompts"] and len(argv) == 4:
        print(json.dumps(first_prompts(Path(argv[1]), Path(argv[2]), Path(argv[3]))))
    else:
        print("usage: trained_policy.py train OUT | replies CHECKPOINT CONFIG TASKS | first-prompts MODEL CONFIG TASKS", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main(sys.argv[1:]))
