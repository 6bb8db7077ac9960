"""SFT + GRPO for a few steps through a contract-faithful env server on 127.0.0.1, then resume.

Uses tests/contract_env_server.py (a real HTTP server speaking docs/CONTRACTS.md) because the
real `vistool serve` / `data gen` are not registered in bin/vistool.js yet; see test_real_env_server.py."""
import io
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from vistool_trainer.events import EventStream
from vistool_trainer.run_config import resolve_config
from vistool_trainer.run_directory import read_json_lines
from vistool_trainer.train import train

from contract_env_server import ContractEnvServer, make_tasks


def _config(tmp: Path, server: ContractEnvServer, train_path: Path, eval_path: Path, name: str) -> dict:
    token_file = tmp / "token"
    token_file.write_text(server.token)
    return resolve_config({
        "name": name, "seed": 3, "output_dir": str(tmp / name), "device": "cpu",
        "data": {"train": str(train_path), "eval": str(eval_path)},
        "policy": {"model": "micro", "system_prompt": "", "micro": {"vocab_size": 400}},
        "env": {"url": server.url, "token_file": str(token_file), "max_turns": 2, "max_tool_calls": 1},
        "sft": {"steps": 3, "batch_size": 4},
        "rl": {"steps": 2, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False},
        "eval": {"n": 3, "max_new_tokens": 8},
        "checkpoint": {"every_steps": 1, "keep": 5},
    })


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    train_path = make_tasks(tmp / "train", 12, seed=1)
    eval_path = make_tasks(tmp / "eval", 3, seed=2)
    with ContractEnvServer(tmp / "env-images") as server:
        yield tmp, server, train_path, eval_path


def test_sft_then_grpo_writes_the_run_directory_and_events(env):
    tmp, server, train_path, eval_path = env
    stdout = io.StringIO()
    code = train(_config(tmp, server, train_path, eval_path, "full"), events=EventStream(stdout=stdout, stderr=io.StringIO()))
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert code == 0, [e for e in events if e["event"] == "failed"]
    names = [event["event"] for event in events]
    assert names[0] == "started" and names[-1] == "finished"
    assert {"step", "rollouts", "checkpoint", "eval"} <= set(names)
    run = tmp / "full"
    metrics = read_json_lines(run / "metrics.jsonl")
    rl = [m for m in metrics if m["stage"] == "rl"]
    assert [m["rl/step"] for m in rl] == [1, 2]
    for key in ("reward/mean", "reward/accuracy", "acc/mean", "tool/call_rate", "tool/error_rate", "response_length/mean",
                "turns/mean", "actor/entropy", "actor/clipfrac", "actor/kl", "actor/grad_norm", "sampling/kept_groups",
                "timing/gen_s", "timing/env_s", "timing/train_s"):
        assert key in rl[0], key
    assert [m["label"] for m in metrics if m["stage"] == "eval"] == ["before", "after_sft", "after_rl"]
    rollouts = read_json_lines(run / "rollouts" / "step-000004.jsonl")
    assert len(rollouts) == 4 and {"prompt_id", "group", "turns", "reward", "advantage"} <= set(rollouts[0])
    assert json.loads((run / "run.json").read_text())["status"] == "finished"
    assert (run / "config.json").exists()


def test_resume_continues_to_the_same_weights_as_an_uninterrupted_run(env):
    tmp, server, train_path, eval_path = env
    quiet = lambda: EventStream(stdout=io.StringIO(), stderr=io.StringIO())
    straight = _config(tmp, server, train_path, eval_path, "straight")
    straight["eval"]["before_and_after"] = False
    assert train(straight, events=quiet()) == 0
    split = _config(tmp, server, train_path, eval_path, "split")
    split["eval"]["before_and_after"] = False
    assert train(split, max_steps=4, events=quiet()) == 0  # 3 SFT steps + 1 RL step, then a checkpoint
    assert json.loads((tmp / "split" / "run.json").read_text())["status"] == "paused"
    assert train(split, resume=True, events=quiet()) == 0
    final = lambda name: load_file(str(sorted((tmp / name / "checkpoints").glob("step-*"))[-1] / "policy" / "model.safetensors"))
    a, b = final("straight"), final("split")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6, msg=key)
