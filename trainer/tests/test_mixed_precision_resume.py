"""A bf16 run stopped and resumed continues exactly where the uninterrupted run goes, because the
checkpoint keeps the fp32 master weights (master-weights.safetensors) beside their bf16 rounding
in policy/: one process (the replicated engine's masters) and two FSDP ranks (the gathered master
shards). Without the master file the resumed run starts from the rounding and drifts: the check
can fail. Real env servers, real task images, CPU."""
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import write_run_config
from safetensors.torch import load_file

from vistool_trainer.checkout import repo_root
from vistool_trainer.engines.master_weights import MASTER_FILE
from vistool_trainer.run.run_directory import read_json_lines


def _config(tmp: Path, name: str, train_path: Path, strategy: str = "ddp") -> Path:
    return write_run_config(tmp, name, train_path, train_path, seed=3,
                            policy={"model": "micro", "system_prompt": "", "micro": {"vocab_size": 400}, "dtype": "bfloat16"},
                            sft={"steps": 4, "batch_size": 4, "lr": 1e-4},
                            rl={"steps": 1, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False,
                                "micro_batch_size": 4, "lr": 1e-5},
                            checkpoint={"every_steps": 0, "keep": 8}, distributed={"strategy": strategy})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _train(config: Path, *extra: str, ranks: int = 1) -> subprocess.CompletedProcess:
    if ranks == 1:
        command = [sys.executable, "-m", "vistool_trainer", "train", "--config", str(config), *extra]
    else:
        command = [str(Path(sys.executable).with_name("torchrun")), "--nproc_per_node", str(ranks), "--master_port", str(_free_port()),
                   "-m", "vistool_trainer", "train", "--config", str(config), *extra]
    done = subprocess.run(command, capture_output=True, text=True, cwd=repo_root(), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _checkpoint(run: Path, step: int) -> Path:
    return run / "checkpoints" / f"step-{step:06d}"


def _largest_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max(float((a[name].float() - b[name].float()).abs().max()) for name in a)


@pytest.mark.parametrize("strategy,ranks", [("ddp", 1), ("fsdp", 2)])
def test_a_bf16_run_resumes_from_its_fp32_masters(tmp_path, vbar_data, strategy, ranks):
    train_path = vbar_data[0]
    _train(_config(tmp_path, "whole", train_path, strategy), ranks=ranks)
    whole = read_json_lines(tmp_path / "whole" / "metrics.jsonl")
    sft_end = 4  # the checkpoint after SFT: no optimizer state in it, the masters are
    masters = load_file(str(_checkpoint(tmp_path / "whole", sft_end) / MASTER_FILE))
    assert masters and all(tensor.dtype == torch.float32 for tensor in masters.values())
    rounded = load_file(str(_checkpoint(tmp_path / "whole", sft_end) / "policy" / "model.safetensors"))
    assert all(tensor.dtype == torch.bfloat16 for tensor in rounded.values())
    # The masters hold what bf16 cannot: after these steps most of them sit between bf16 values.
    between = sum(int((m != m.bfloat16().float()).sum()) for m in masters.values()) / sum(m.numel() for m in masters.values())
    assert between > 0.5, between

    # Stopped after two SFT steps, resumed.
    config = _config(tmp_path, "resumed", train_path, strategy)
    _train(config, "--max-steps", "2", ranks=ranks)
    assert (_checkpoint(tmp_path / "resumed", 2) / MASTER_FILE).exists()
    _train(config, "--resume", ranks=ranks)
    resumed = read_json_lines(tmp_path / "resumed" / "metrics.jsonl")
    assert [m["step"] for m in resumed] == [m["step"] for m in whole]
    for a, b in zip(resumed, whole):
        if a["stage"] == "sft":
            assert a["sft/loss"] == pytest.approx(b["sft/loss"], rel=1e-6, abs=1e-7), a["step"]
    final = max(m["step"] for m in whole)
    for name in (MASTER_FILE, "policy/model.safetensors"):
        assert _largest_difference(load_file(str(_checkpoint(tmp_path / "resumed", final) / name)),
                                   load_file(str(_checkpoint(tmp_path / "whole", final) / name))) < 1e-6, name

    # The negative control: the same resume without the master file starts from the bf16 rounding.
    lost = _config(tmp_path, "lost", train_path, strategy)
    _train(lost, "--max-steps", "2", ranks=ranks)
    (_checkpoint(tmp_path / "lost", 2) / MASTER_FILE).unlink()
    _train(lost, "--resume", ranks=ranks)
    drift = _largest_difference(load_file(str(_checkpoint(tmp_path / "lost", final) / MASTER_FILE)),
                                load_file(str(_checkpoint(tmp_path / "whole", final) / MASTER_FILE)))
    assert drift > 1e-6, drift
    assert json.loads((tmp_path / "resumed" / "run.json").read_text())["status"] == "finished"
