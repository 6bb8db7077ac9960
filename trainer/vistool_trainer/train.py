"""`train`: one config, two stages — SFT warm-up on gold trajectories, then GRPO/DAPO from that
checkpoint — with evaluation before and after, all written to the run directory.

SIGINT saves a checkpoint and exits 0; `--resume` continues from the newest complete checkpoint
(same data order and RNG state). The env server is started for the run unless env.url is set.
"""
from __future__ import annotations

import copy
import json
import os
import random
import resource
import signal
import subprocess
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from .env_client import EnvClient, LocalEnvServer, token_from
from .environment_check import check_environment, repo_root
from .evaluate import evaluate
from .events import EventStream
from .grpo import grpo_step
from .micro_model import parameter_count
from .policy import Policy
from .rollout import EpisodeOptions, load_tasks, rollout_record
from .run_config import resolve_config
from .run_directory import RunDirectory, write_json_atomic
from .sft import gold_conversations, gold_turns, run_sft


class Interrupted:
    def __init__(self) -> None:
        self.flag = False

    def __call__(self, *_: object) -> None:
        self.flag = True


def generate_tasks(out: Path, kind: str, n: int, seed: int, difficulty: int, image_size: str) -> Path:
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "data", "gen", "--kind", kind, "--n", str(n), "--seed", str(seed),
               "--difficulty", str(difficulty), "--image-size", image_size, "--out", str(out)]
    if not (out / "tasks.jsonl").exists():
        result = subprocess.run(command, capture_output=True, text=True, cwd=repo_root())
        if result.returncode != 0:
            raise RuntimeError(f"task generation failed (`{' '.join(command)}`): {result.stderr.strip()[-500:]}")
    return out / "tasks.jsonl"


def task_corpus(tasks: list[dict[str, Any]]) -> list[str]:
    """Text the micro tokenizer learns from: what the policy will read and write."""
    corpus = []
    for task in tasks:
        corpus.append(f"Question: {task['question']}")
        corpus.extend(gold_turns(task, tools=True))
        for key in ("columns_bbox", "rows_bbox", "x_values_bbox", "y_values_bbox"):
            corpus.extend((task.get("meta") or {}).get(key, {}).keys())
    corpus += ["OBSERVATION: The edited image follows.", "ERROR [E1]: No tool call or final answer found.",
               "Tools are not available in this episode: answer from the image with <answer>...</answer>."]
    return corpus


def versions() -> dict[str, str | None]:
    report = check_environment()
    return {status.name: status.installed for status in report.packages}


def episode_options(config: dict[str, Any]) -> EpisodeOptions:
    env = config["env"]
    return EpisodeOptions(tools=env["tools"], max_turns=env["max_turns"], max_tool_calls=env["max_tool_calls"],
                          images=env["images"], system_prompt=config["policy"]["system_prompt"])


def save_checkpoint(run: RunDirectory, policy: Policy, optimizer: torch.optim.Optimizer | None, state: dict[str, Any],
                    events: EventStream, keep: int) -> Path:
    path = run.checkpoint_path(state["global_step"])
    path.mkdir(parents=True, exist_ok=True)
    policy.save(path / "policy")
    if optimizer is not None:
        torch.save(optimizer.state_dict(), path / "optimizer.pt")
    torch.save({"torch": torch.get_rng_state(), "python": random.getstate()}, path / "rng.pt")
    (path / "trainer_state.json").write_text(json.dumps(state, indent=2))  # written last: marks the checkpoint complete
    run.prune_checkpoints(keep, protect={path})
    events.emit("checkpoint", path=str(path), **state)
    return path


def write_reward_config(config: dict[str, Any], run: RunDirectory) -> Path:
    """The run config's `rewards` section as the file the server reads (`--reward-config`)."""
    path = run.root / "logs" / "reward-config.json"
    write_json_atomic(path, config["rewards"])
    return path


def open_env(config: dict[str, Any], run: RunDirectory, root: Path, events: EventStream) -> tuple[Any, EnvClient]:
    """(server context or None, client): a local `vistool serve` scoring with the run's rewards,
    or the server at env.url (which scores with its own reward config)."""
    if config["env"]["url"]:
        if config["rewards"] != resolve_config({})["rewards"]:
            events.warning(f"env.url is set ({config['env']['url']}): that server scores with the reward config it was started with; "
                           "this run's rewards section is not applied (start it with --reward-config logs/reward-config.json)")
        write_reward_config(config, run)
        return None, EnvClient(config["env"]["url"], token_from(config["env"]))
    server = LocalEnvServer(root, run.images, run.root / "logs" / "env-token", run.root / "logs" / "env-server.log", config["env"]["node"],
                            reward_config=write_reward_config(config, run))
    return server, server.__enter__()


