"""LoRA runs: a checkpoint holds the adapters (what resuming trains on) and the merged model (what
eval, serve-policy and any Hugging Face loader read); a run stopped mid-RL and resumed gives the
metrics and weights of a run never stopped. Against the real env server."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import write_run_config
from safetensors.torch import load_file

from vistool_trainer.checkout import repo_root
from vistool_trainer.model.policy import Policy
from vistool_trainer.run.run_directory import read_json_lines

VOLATILE_PREFIXES = ("timing/", "memory/")


def _config(tmp: Path, name: str, train_path: Path, eval_path: Path) -> Path:
    return write_run_config(
        tmp, name, train_path, eval_path, seed=4,
        policy={"lora": {"enabled": True, "r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}},
        sft={"steps": 2, "batch_size": 4, "lr": 1e-2},
        rl={"steps": 3, "prompts_per_step": 2, "group_size": 3, "max_new_tokens": 10, "dynamic_sampling": False},
        eval={"n": 3},
        checkpoint={"every_steps": 1, "keep": 5},
    )


def _train(config: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(config), *flags],
                          capture_output=True, text=True, cwd=repo_root(), timeout=600)


def _comparable(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in record.items() if not k.startswith(VOLATILE_PREFIXES) and k != "time"} for record in records]


def test_a_lora_run_resumes_on_its_base_and_its_checkpoints_load_as_plain_models(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    straight = _train(_config(tmp_path, "straight", train_path, eval_path))
    assert straight.returncode == 0, straight.stderr[-3000:]
    config = _config(tmp_path, "stopped", train_path, eval_path)
    paused = _train(config, "--max-steps", "3")  # SFT, then one RL step: the RL optimizer is in the checkpoint
    assert paused.returncode == 0, paused.stderr[-3000:]
    assert json.loads((tmp_path / "stopped" / "run.json").read_text())["status"] == "paused"
    resumed = _train(config, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    expected = _comparable(read_json_lines(tmp_path / "straight" / "metrics.jsonl"))
    assert [m["stage"] for m in expected] == ["sft", "sft", "rl", "rl", "rl"]
    assert _comparable(read_json_lines(tmp_path / "stopped" / "metrics.jsonl")) == expected

    final = tmp_path / "straight" / "checkpoints" / "step-000005"
    adapters = load_file(str(final / "adapter" / "adapter_model.safetensors"))
    assert adapters and all("lora_" in name for name in adapters)
    resumed_adapters = load_file(str(tmp_path / "stopped" / "checkpoints" / "step-000005" / "adapter" / "adapter_model.safetensors"))
    assert all(torch.equal(adapters[name], resumed_adapters[name]) for name in adapters)

    # policy/ is the merged model: plain keys, and the base weights moved by exactly scale · B·A.
    merged = load_file(str(final / "policy" / "model.safetensors"))
    base = load_file(str(tmp_path / "straight" / "base-policy" / "model.safetensors"))
    assert merged.keys() == base.keys() and not any("lora_" in name for name in merged)
    name = "model.layers.0.self_attn.q_proj.weight"  # save_pretrained writes the original checkpoint key names
    a = next(value for key, value in adapters.items() if "layers.0.self_attn.q_proj.lora_A" in key)
    b = next(value for key, value in adapters.items() if "layers.0.self_attn.q_proj.lora_B" in key)
    assert float((b @ a).abs().max()) > 0  # training moved the adapters
    assert torch.allclose(merged[name], base[name] + (8 / 4) * (b @ a), atol=1e-6)
    untouched = "model.layers.0.mlp.up_proj.weight"  # not a target module
    assert torch.equal(merged[untouched], base[untouched])

    policy = Policy.load(final / "policy", "cpu")
    assert not policy.has_adapters
    evaluated = subprocess.run([sys.executable, "-m", "vistool_trainer", "eval", "--config", str(tmp_path / "straight" / "config.json"),
                                "--checkpoint", str(final), "--n", "2"], capture_output=True, text=True, cwd=repo_root(), timeout=300)
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    event = json.loads(evaluated.stdout.strip().splitlines()[-1])
    assert event["event"] == "eval" and event["eval/n"] == pytest.approx(2.0)
