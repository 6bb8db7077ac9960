"""Resume determinism against the real env server: a deterministic CPU run SIGKILLed mid-RL and
resumed with `--resume` writes the same metrics, rollouts and weights as a run never stopped."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from conftest import write_run_config
from safetensors.torch import load_file

from vistool_trainer.checkout import repo_root
from vistool_trainer.run.run_directory import read_json_lines

# Wall-clock and memory readings differ between any two runs; everything else must match.
VOLATILE_PREFIXES = ("timing/", "memory/")
VOLATILE_KEYS = {"time"}


def _write_config(tmp: Path, name: str, train_path: Path, eval_path: Path) -> Path:
    return write_run_config(
        tmp, name, train_path, eval_path, seed=5,
        sft={"steps": 3, "batch_size": 4},
        rl={"steps": 5, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 10, "dynamic_sampling": True, "max_num_gen_batches": 2},
        checkpoint={"every_steps": 1, "keep": 3},
    )


def _train(config: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vistool_trainer", "train", "--config", str(config), *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=repo_root())


def _comparable(records: list[dict]) -> list[dict]:
    return [{key: value for key, value in record.items() if not key.startswith(VOLATILE_PREFIXES) and key not in VOLATILE_KEYS} for record in records]


def _gone(pid: int, patience_s: float = 20.0) -> bool:
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_run_killed_mid_rl_and_resumed_matches_one_never_stopped(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    straight = _train(_write_config(tmp_path, "straight", train_path, eval_path))
    assert straight.wait(timeout=600) == 0

    killed_config = _write_config(tmp_path, "killed", train_path, eval_path)
    victim = _train(killed_config)
    server_pid = None
    for line in victim.stdout:
        event = json.loads(line)
        if event["event"] == "env":
            server_pid = event["pid"]
        if event["event"] == "checkpoint" and event.get("rl_step") == 2:
            victim.send_signal(signal.SIGKILL)
            break
    assert victim.wait(timeout=60) == -signal.SIGKILL
    victim.stdout.close()
    # The env server the trainer started dies with it (PR_SET_PDEATHSIG), leaving nothing behind.
    assert server_pid is not None and _gone(server_pid)
    assert json.loads((tmp_path / "killed" / "run.json").read_text())["status"] == "running"  # what a kill leaves

    resumed = _train(killed_config, "--resume")
    events = [json.loads(line) for line in resumed.stdout]
    assert resumed.wait(timeout=600) == 0
    resumed.stdout.close()
    assert events[-1]["event"] == "finished" and events[-1]["status"] == "finished"

    a = read_json_lines(tmp_path / "straight" / "metrics.jsonl")
    b = read_json_lines(tmp_path / "killed" / "metrics.jsonl")
    assert [m["step"] for m in b] == [m["step"] for m in a] == list(range(1, 9))
    assert _comparable(b) == _comparable(a)
    for step in range(4, 9):
        name = f"step-{step:06d}.jsonl"
        assert _comparable(read_json_lines(tmp_path / "killed" / "rollouts" / name)) == _comparable(read_json_lines(tmp_path / "straight" / "rollouts" / name))
    final = lambda run: load_file(str(sorted((tmp_path / run / "checkpoints").glob("step-*"))[-1] / "policy" / "model.safetensors"))
    wa, wb = final("straight"), final("killed")
    for key in wa:
        assert torch.equal(wa[key], wb[key]), key