def train(config: dict[str, Any], max_steps: int | None = None, resume: bool = False, events: EventStream | None = None) -> int:
    run = RunDirectory(Path(config["output_dir"]))
    log_file = open(run.root / "logs" / "trainer.log", "a")
    events = events or EventStream(log_file=log_file)
    interrupted = Interrupted()
    previous_handler = signal.signal(signal.SIGINT, interrupted)
    seed = config["seed"]
    try:
        if config["threads"]:
            torch.set_num_threads(config["threads"])
        run.write_config(config)
        run.update_run(status="running", pid=os.getpid(), name=config["name"], started_at=time.time(), versions=versions())
        events.emit("started", run_dir=str(run.root), pid=os.getpid(), name=config["name"], resume=resume)
        torch.manual_seed(seed)
        random.seed(seed)

        data = config["data"]
        generate = data["generate"]
        train_path = Path(data["train"]) if data["train"] else generate_tasks(run.root / "data" / "train", generate["kind"], generate["n_train"], seed, generate["difficulty"], generate["image_size"])
        eval_path = Path(data["eval"]) if data["eval"] else generate_tasks(run.root / "data" / "eval", generate["kind"], generate["n_eval"], seed + 100_000, generate["difficulty"], generate["image_size"])
        train_tasks, eval_tasks = load_tasks(train_path), load_tasks(eval_path)[: config["eval"]["n"]]
        events.log(f"{len(train_tasks)} training tasks from {train_path}, {len(eval_tasks)} held-out from {eval_path}")

        checkpoint = run.latest_checkpoint() if resume else None
        state: dict[str, Any] = {"global_step": 0, "sft_step": 0, "rl_step": 0, "stage": "start"}
        if checkpoint is not None:
            state = json.loads((checkpoint / "trainer_state.json").read_text())
            policy = Policy.load(checkpoint / "policy", config["device"], config["policy"]["dtype"])
            rng = torch.load(checkpoint / "rng.pt", weights_only=False)
            torch.set_rng_state(rng["torch"])
            random.setstate(rng["python"])
            run.metrics_after_resume(state["global_step"])
            events.log(f"resumed from {checkpoint} at {state}")
        else:
            policy = Policy.create(config["policy"], task_corpus(train_tasks), seed, config["device"])
        events.log(f"policy {config['policy']['model']}: {parameter_count(policy.model):,} parameters on {policy.device}")
        options = episode_options(config)

        root = Path(os.path.commonpath([str(train_path.parent.resolve()), str(eval_path.parent.resolve())]))
        server_context, client = open_env(config, run, root, events)
        try:
            return _stages(config, run, events, policy, client, options, train_tasks, eval_tasks, state, checkpoint, interrupted, max_steps)
        finally:
            if server_context is not None:
                server_context.__exit__(None, None, None)
    except Exception as error:
        events.log(traceback.format_exc())
        run.update_run(status="failed", error=f"{type(error).__name__}: {error}", ended_at=time.time())
        events.emit("failed", error=f"{type(error).__name__}: {error}")
        return 1
    finally:
        signal.signal(signal.SIGINT, previous_handler)
        log_file.close()


def _eval(config: dict[str, Any], run: RunDirectory, events: EventStream, policy: Policy, client: EnvClient, options: EpisodeOptions,
          tasks: list[dict[str, Any]], label: str, state: dict[str, Any]) -> dict[str, float]:
    started = time.perf_counter()
    results = evaluate(policy, client, tasks, options, config["eval"]["max_new_tokens"])
    results["timing/eval_s"] = time.perf_counter() - started
    record = {"step": state["global_step"], "stage": "eval", "label": label, **results}
    run.append_metrics(record)
    events.emit("eval", **record)
    events.log(f"eval {label}: " + ", ".join(f"{k.split('/')[-1]}={v:.3f}" for k, v in results.items()))
    evaluations = run.read_run().get("evaluations", {})
    evaluations[label] = results
    run.update_run(evaluations=evaluations)
    return results


