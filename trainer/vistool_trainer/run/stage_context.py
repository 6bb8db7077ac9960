"""What every training stage works with, as typed objects: the run's fixed setting (config, run
directory, events, env client, processes, tasks), the policy and its engine, the run state, and
the few things every stage does alike — count a step, save a checkpoint, evaluate, pause or
finish. The stages themselves are in stages.py; train.py builds the context and runs them.

Nothing here decides what a stage trains.
"""
from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..config import RunConfig
from ..engines.distributed import Distributed
from ..engines.training_engine import TrainingEngine, half_precision_warning
from ..model.policy import Policy
from ..rollouts.env_client import EnvClient
from ..rollouts.presentation import EpisodeOptions
from ..trainers.evaluate import evaluate, evaluation_options
from ..trainers.perception import evaluate_perception
from . import rng_state
from .eval_records import write_eval_records
from .events import EventStream
from .rollout_engine import RolloutEngine
from .run_directory import RunDirectory
from .run_state import RunState, StepBudget

Task = dict[str, Any]


class Interrupted:
    """The SIGINT handler: it only raises a flag, which the stages read between steps."""

    def __init__(self) -> None:
        self.flag = False

    def __call__(self, *_: object) -> None:
        self.flag = True


@dataclass
class TaskSets:
    """The run's tasks: training and held-out, and a curriculum's perception tasks (empty without one).
    With `rl.fresh_tasks` (`fresh_tasks` here) the last training tasks are RL's alone: SFT trains on
    `sft_train` and RL draws its prompts from `rl_train`."""
    train: list[Task]
    eval: list[Task]
    fresh_tasks: int  # rl.fresh_tasks, or 0 where RL does not run
    perception_train: list[Task] = field(default_factory=list)
    perception_eval: list[Task] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.fresh_tasks and self.fresh_tasks >= len(self.train):
            raise ValueError(f"rl.fresh_tasks ({self.fresh_tasks}) keeps every one of the {len(self.train)} training tasks from SFT; "
                             f"lower it under {len(self.train)}, or give more training tasks (data.train, or data.generate.n_train) "
                             "[rl/fresh-tasks-too-many]")

    @property
    def sft_train(self) -> list[Task]:
        return self.train[: -self.fresh_tasks] if self.fresh_tasks else self.train

    @property
    def rl_train(self) -> list[Task]:
        return self.train[-self.fresh_tasks:] if self.fresh_tasks else self.train


@dataclass
class RunSetting:
    """What train() opened for the run: the same for every stage."""
    config: RunConfig
    run: RunDirectory
    events: EventStream
    client: EnvClient
    tasks: TaskSets
    interrupted: Interrupted
    dist: Distributed = field(default_factory=Distributed)
    max_steps: int | None = None  # --max-steps: the steps this invocation may take over every stage


@dataclass
class StageContext:
    """A stage's whole world: the setting, the policy being trained, the engine that holds its
    weights, the episode options, the rollout engine, the checkpoint resumed from (None for a new
    run), the run state every stage moves on, and the step budget of this invocation."""
    setting: RunSetting
    policy: Policy
    engine: TrainingEngine
    options: EpisodeOptions
    state: RunState
    checkpoint: Path | None = None
    rollout_engine: RolloutEngine | None = None
    budget: StepBudget = field(default_factory=StepBudget)

    @property
    def config(self) -> RunConfig:
        return self.setting.config

    @property
    def run(self) -> RunDirectory:
        return self.setting.run

    @property
    def events(self) -> EventStream:
        return self.setting.events

    @property
    def client(self) -> EnvClient:
        return self.setting.client

    @property
    def dist(self) -> Distributed:
        return self.setting.dist

    @property
    def tasks(self) -> TaskSets:
        return self.setting.tasks

    @property
    def interrupted(self) -> bool:
        return self.setting.interrupted.flag

    def out_of_steps(self, time_is_up: bool = False) -> bool:
        """Whether to stop before the next step (every rank agrees): SIGINT, the step budget spent,
        or the stage's time cap."""
        return self.dist.agree(self.interrupted or self.budget.spent or time_is_up)

    def took_step(self) -> None:
        """One training step done, in any stage: the run's step count and the budget move."""
        self.state.global_step += 1
        self.budget.spend()

    def publish_step(self, record: dict[str, Any]) -> None:
        """A step's metrics line, and its `step` event."""
        self.run.append_metrics(record)
        self.events.emit("step", **record)

    def resume_optimizer(self, optimizer: torch.optim.Optimizer, steps_done: int) -> None:
        """A stage resumed after `steps_done` of its steps goes on with the checkpoint's optimizer state."""
        if self.checkpoint is not None and self.engine.has_optimizer(self.checkpoint) and steps_done > 0:
            self.engine.load_optimizer(optimizer, self.checkpoint)

    def warn_about_precision(self, lr: float, stage: str) -> None:
        message = half_precision_warning(self.engine, lr)
        if message:
            self.events.warning(f"{stage}: {message}")

    def save_checkpoint(self, optimizer: torch.optim.Optimizer | None) -> Path:
        return save_checkpoint(self, optimizer)

    def evaluate(self, label: str, own_setting_only: bool = False) -> None:
        """Evaluate on rank 0 (the others wait): `own_setting_only` for the periodic curve."""
        if self.dist.is_main:
            evaluate_now(self, label, own_setting_only)
        self.dist.barrier()

    def complete_stage(self, next_stage: str, eval_label: str) -> None:
        """A stage ran to its end: the run moves on to `next_stage`, with a checkpoint (no optimizer
        state: the next stage starts its own) and, when eval.before_and_after, an evaluation."""
        self.state.stage = next_stage  # type: ignore[assignment]
        self.save_checkpoint(None)
        if self.config.eval.before_and_after:
            self.evaluate(eval_label)

    def pause(self, optimizer: torch.optim.Optimizer | None) -> int:
        """Stopped inside a stage (SIGINT or the step budget): a checkpoint to resume from, then the end."""
        self.save_checkpoint(optimizer)
        return self.finish("interrupted" if self.interrupted else "paused")

    def finish(self, status: str) -> int:
        fields: dict[str, Any] = {}
        if self.dist.enabled:
            fields["replica_checksums"] = self.dist.gather(parameter_checksum(self.policy.model))
            fields["peak_rss_mb_per_rank"] = self.dist.gather(peak_rss_mb())
        state = self.state.to_dict()
        self.run.update_run(status=status, ended_at=time.time(), state=state, memory={"trainer_peak_rss_mb": peak_rss_mb()}, **fields)
        self.events.emit("finished", status=status, **state)
        return 0


