"""Two processes (`accelerate launch --multi_gpu --num_processes 2`, which on a machine without
GPUs starts two CPU ranks through torchrun; gloo): each rank rolls out its share of the prompts
through its own real env server, and gradients are summed, so the replicas stay identical and
the step equals the one a single process takes."""
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from vistool_trainer.checkout import repo_root
from vistool_trainer.trainers.grpo import pick_prompts
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.run_directory import read_json_lines


def _config(tmp: Path, name: str, train_path: Path) -> Path:
    config = {
        "name": name, "seed": 2, "output_dir": str(tmp / name), "device": "cpu", "threads": 1,
        "data": {"train": str(train_path), "eval": str(train_path)},
        "policy": {"model": "micro", "system_prompt": "", "micro": {"vocab_size": 400}},
        "env": {"max_turns": 2, "max_tool_calls": 1},
        "sft": {"steps": 2, "batch_size": 6},
        "rl": {"steps": 2, "prompts_per_step": 4, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False},
        "eval": {"before_and_after": False},
        "checkpoint": {"every_steps": 0, "keep": 2},
        "logging": {"rollouts_per_step": 64},
    }
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(config))
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_two_processes_split_the_rollouts_and_sum_gradients_into_the_single_process_step(tmp_path, vbar_data):
    train_path = vbar_data[0]
    accelerate = Path(sys.executable).with_name("accelerate")
    if not accelerate.exists():
        pytest.fail(f"{accelerate} is missing: install the trainer with `pip install -e 'trainer[test]'` (accelerate is a dependency)")
    launched = subprocess.run([str(accelerate), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
                               "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
                               "-m", "vistool_trainer", "train", "--config", str(_config(tmp_path, "two", train_path))],
                              capture_output=True, text=True, cwd=repo_root(), timeout=600)
    assert launched.returncode == 0, launched.stderr[-3000:]
    single = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(_config(tmp_path, "one", train_path))],
                            capture_output=True, text=True, cwd=repo_root(), timeout=600)
    assert single.returncode == 0, single.stderr[-3000:]

    run = json.loads((tmp_path / "two" / "run.json").read_text())
    assert run["status"] == "finished" and run["world_size"] == 2
    # Each rank trained on a different half of every batch; only summed gradients keep them equal.
    first, second = run["replica_checksums"]
    assert first == second
    assert (tmp_path / "two" / "logs" / "env-server-rank1.log").exists()  # rank 1 had its own server

    two = [m for m in read_json_lines(tmp_path / "two" / "metrics.jsonl")]
    one = [m for m in read_json_lines(tmp_path / "one" / "metrics.jsonl")]
    assert [m["stage"] for m in two] == ["sft", "sft", "rl", "rl"]
    for a, b in zip(two[:2], one[:2]):  # same weights, same batch: the same loss, summed in another order
        assert a["sft/loss"] == pytest.approx(b["sft/loss"], rel=1e-5)
    # Both ranks' groups reach the run directory: every prompt the step drew was rolled out.
    tasks = load_tasks(train_path)
    for rl_step, global_step in ((0, 3), (1, 4)):
        drawn = sorted(task["id"] for task in pick_prompts(tasks, 4, 2, rl_step, 0))
        rolled = sorted(record["prompt_id"] for record in read_json_lines(tmp_path / "two" / "rollouts" / f"step-{global_step:06d}.jsonl"))
        assert rolled == sorted(drawn * 2)
        assert two[global_step - 1]["sampling/kept_groups"] == 4