def _stages(config: dict[str, Any], run: RunDirectory, events: EventStream, policy: Policy, client: EnvClient, options: EpisodeOptions,
            train_tasks: list[dict[str, Any]], eval_tasks: list[dict[str, Any]], state: dict[str, Any], checkpoint: Path | None,
            interrupted: Interrupted, max_steps: int | None) -> int:
    seed, keep = config["seed"], config["checkpoint"]["keep"]
    budget = {"left": max_steps if max_steps is not None else 1 << 62}

    def out_of_steps() -> bool:
        return interrupted.flag or budget["left"] <= 0

    if state["stage"] == "start":
        if config["eval"]["before_and_after"]:
            _eval(config, run, events, policy, client, options, eval_tasks, "before", state)
        state["stage"] = "sft" if config["sft"]["enabled"] else "rl"

    if state["stage"] == "sft":
        sft = config["sft"]
        events.emit("stage", stage="sft")
        conversations = gold_conversations(client, train_tasks, options)
        optimizer = torch.optim.AdamW(policy.model.parameters(), lr=sft["lr"], weight_decay=sft["weight_decay"])
        if checkpoint is not None and (checkpoint / "optimizer.pt").exists() and state["sft_step"] > 0:
            optimizer.load_state_dict(torch.load(checkpoint / "optimizer.pt"))

        def on_step(step: int, loss: float, seconds: float) -> None:
            state["sft_step"] = step
            state["global_step"] += 1
            budget["left"] -= 1
            record = {"step": state["global_step"], "stage": "sft", "sft/step": step, "sft/loss": loss, "timing/step_s": seconds,
                      "memory/trainer_peak_rss_mb": peak_rss_mb()}
            run.append_metrics(record)
            events.emit("step", **record)

        sft_config = dict(sft)
        step, optimizer = run_sft(policy, conversations, sft_config, seed, on_step, state["sft_step"], out_of_steps, optimizer)
        if out_of_steps() and step < sft["steps"]:
            save_checkpoint(run, policy, optimizer, state, events, keep)
            return _finish(run, events, "interrupted" if interrupted.flag else "paused", state)
        state["stage"] = "rl" if config["rl"]["enabled"] else "done"
        save_checkpoint(run, policy, None, state, events, keep)
        if config["eval"]["before_and_after"]:
            _eval(config, run, events, policy, client, options, eval_tasks, "after_sft", state)

    if state["stage"] == "rl":
        rl = config["rl"]
        events.emit("stage", stage="rl")
        optimizer = torch.optim.AdamW(policy.model.parameters(), lr=rl["lr"], weight_decay=0.0)
        if checkpoint is not None and (checkpoint / "optimizer.pt").exists() and state["rl_step"] > 0:
            optimizer.load_state_dict(torch.load(checkpoint / "optimizer.pt"))
        reference = None
        if rl["kl_coef"] > 0:
            reference = copy.deepcopy(policy.model).eval()
            for parameter in reference.parameters():
                parameter.requires_grad_(False)
        started = time.perf_counter()
        while state["rl_step"] < rl["steps"]:
            if out_of_steps() or (rl["max_seconds"] is not None and time.perf_counter() - started > rl["max_seconds"]):
                break
            step_started = time.perf_counter()
            result = grpo_step(policy, optimizer, client, train_tasks, rl, options, seed, state["rl_step"], reference)
            state["rl_step"] += 1
            state["global_step"] += 1
            budget["left"] -= 1
            step_seconds = time.perf_counter() - step_started
            record = {"step": state["global_step"], "stage": "rl", "rl/step": state["rl_step"], **result.metrics,
                      "timing/step_s": step_seconds, "timing/env_fraction": result.metrics["timing/env_s"] / max(step_seconds, 1e-9),
                      "memory/trainer_peak_rss_mb": peak_rss_mb(), **env_memory(client)}
            run.append_metrics(record)
            limit = config["logging"]["rollouts_per_step"]
            for rollout in result.generated[:limit]:
                run.append_rollout(state["global_step"], rollout_record(rollout, state["global_step"]))
            if limit:
                events.emit("rollouts", step=state["global_step"], path=str(run.rollouts_path(state["global_step"])), count=min(limit, len(result.generated)))
            events.emit("step", **record)
            for message in result.warnings:
                events.warning(message, step=state["global_step"])
            every = config["checkpoint"]["every_steps"]
            if every and state["rl_step"] % every == 0 and state["rl_step"] < rl["steps"]:
                save_checkpoint(run, policy, optimizer, state, events, keep)
        if state["rl_step"] < rl["steps"] and (out_of_steps() or rl["max_seconds"] is None):
            save_checkpoint(run, policy, optimizer, state, events, keep)
            return _finish(run, events, "interrupted" if interrupted.flag else "paused", state)
        state["stage"] = "done"
        save_checkpoint(run, policy, None, state, events, keep)
        if config["eval"]["before_and_after"]:
            _eval(config, run, events, policy, client, options, eval_tasks, "after_rl", state)
    return _finish(run, events, "finished", state)


def env_memory(client: EnvClient) -> dict[str, float]:
    """The env server's resident memory now (its /v1/health reports rss_bytes), when it says."""
    rss = client.health().get("rss_bytes")
    return {"memory/env_server_rss_mb": rss / 2**20} if isinstance(rss, (int, float)) else {}


def peak_rss_mb() -> float:
    """The trainer process's peak resident memory so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _finish(run: RunDirectory, events: EventStream, status: str, state: dict[str, Any]) -> int:
    run.update_run(status=status, ended_at=time.time(), state=state, memory={"trainer_peak_rss_mb": peak_rss_mb()})
    events.emit("finished", status=status, **state)
    return 0
