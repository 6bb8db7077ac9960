"""`demo`: the embedded end-to-end run — generate tasks, start the env server, SFT warm-up,
GRPO/DAPO, evaluate on a held-out split before and after, print a table and write report.html.

One code path for every model: `--model micro --device cpu` (the default, ~10 minutes on 2 CPU
cores) and `--model Qwen/Qwen2.5-VL-3B-Instruct --device cuda` differ only in the run config
this module resolves (`demo_config`); both go through `train()`. It never invents a number: the
report shows what this run measured.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .demo_report import write_report
from .environment_check import repo_root
from .run_config import load_config
from .train import train

DEMO_CONFIG = repo_root() / "examples" / "micro-cpu.vistool.json"

# Shares of the time budget: SFT and RL get fixed shares; the rest pays for task generation,
# the server start and three held-out evaluations (measured ~1.5–2.5 min on 2 shared cores).
SFT_SHARE, RL_SHARE = 0.45, 0.25


def demo_config(out: str, minutes: float, model: str = "micro", device: str = "cpu") -> dict[str, Any]:
    """The demo's resolved run config: examples/micro-cpu.vistool.json with the time budget, and —
    for a real model — the settings a 3B model needs instead of the micro model's."""
    overrides: dict[str, Any] = {"output_dir": str(Path(out).resolve()), "device": device,
                                 "sft.max_seconds": minutes * 60 * SFT_SHARE, "rl.max_seconds": minutes * 60 * RL_SHARE}
    if model != "micro":
        overrides.update({
            "name": "demo-" + Path(model.rstrip("/")).name.lower(),
            "policy.model": model,
            "policy.dtype": "auto",  # bfloat16 on CUDA, float32 on CPU
            # A pretrained model reads the server's real system prompt (tool list, call format).
            "policy.system_prompt": None,
            "threads": 0,
            "sft.lr": 1e-5, "sft.batch_size": 8,
            "rl.lr": 1e-6, "rl.prompts_per_step": 8, "rl.group_size": 8, "rl.micro_batch_size": 8,
            "rl.max_new_tokens": 256, "eval.max_new_tokens": 256,
        })
    return load_config(DEMO_CONFIG, overrides)


def run_demo(out: str, minutes: float, model: str = "micro", device: str = "cpu") -> int:
    config = demo_config(out, minutes, model, device)
    code = train(config)
    run_dir = Path(config["output_dir"])
    if (run_dir / "metrics.jsonl").exists() and (run_dir / "run.json").exists():
        summary = write_report(run_dir)
        print(summary, file=sys.stderr)
        print(f"report: {run_dir / 'report.html'}", file=sys.stderr)
    return code
