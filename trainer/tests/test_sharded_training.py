"""Sharded training across two CPU processes (gloo): FSDP2 full shard and DeepSpeed ZeRO-3.

The update is checked against the one a single process makes on the same rollouts (the
gradient norm before clipping is scale-sensitive, so a missing or doubled reduction shows), a
whole training run against a single-process run, and resume from a sharded checkpoint against
the uninterrupted run. Rollouts go through real env servers; images are real edited PNGs.
"""
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
from vistool_trainer.run.run_directory import read_json_lines

TESTS = Path(__file__).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _torchrun(*arguments: str) -> subprocess.CompletedProcess:
    torchrun = Path(sys.executable).with_name("torchrun")
    return subprocess.run([str(torchrun), "--nproc_per_node", "2", "--master_port", str(_free_port()), *arguments],
                          capture_output=True, text=True, cwd=repo_root(), timeout=600)


def _require_deepspeed() -> None:
    try:
        import deepspeed  # noqa: F401
    except ImportError:
        pytest.fail("deepspeed is not installed in the trainer's venv: `make venv` installs it "
                    "(pip install --no-build-isolation deepspeed==0.19.8)")


def _config(tmp: Path, name: str, train_path: Path, strategy: str, **overrides: object) -> Path:
    sections: dict = {
        "seed": 2,
        "sft": {"steps": 3, "batch_size": 6, "lr": 3e-3},
        "rl": {"steps": 1, "prompts_per_step": 4, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False, "micro_batch_size": 3},
        "checkpoint": {"every_steps": 0, "keep": 4},
        "distributed": {"strategy": strategy},
        "logging": {"rollouts_per_step": 64},
    }
    sections.update(overrides)  # an override replaces the section, as it did when this built the whole config
    return write_run_config(tmp, name, train_path, train_path, **sections)


def _weights(run: Path, step: int) -> dict[str, torch.Tensor]:
    return load_file(str(run / "checkpoints" / f"step-{step:06d}" / "policy" / "model.safetensors"))


def _largest_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max(float((a[name] - b[name]).abs().max()) for name in a)


@pytest.mark.parametrize("strategy,adapters,sliced", [("fsdp", False, False), ("zero3", False, False), ("fsdp", True, False),
                                                      ("zero3", True, False), ("fsdp", False, True), ("zero3", False, True)])
def test_a_sharded_update_equals_the_update_one_process_makes_on_all_rollouts(tmp_path, vbar_data, strategy, adapters, sliced):
    """`sliced`: the LM head runs over slices of positions, each recomputed in backward (what a
    real model's vocabulary triggers), inside FSDP's root unit; under ZeRO-3 the head stays
    unsliced (each call of it is a collective fetch), which the same comparison checks."""
    if strategy == "zero3":
        _require_deepspeed()
    out = tmp_path / "update.json"
    mode = ["lora"] if adapters else ["sliced"] if sliced else []
    result = _torchrun(str(TESTS / "sharded_update_worker.py"), strategy, str(vbar_data[0]), str(out), *mode)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["strategy"] == strategy and report["world"] == 2
    # Full fine-tune: 56 weight tensors; LoRA: only the adapters train (A and B for 4 projections × 2 layers).
    assert report["trained_tensors"] == (16 if adapters else 56)
    sharded, alone = report["metrics"], report["alone_metrics"]
    # Rank 0 held 5 rollouts, rank 1 held 2 (and padded): the global token count and the loss add up.
    assert sharded["actor/tokens"] == alone["actor/tokens"]
    assert sharded["actor/loss"] == pytest.approx(alone["actor/loss"], rel=1e-6)
    # The norm before clipping sees every gradient: an averaged instead of summed reduction halves it.
    assert sharded["actor/grad_norm"] == pytest.approx(alone["actor/grad_norm"], rel=1e-5)
    assert sharded["actor/grad_norm"] > 0.05  # clipping (max_grad_norm 0.05) was active in both
    # AdamW's first step moves each weight by ~lr; the sharded step lands where the single one does.
    assert report["max_weight_change"] > 5e-4
    assert report["max_weight_difference"] < 1e-2 * report["max_weight_change"]
    # Both ranks' whole copies (the ones that sample) received the same new weights.
    first, second = report["checksums"]
    assert first == second