def rng_file(rank: int) -> str:
    return "rng.pt" if rank == 0 else f"rng-rank{rank}.pt"


def save_checkpoint(ctx: StageContext, optimizer: torch.optim.Optimizer | None) -> Path:
    """Every rank saves its RNG state (CUDA generators included); rank 0 the weights (the policy's
    whole model, which every strategy keeps current), the engine its fp32 master weights (a
    half-precision policy's policy/ is their rounding) and the optimizer state, and rank 0, last,
    trainer_state.json (which marks the checkpoint complete) once the others are done."""
    run, dist, engine, state = ctx.run, ctx.dist, ctx.engine, ctx.state.to_dict()
    path = run.checkpoint_path(ctx.state.global_step)
    path.mkdir(parents=True, exist_ok=True)
    rng_state.save(path / rng_file(dist.rank))
    if dist.is_main:
        ctx.policy.save(path / "policy", adapter_directory=path / "adapter")
    engine.save_master_weights(path)
    if optimizer is not None:
        engine.save_optimizer(optimizer, path)
    dist.barrier()
    if dist.is_main:
        (path / "trainer_state.json").write_text(json.dumps(state, indent=2))
        run.prune_checkpoints(ctx.config.checkpoint.keep, protect={path})
        ctx.events.emit("checkpoint", path=str(path), **state)
    dist.barrier()
    return path


def evaluate_now(ctx: StageContext, label: str, own_setting_only: bool = False) -> dict[str, Any]:
    """The held-out evaluation under `label`: a metrics line, an `eval` event, the kept records and,
    for a checkpoint's evaluation (not the periodic curve), run.json's `evaluations`."""
    config, run, events, step = ctx.config, ctx.run, ctx.events, ctx.state.global_step
    started = time.perf_counter()
    keep = (lambda arms: write_eval_records(run.root, label, step, arms)) if run.writable else None  # noqa: E731
    results: dict[str, Any] = evaluate(ctx.policy, ctx.client, ctx.tasks.eval, evaluation_options(ctx.options, config.eval.max_turns),
                                       config.eval.max_new_tokens, own_setting_only, keep,
                                       counterfactual=config.eval.counterfactual)
    if ctx.tasks.perception_eval and not own_setting_only:  # a curriculum's checkpoints also measure its perception skill
        results.update(evaluate_perception(ctx.policy, ctx.client, ctx.tasks.perception_eval, ctx.options, config.eval.max_new_tokens))
    results["timing/eval_s"] = time.perf_counter() - started
    record = {"step": step, "stage": "eval", "label": label, **results}
    run.append_metrics(record)
    events.emit("eval", **record)
    events.log(f"eval {label}: " + ", ".join(f"{k.split('/')[-1]}={v:.3f}" for k, v in results.items() if v is not None))
    if not own_setting_only:  # the checkpoints' evaluations; the periodic curve lives in metrics.jsonl
        evaluations = run.read_run().get("evaluations", {})
        evaluations[label] = results
        run.update_run(evaluations=evaluations)
    return results


def env_memory(client: EnvClient) -> dict[str, float]:
    """The env server's resident memory now (its /v1/health reports rss_bytes), when it says."""
    rss = client.health().get("rss_bytes")
    return {"memory/env_server_rss_mb": rss / 2**20} if isinstance(rss, (int, float)) else {}


def peak_rss_mb() -> float:
    """The trainer process's peak resident memory so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parameter_checksum(model: torch.nn.Module) -> float:
    """Sum of every weight (float64): equal on all ranks exactly when the replicas stayed in sync."""
    with torch.no_grad():
        return float(sum(parameter.double().sum().item() for parameter in model.parameters()))
