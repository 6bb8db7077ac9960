"""Two RL steps of the micro config (examples/micro-cpu.vistool.json, shortened) with
rl.rollout_engine "vllm", end to end: `python -m vistool_trainer train` in its own process, the
env server it starts itself, SFT, then rollouts sampled by vLLM with the weights pushed after each
step, and the run directory a person reads."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from model_under_test import policy_section
from record_schemas import assert_valid_metrics_lines, assert_valid_rollout_records

from vistool_trainer.checkout import repo_root
from vistool_trainer.run.run_directory import read_json_lines


def micro_config(tmp_path, vbar_data, rollout_is: str = "off") -> dict:
    config = json.loads((repo_root() / "examples" / "micro-cpu.vistool.json").read_text())
    train_path, eval_path = vbar_data
    config.update({"name": "vllm-rl", "output_dir": str(tmp_path / "run"), "threads": 1,
                   "data": {"train": str(train_path), "eval": str(eval_path)}})
    # The micro policy with a 400-token vocabulary, or the Qwen fixture under `make test-qwen`.
    config["policy"].pop("micro", None)
    config["policy"].update(policy_section())
    # A few SFT steps, so RL (and the engine) starts from weights that are not the initial ones.
    config["sft"].update({"steps": 4, "batch_size": 4, "probe_tasks": 4, "probe_every": 50})
    # Every group kept (a barely trained policy earns the same reward on every rollout of a task).
    config["rl"].update({"steps": 2, "prompts_per_step": 2, "group_size": 4, "ppo_mini_batch_size": 1, "max_new_tokens": 16,
                         "dynamic_sampling": False, "rollout_engine": "vllm", "rollout_is": rollout_is,
                         "fresh_tasks": 8})  # of the 24 tasks: SFT keeps 16, its probe 4 of them
    config["eval"].update({"n": 3, "max_new_tokens": 8, "every_steps": 0})
    config["checkpoint"].update({"every_steps": 1})
    config["logging"] = {"rollouts_per_step": 8}
    return config


def test_two_rl_steps_of_the_micro_config_sample_with_vllm(tmp_path, vbar_data, cli_bundle):
    # With the rollout correction on (rl.rollout_is, docs/VLLM.md): one run covers both, since off
    # differs only in the weights never being computed (test_rollout_correction.py compares the two).
    rollout_is = "token"
    path = tmp_path / "vllm-rl.vistool.json"
    path.write_text(json.dumps(micro_config(tmp_path, vbar_data, rollout_is)))
    result = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(path)], cwd=repo_root(),
                            capture_output=True, text=True, timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"})
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0, (result.stderr[-3000:], [e for e in events if e.get("event") == "failed"])
    assert events[-1]["event"] == "finished" and events[-1]["status"] == "finished"
    run = tmp_path / "run"
    log = (run / "logs" / "trainer.log").read_text()
    assert "rollout engine: vLLM 0.32.0 in this process" in log
    metrics = read_json_lines(run / "metrics.jsonl")
    assert_valid_metrics_lines(metrics)
    rl = [line for line in metrics if line["stage"] == "rl"]
    assert [line["rl/step"] for line in rl] == [1, 2]
    for line in rl:
        # Only an engine that returns log-probs makes these: the rollouts were vLLM's. Same weights
        # (SFT's at step 1, step 1's update pushed at step 2), fp32: the trainer agrees to rounding.
        assert line["training/rollout_probs_diff_max"] < 1e-3, line
        assert line["timing/weight_sync_s"] > 0
        assert line["actor/optimizer_steps"] >= 1
        # Every sequence paired token by token with the engine's values; with the engine in
        # agreement (the line above) every weight is 1 to rounding, so nothing is cut.
        assert line["rollout_corr/sequences_uncorrected"] == 0
        assert abs(line["rollout_corr/rollout_is_mean"] - 1) < 1e-2 and line["rollout_corr/rollout_is_ratio_fraction_high"] == 0
        assert line["rollout_corr/rollout_is_eff_sample_size"] > 0.99
    rollouts = [record for step in ("000005", "000006") for record in read_json_lines(run / "rollouts" / f"step-{step}.jsonl")]
    assert len(rollouts) == 16
    assert_valid_rollout_records(rollouts)
    assert all(any(turn["role"] == "assistant" for turn in record["turns"]) for record in rollouts)
    assert [line["label"] for line in metrics if line["stage"] == "eval"] == ["after_sft", "after_rl"]
    assert json.loads((run / "run.json").read_text())["status"] == "finished"
