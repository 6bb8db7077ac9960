"""veRL rollouts and metrics → vistool's run directory (docs/CONTRACTS.md), so the dashboard and
the rollout viewer follow a veRL run as they follow the embedded trainer's.

- `metrics.jsonl`: one line per step with veRL's own metric names, plus `step`, `time` and
  `stage: "rl"`.
- `rollouts/step-N.jsonl`: one trajectory per line: the env server's turns (text, calls, errors,
  image refs), the reward and its breakdown, the group and the GRPO advantage. The images are the
  server's, written into the run's `images/` (the server's --images-dir) as they were made.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import verl

from vistool_trainer.run.run_directory import RunDirectory


def start_run(root: Path, name: str, config: dict[str, Any]) -> RunDirectory:
    run = RunDirectory(root)
    run.write_config(config)
    run.update_run(status="running", name=name, engine="verl", verl_version=verl.__version__, started_at=time.time(),
                   pid=os.getpid())
    return run


def rollout_line(step: int, prompt_id: str, group: int, trajectory: dict[str, Any], score: dict[str, Any],
                 advantage: float, kept: bool, response_tokens: int) -> dict[str, Any]:
    record = dict(trajectory)
    record.update({"step": step, "prompt_id": prompt_id, "group": group, "reward": float(score["reward"]),
                   "reward_breakdown": dict(score.get("components") or {}),
                   "reward_weights": dict(score.get("weights") or {}), "reward_notes": list(score.get("notes") or []),
                   "correct": bool(score.get("correct")), "advantage": float(advantage), "kept": bool(kept),
                   "response_tokens": int(response_tokens), "engine": "verl"})
    return record


def step_metrics(step: int, rewards: np.ndarray, advantages: np.ndarray, response_lengths: np.ndarray,
                 prompt_lengths: np.ndarray, num_turns: np.ndarray, extra: dict[str, float]) -> dict[str, Any]:
    """The names veRL's trainer logs for these quantities (ray_trainer's compute_data_metrics)."""
    def stats(prefix: str, values: np.ndarray) -> dict[str, float]:
        values = values.astype(float)
        return {f"{prefix}/mean": float(values.mean()), f"{prefix}/max": float(values.max()), f"{prefix}/min": float(values.min())}

    return {"step": step, "stage": "rl", **stats("critic/score", rewards), **stats("critic/rewards", rewards),
            **stats("critic/advantages", advantages), **stats("response_length", response_lengths),
            **stats("prompt_length", prompt_lengths), **stats("num_turns", num_turns), **extra}
