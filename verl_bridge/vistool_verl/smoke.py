"""`python -m vistool_verl smoke`: the agent loop end to end on CPU, writing a vistool run directory.

Real pieces: veRL's agent-loop base class and token builder, veRL's GRPO advantage
(core_algos.compute_grpo_outcome_advantage), vistool's env server (a `vistool serve` child),
generated tasks, and the micro Qwen2.5-VL (or a saved checkpoint, --model). The one stand-in is
generation: TransformersServerManager answers veRL's server-manager call, because vLLM and SGLang
need a GPU. No gradient step is taken: this checks rollouts, rewards, advantages and records,
not learning (scripts/gpu/verl-smoke.sh runs veRL's trainer on a GPU).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from omegaconf import OmegaConf
from transformers import Qwen2_5_VLForConditionalGeneration
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
from verl.utils.dataset.rl_dataset import RLHFDataset

from vistool_trainer.rollouts.env_client import LocalEnvServer, short_lived_server
from vistool_trainer.checkout import repo_root
from vistool_trainer.model.micro_model import MicroSize, build_micro_policy, save_policy
from vistool_trainer.rollouts.presentation import policy_corpus
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.rollouts.tool_metrics import tool_use_counts

from .agent_loop import VistoolAgentLoop
from .parquet_rows import presentation_argument
from .processor import load_processor
from .reward import compute_score
from .run_records import rollout_line, start_run, step_metrics
from .transformers_server import TransformersServerManager


def generate_tasks(out: Path, n: int, seed: int) -> Path:
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "data", "gen", "--kind", "vbar", "--n", str(n), "--seed", str(seed),
               "--difficulty", "1", "--image-size", "112x112", "--out", str(out)]
    result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed: {result.stderr[-1000:]}")
    return out / "tasks.jsonl"


def trainer_config(response_length: int, prompt_length: int, max_turns: int, mm_processor_kwargs: dict[str, Any] | None = None,
                   nnodes: int = 1) -> Any:
    """The part of veRL's trainer config an agent loop reads."""
    return OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"prompt_length": prompt_length, "response_length": response_length,
                                          "multi_turn": {"max_assistant_turns": max_turns}}},
        "data": {"image_key": "images", "apply_chat_template_kwargs": {}, "mm_processor_kwargs": dict(mm_processor_kwargs or {})},
        "trainer": {"nnodes": nnodes},
    })


def rollout_batch(make_loop: Callable[[], VistoolAgentLoop], rows: list[dict[str, Any]], sampling: dict[str, Any]) -> list[Any]:
    """One agent loop per row, all at once, as veRL's AgentLoopWorker runs them: each is made on
    the running event loop (the base class keeps the loop it was made on)."""
    async def run_all() -> list[Any]:
        return await asyncio.gather(*(make_loop().run(dict(sampling), **row) for row in rows))
    return asyncio.run(run_all())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vistool_verl smoke", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=repo_root() / "runs" / "verl-smoke")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--group", type=int, default=4, help="rollouts per prompt (veRL's rollout.n)")
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--model", type=Path, default=None, help="a saved Qwen2.5-VL folder (default: a fresh micro model)")
    parser.add_argument("--tasks", type=Path, default=None, help="a tasks.jsonl to draw the prompts from (default: new vbar tasks)")
    parser.add_argument("--presentation", default=None,
                        help="the presentation block (JSON, or a file) the env server applies: {\"system_prompt\": ..., \"view\": {...}} "
                             "as a run config's policy.system_prompt and policy.view (default: the env server's own)")
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        presentation = presentation_argument(args.presentation)
    except (ValueError, OSError) as error:
        parser.exit(2, f"vistool_verl smoke: {error}\n")
    out: Path = args.out.resolve()
    if (out / "run.json").exists():
        raise SystemExit(f"{out} already holds a run; remove it or pass another --out")
    started = time.time()
    tasks_path = args.tasks.resolve() if args.tasks else generate_tasks(out / "data", args.prompts, args.seed)
    tasks = load_tasks(tasks_path)[: args.prompts]
    if args.model is None:
        corpus = short_lived_server(lambda client: policy_corpus(client, tasks, presentation))
        model, processor = build_micro_policy(corpus, MicroSize(), args.seed)
        model_dir = out / "model"
        save_policy(model, processor, model_dir)
    else:
        model_dir = args.model.resolve()
    processor = load_processor(model_dir)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32)
    config = {"engine": "verl", "prompts": args.prompts, "group": args.group, "steps": args.steps, "model": str(model_dir),
              "max_turns": args.max_turns, "max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "seed": args.seed}
    run = start_run(out, "verl-smoke", config)
    print(json.dumps({"event": "run", "dir": str(out)}), flush=True)
    try:
        with LocalEnvServer(tasks_path.parent, run.images, out / "env-token", run.root / "logs" / "env-server.log") as client:
            cfg = trainer_config(response_length=768, prompt_length=3328, max_turns=args.max_turns)
            manager = TransformersServerManager(model, processor, max_new_tokens=args.max_new_tokens, seed=args.seed)
            def make_loop() -> VistoolAgentLoop:
                return VistoolAgentLoop(DictConfigWrap(cfg), manager, processor.tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                        hf_model_type=model.config.model_type, max_turns=args.max_turns, max_new_tokens=args.max_new_tokens,
                                        presentation=presentation, env_url=client.url,
                                        env_token_file=str(out / "env-token"))
            rows = [{"extra_info": {"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"]},
                     "data_source": "vistool", "reward_model": {"ground_truth": task["answer"]}}
                    for task in tasks for _ in range(args.group)]
            for step in range(1, args.steps + 1):
                step_started = time.perf_counter()
                outputs = rollout_batch(make_loop, rows, {"temperature": args.temperature, "top_p": 1.0, "top_k": -1, "logprobs": True})
                generation_s = time.perf_counter() - step_started
                write_step(run, step, tasks, args.group, rows, outputs, processor.tokenizer, generation_s, started)
                print(json.dumps({"event": "step", "step": step, "seconds": round(time.perf_counter() - step_started, 1)}), flush=True)
    except BaseException as error:
        run.update_run(status="failed", error=f"{type(error).__name__}: {error}", ended_at=time.time())
        raise
    run.update_run(status="finished", ended_at=time.time())
    print(json.dumps({"event": "done", "dir": str(out), "minutes": round((time.time() - started) / 60, 2)}), flush=True)
    return 0