@pytest.mark.parametrize("strategy", ["fsdp", "zero3"])
def test_a_nonfinite_gradient_on_one_rank_skips_the_step_on_every_rank_and_is_counted(tmp_path, vbar_data, strategy):
    """Issue 39, defect 3, under sharding: one rank's NaN gradients make the global norm NaN; every
    rank must skip (FSDP: the engine's own check; ZeRO-3: DeepSpeed discards the step, and the engine
    must say so rather than report the previous step's norm), leaving masters and the sampling copy
    bit for bit, and the RL metrics count the skipped step."""
    if strategy == "zero3":
        _require_deepspeed()
    out = tmp_path / "update.json"
    result = _torchrun(str(TESTS / "sharded_update_worker.py"), strategy, str(vbar_data[0]), str(out), "poison")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["strategy"] == strategy and report["world"] == 2
    assert report["metrics"]["actor/grad_norm_nonfinite"] == 1.0
    assert report["metrics"]["actor/optimizer_steps"] == 0.0
    assert report["moved_fraction"]["master"] == 0.0 and report["moved_fraction"]["rollout_copy"] == 0.0
    assert report["max_weight_change"] == 0.0
    first, second = report["checksums"]
    assert first == second and first == first  # not NaN: nothing reached the weights


@pytest.mark.parametrize("strategy", ["fsdp", "zero3"])
def test_a_bfloat16_policy_trains_fp32_master_weights_so_small_steps_are_not_rounded_away(tmp_path, vbar_data, strategy):
    if strategy == "zero3":
        _require_deepspeed()
    out = tmp_path / "update.json"
    result = _torchrun(str(TESTS / "sharded_update_worker.py"), strategy, str(vbar_data[0]), str(out), "bf16")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["dtypes"] == {"master": "torch.float32", "rollout_copy": "torch.bfloat16"}
    moved = report["moved_fraction"]
    # At lr 1e-6 a bf16 AdamW step rounds most updates away (one process, weights in bf16) ...
    assert moved["alone"] < 0.1
    # ... the sharded engines step fp32 masters, where nearly every weight moves and keeps its step.
    assert moved["master"] > 0.99
    # The bf16 copy that samples sees what bf16 can show of it now; the rest accumulates in the master.
    assert moved["rollout_copy"] < 0.1
    assert report["metrics"]["actor/grad_norm"] == pytest.approx(report["alone_metrics"]["actor/grad_norm"], rel=0.01)  # bf16 compute


def _run_matches_single_process_and_resumes(tmp_path: Path, train_path: Path, strategy: str, expected_state_ratio: float) -> None:
    sharded = _torchrun("-m", "vistool_trainer", "train", "--config", str(_config(tmp_path, "sharded", train_path, strategy)))
    assert sharded.returncode == 0, sharded.stderr[-3000:]
    single = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(_config(tmp_path, "one", train_path, "ddp"))],
                            capture_output=True, text=True, cwd=repo_root(), timeout=600)
    assert single.returncode == 0, single.stderr[-3000:]

    run = json.loads((tmp_path / "sharded" / "run.json").read_text())
    assert run["status"] == "finished" and run["world_size"] == 2
    assert run["replica_checksums"][0] == run["replica_checksums"][1]
    events = [json.loads(line) for line in sharded.stdout.splitlines()]  # stdout stays pure JSON events
    assert events[0]["event"] == "started" and events[-1]["event"] == "finished"
    assert f"strategy {strategy}" in (tmp_path / "sharded" / "logs" / "trainer.log").read_text()

    metrics = read_json_lines(tmp_path / "sharded" / "metrics.jsonl")
    alone = read_json_lines(tmp_path / "one" / "metrics.jsonl")
    assert [m["stage"] for m in metrics] == ["sft", "sft", "sft", "rl"]
    for a, b in zip(metrics[:3], alone[:3]):  # each step depends on the previous updates: all three must be right
        assert a["sft/loss"] == pytest.approx(b["sft/loss"], rel=1e-5)
    # Sharding is real: one process holds weights, gradients and AdamW's two moments (4 copies);
    # each of two FSDP ranks half of each (2 of 4); ZeRO-3 also keeps an fp32 master partition
    # beside the model's own (2.5 of 4).
    ratio = metrics[0]["memory/train_state_mb"] / alone[0]["memory/train_state_mb"]
    assert ratio == pytest.approx(expected_state_ratio, abs=0.04), ratio
    after_sft = _weights(tmp_path / "sharded", 3)
    assert _largest_difference(after_sft, _weights(tmp_path / "one", 3)) < 1e-4

    # Stopped after one step (a checkpoint with the sharded optimizer state), then resumed.
    config = _config(tmp_path, "resumed", train_path, strategy)
    paused = _torchrun("-m", "vistool_trainer", "train", "--config", str(config), "--max-steps", "1")
    assert paused.returncode == 0, paused.stderr[-3000:]
    assert json.loads((tmp_path / "resumed" / "run.json").read_text())["status"] == "paused"
    assert (tmp_path / "resumed" / "checkpoints" / "step-000001" / "optimizer.pt").exists()
    resumed = _torchrun("-m", "vistool_trainer", "train", "--config", str(config), "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    continued = read_json_lines(tmp_path / "resumed" / "metrics.jsonl")
    assert [m["step"] for m in continued] == [1, 2, 3, 4]
    for a, b in zip(continued[:3], metrics[:3]):  # AdamW's moments came back: the same losses
        assert a["sft/loss"] == pytest.approx(b["sft/loss"], rel=1e-6)
    assert _largest_difference(_weights(tmp_path / "resumed", 3), after_sft) < 1e-6


def test_an_fsdp_run_matches_one_process_and_resumes_from_its_sharded_checkpoint(tmp_path, vbar_data):
    _run_matches_single_process_and_resumes(tmp_path, vbar_data[0], "fsdp", expected_state_ratio=0.5)
    saved = torch.load(tmp_path / "resumed" / "checkpoints" / "step-000001" / "optimizer.pt")
    assert saved["vistool_optimizer_format"] == "fsdp-full"  # gathered whole: resumable on any number of ranks


def test_a_zero3_run_matches_one_process_and_resumes_from_its_partitions(tmp_path, vbar_data):
    _require_deepspeed()
    _run_matches_single_process_and_resumes(tmp_path, vbar_data[0], "zero3", expected_state_ratio=0.625)
    checkpoint = tmp_path / "resumed" / "checkpoints" / "step-000001"
    assert len(list((checkpoint / "deepspeed" / "optimizer").glob("*optim_states.pt"))) == 2  # one partition per rank


def test_a_sharded_strategy_refuses_batches_too_small_to_share(tmp_path, vbar_data):
    config = _config(tmp_path, "small", vbar_data[0], "fsdp", sft={"steps": 1, "batch_size": 1})
    result = _torchrun("-m", "vistool_trainer", "train", "--config", str(config))
    assert result.returncode != 0
    failed = [json.loads(line) for line in result.stdout.splitlines() if '"failed"' in line]
    assert failed and "sft.batch_size 1 is below the 2 processes" in failed[0]["error"]


def test_resuming_with_another_strategy_says_which_one_wrote_the_checkpoint(tmp_path, vbar_data):
    config = _config(tmp_path, "switch", vbar_data[0], "ddp")
    paused = _torchrun("-m", "vistool_trainer", "train", "--config", str(config), "--max-steps", "1")
    assert paused.returncode == 0, paused.stderr[-3000:]
    switched = _config(tmp_path, "switch", vbar_data[0], "fsdp")
    resumed = _torchrun("-m", "vistool_trainer", "train", "--config", str(switched), "--resume")
    failed = [json.loads(line) for line in resumed.stdout.splitlines() if '"failed"' in line]
    assert failed and "written by the 'ddp' strategy" in failed[0]["error"] and "resume with the strategy that wrote it" in failed[0]["error"]