def write_step(run: Any, step: int, tasks: list[dict[str, Any]], group: int, rows: list[dict[str, Any]], outputs: list[Any],
               tokenizer: Any, generation_s: float, started: float) -> None:
    scores = [compute_score(row["data_source"], tokenizer.decode(o.response_ids, skip_special_tokens=True),
                            row["reward_model"]["ground_truth"], {**row["extra_info"], **o.extra_fields})
              for row, o in zip(rows, outputs)]
    rewards = np.array([s["score"] for s in scores], dtype=np.float32)
    width = max(len(o.response_ids) for o in outputs)
    mask = torch.zeros(len(outputs), width)
    token_rewards = torch.zeros(len(outputs), width)
    for i, o in enumerate(outputs):
        mask[i, :len(o.response_mask)] = torch.tensor(o.response_mask, dtype=torch.float32)
        last = max(j for j, m in enumerate(o.response_mask) if m) if any(o.response_mask) else 0
        token_rewards[i, last] = float(rewards[i])
    index = np.array([str(tasks[i // group]["id"]) for i in range(len(outputs))], dtype=object)
    advantages, _ = compute_grpo_outcome_advantage(token_rewards, mask, index)
    per_rollout = np.array([float(advantages[i][mask[i].bool()][0]) if mask[i].any() else 0.0 for i in range(len(outputs))])
    for i, o in enumerate(outputs):
        spread = float(np.std(rewards[(i // group) * group:(i // group + 1) * group])) > 0
        run.append_rollout(step, rollout_line(step, str(tasks[i // group]["id"]), i % group, o.extra_fields["vistool_trajectory"],
                                              o.extra_fields["vistool_score"], per_rollout[i], spread, sum(o.response_mask)))
    # vistool's own names for these (the embedded trainer's), so the dashboard's tool-collapse alarm reads them.
    extra = {"acc/mean": float(np.mean([s["acc"] for s in scores])),
             "tool/call_rate": float(np.mean([s["vistool/tool_calls"] > 0 for s in scores])),
             "timing_s/gen": generation_s, "time/elapsed_s": time.time() - started,
             **tool_use_counts(o.extra_fields["vistool_trajectory"] for o in outputs)}
    run.append_metrics(step_metrics(step, rewards, per_rollout, np.array([len(o.response_ids) for o in outputs]),
                                    np.array([len(o.prompt_ids) for o in outputs]), np.array([o.num_turns for o in outputs]), extra))


if __name__ == "__main__":
    sys.exit(main())
