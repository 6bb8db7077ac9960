"""The run's training stages, one class each: the curriculum's perception SFT, the SFT warm-up on
gold trajectories, and GRPO/DAPO. Each is built on the run's StageContext and `run()` returns a
StageOutcome: go on with the stage the run state now names, or stop the run with an exit code
(paused or interrupted, with a checkpoint to resume from). `run_stages` is the loop over them.

A stage moves the run state (its step counter, `global_step`, then the next stage) and writes
through the context; it never opens the env server, loads a policy or reads a checkpoint itself.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import torch

from ..algorithms.sft_schedule import SftSchedule
from ..algorithms.warmup_guard import WarmupGuard, report_erosion
from ..model.conversation import Conversation
from ..rollouts.rollout import rollout_record
from ..trainers.grpo import StepResult, grpo_step
from ..trainers.perception import perception_sft_config
from ..trainers.sft import gold_conversations, run_sft
from ..trainers.sft_probe import SftProbe, split_probe
from .checkpoint_policy import load_checkpoint_policy
from .run_state import Stage
from .stage_context import StageContext, env_memory, peak_rss_mb
from .time_caps import record_time_cap


@dataclass(frozen=True)
class StageOutcome:
    """What a stage's run ended with: None goes on with the run state's next stage; a code stops the run."""
    exit_code: int | None = None

    @property
    def stopped(self) -> bool:
        return self.exit_code is not None


GO_ON = StageOutcome()



PROGRESS_EVERY_S = 5.0


def gold_progress(ctx: StageContext, what: str, total: int) -> Callable[[int], None]:
    """A `progress` event (stage, what, done, total) at most every PROGRESS_EVERY_S seconds and at
    the end, while the env server replays the warm-up's gold: thousands of large scenes take minutes
    before the first SFT step, and a silent trainer looks hung."""
    last = [float("-inf")]

    def report(done: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            ctx.events.emit("progress", stage="sft", what=what, done=done, total=total)
    return report

class TrainingStage(Protocol):
    name: ClassVar[str]

    def __init__(self, ctx: StageContext) -> None: ...

    def run(self) -> StageOutcome: ...


def first_stage(ctx: StageContext) -> Stage:
    config = ctx.config
    return "perception" if config.curriculum.perception_first else "sft" if config.sft.enabled else "rl"


class PerceptionStage:
    """V-Thinker's first stage: point localisation, direct answers (the gold has no tool turns)."""
    name: ClassVar[str] = "perception"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    def run(self) -> StageOutcome:
        ctx, config = self.ctx, self.ctx.config
        stage_config = perception_sft_config(config)
        ctx.events.emit("stage", stage="perception")
        conversations = gold_conversations(ctx.client, ctx.tasks.perception_train, ctx.options, seed=config.seed)
        optimizer = ctx.engine.make_optimizer(stage_config.lr, stage_config.weight_decay, 1.0, stage_config.betas)
        done = ctx.state.perception_step or 0
        ctx.resume_optimizer(optimizer, done)
        step, optimizer = run_sft(ctx.policy, conversations, stage_config, config.seed, self.on_step, done, ctx.out_of_steps, optimizer,
                                  ctx.dist, ctx.engine)
        if step < stage_config.steps and ctx.out_of_steps():
            return StageOutcome(ctx.pause(optimizer))
        ctx.complete_stage("sft" if config.sft.enabled else "rl" if config.rl.enabled else "done", "after_perception")
        return GO_ON

    def on_step(self, step: int, loss: float, seconds: float) -> None:
        ctx = self.ctx
        ctx.state.perception_step = step
        ctx.took_step()
        ctx.publish_step({"step": ctx.state.global_step, "stage": "perception", "perception/step": step, "perception/loss": loss,
                          "timing/step_s": seconds, "memory/trainer_peak_rss_mb": peak_rss_mb()})


class SftStage:
    """The warm-up on gold trajectories, in the phases of sft_schedule.py; with `sft.probe_tasks`,
    a probe on held-out training tasks can end a phase early (`end_phase`)."""
    name: ClassVar[str] = "sft"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx
        self.sft = ctx.config.sft
        self.probe_tasks: list[dict[str, Any]] = []
        self.probe: SftProbe | None = None
        self.schedule = SftSchedule.from_config(self.sft, ctx.state.sft_schedule)
        self.optimizer: torch.optim.Optimizer | None = None
        self.guard = WarmupGuard()  # a later phase that lowers an earlier phase's skill is reported (warmup_guard.py)

    def run(self) -> StageOutcome:
        ctx, sft, seed = self.ctx, self.sft, self.ctx.config.seed
        ctx.events.emit("stage", stage="sft")
        sft_tasks, self.probe_tasks = split_probe(ctx.tasks.sft_train, sft.probe_tasks)
        conversations = gold_conversations(ctx.client, sft_tasks, ctx.options, no_tool_fraction=sft.no_tool_fraction, seed=seed,
                                           progress=gold_progress(ctx, "gold conversations", len(sft_tasks)))
        # Direct answers with the tools on, mixed into the batches as sft.direct_answer_fraction says.
        direct = (gold_conversations(ctx.client, sft_tasks, ctx.options, seed=seed, direct_answers=True,
                                     progress=gold_progress(ctx, "direct-answer conversations", len(sft_tasks)))
                  if ctx.options.tools and sft.direct_answer_fraction > 0 else None)
        self.probe = self.build_probe()
        self.optimizer = ctx.engine.make_optimizer(sft.lr, sft.weight_decay, 1.0, sft.betas)
        ctx.warn_about_precision(sft.lr, "sft")
        ctx.resume_optimizer(self.optimizer, ctx.state.sft_step)
        self.record_schedule()  # the dashboard marks the phases from run.json while SFT runs
        step, self.optimizer = run_sft(ctx.policy, conversations, sft, seed, self.on_step, ctx.state.sft_step, self.should_stop,
                                       self.optimizer, ctx.dist, ctx.engine, direct_conversations=direct, schedule=self.schedule)
        if step < sft.steps and ctx.out_of_steps():
            return StageOutcome(ctx.pause(self.optimizer))
        report_erosion(self.guard.finish(), ctx.events, ctx.run)
        # Where the warm-up's phases ended (the report and the panels read it from run.json).
        ctx.run.update_run(sft_schedule=self.schedule.state())
        ctx.complete_stage("rl" if ctx.config.rl.enabled else "done", "after_sft")
        return GO_ON

    def build_probe(self) -> SftProbe | None:
        """The probe over the held-out training tasks' gold (rank 0 alone: it reads the policy's whole copy)."""
        ctx, seed = self.ctx, self.ctx.config.seed
        if not self.probe_tasks or not ctx.dist.is_main:
            return None
        held_out = gold_conversations(ctx.client, self.probe_tasks, ctx.options, seed=seed)
        pairs: list[tuple[int, int]] = []
        if ctx.options.tools:
            # Each task's tool trajectory beside its direct answer: the call-or-answer choice (sft_probe.py).
            pairs = [(index, index + len(held_out)) for index, conversation in enumerate(held_out) if _has_tool_turn(conversation)]
            held_out += gold_conversations(ctx.client, self.probe_tasks, ctx.options, seed=seed, direct_answers=True)
        ctx.events.log(f"SFT probe: {len(self.probe_tasks)} training tasks held out of the SFT batches ({len(held_out)} gold conversations)")
        return SftProbe.build(ctx.policy, held_out, pairs)

    def record_schedule(self) -> None:
        """The schedule's state into the run state (for the checkpoint) and run.json (for the panels)."""
        self.ctx.state.sft_schedule = self.schedule.state()
        self.ctx.run.update_run(sft_schedule=self.schedule.state())

    def on_step(self, step: int, loss: float, seconds: float) -> None:
        ctx, sft = self.ctx, self.sft
        ctx.state.sft_step = step
        ctx.took_step()
        record = {"step": ctx.state.global_step, "stage": "sft", "sft/step": step, "sft/loss": loss, "timing/step_s": seconds,
                  "memory/trainer_peak_rss_mb": peak_rss_mb(), "memory/train_state_mb": ctx.engine.state_megabytes(self.optimizer)}
        if self.probe is not None and (step % sft.probe_every == 0 or step == sft.steps):
            probe_started = time.perf_counter()
            record.update(self.probe.measure(ctx.policy))
            record["timing/probe_s"] = time.perf_counter() - probe_started
            report_erosion(self.guard.observe(step, self.schedule.phase(step - 1), record), ctx.events, ctx.run)
        # Every rank asks at the same steps; rank 0's probe decides (sft_schedule.py).
        if self.probe_tasks and step % sft.probe_every == 0 and self.schedule.wants_probe_decision(step):
            if ctx.dist.agree(self.probe is not None and self.schedule.reached(step, record)):
                self.end_phase(step, record)
        ctx.publish_step(record)
        # A warm-up killed by the OOM killer or a closed laptop resumes from here, not from step 0
        # (the batch is a pure function of seed and step, and the schedule's state is saved).
        every = ctx.config.checkpoint.sft_every_steps
        if every and step % every == 0 and step < sft.steps and not self.schedule.finished(step):
            ctx.save_checkpoint(self.optimizer)

    def end_phase(self, step: int, record: dict[str, Any]) -> str:
        """The probe reached the current phase's target after `step` steps (`record` holds its
        numbers): the phase ends here, the next starts with the next step. Returns the phase ended."""
        ended = self.schedule.end_phase(step)
        self.record_schedule()
        probed = ", ".join(f"{k}={v:.2f}" for k, v in record.items() if k.startswith("sft/probe_"))
        self.ctx.events.log(f"SFT phase {ended} ended at step {step}{' (and with it SFT)' if self.schedule.finished(step) else ''}: "
                            f"the probe reached its target ({probed})")
        return ended

    def should_stop(self, time_is_up: bool) -> bool:
        ctx = self.ctx
        stop = ctx.out_of_steps(time_is_up)
        if stop and ctx.dist.agree(time_is_up) and not ctx.interrupted and ctx.dist.is_main:
            record_time_cap(ctx.run, ctx.events, "sft", ctx.state.sft_step, self.sft.steps, float(self.sft.max_seconds or 0),
                            self.schedule.phase(ctx.state.sft_step))
        return stop


def _has_tool_turn(conversation: Conversation) -> bool:
    return any(message.get("role") == "tool" for message in conversation.messages)


class RlStage:
    """GRPO/DAPO steps until rl.steps (or rl.max_seconds), with periodic evaluations and checkpoints."""
    name: ClassVar[str] = "rl"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx
        self.rl = ctx.config.rl

    def run(self) -> StageOutcome:
        ctx, rl = self.ctx, self.rl
        ctx.events.emit("stage", stage="rl")
        optimizer = ctx.engine.make_optimizer(rl.lr, 0.0, rl.max_grad_norm, rl.betas)
        ctx.warn_about_precision(rl.lr, "rl")
        ctx.resume_optimizer(optimizer, ctx.state.rl_step)
        reference = self.reference_model()
        sampler = ctx.rollout_engine.start(ctx.policy) if ctx.rollout_engine is not None else None
        prompts = ctx.tasks.rl_train
        started = time.perf_counter()
        while ctx.state.rl_step < rl.steps:
            time_is_up = rl.max_seconds is not None and time.perf_counter() - started > rl.max_seconds
            if ctx.out_of_steps(time_is_up):
                if ctx.dist.agree(time_is_up) and not ctx.interrupted and ctx.dist.is_main:
                    record_time_cap(ctx.run, ctx.events, "rl", ctx.state.rl_step, rl.steps, float(rl.max_seconds or 0))
                break
            step_started = time.perf_counter()
            result = grpo_step(ctx.policy, optimizer, ctx.client, prompts, rl, ctx.options, ctx.config.seed, ctx.state.rl_step,
                               reference, ctx.dist, ctx.engine, sampler)
            synced = ctx.rollout_engine.after_update() if ctx.rollout_engine is not None else {}
            ctx.state.rl_step += 1
            ctx.took_step()
            self.record_step(result, time.perf_counter() - step_started, optimizer, synced)
            self.every_steps(optimizer)
        if ctx.state.rl_step < rl.steps and (rl.max_seconds is None or ctx.out_of_steps()):
            return StageOutcome(ctx.pause(optimizer))
        ctx.complete_stage("done", "after_rl")
        return GO_ON

    def reference_model(self) -> torch.nn.Module | None:
        """The frozen policy the KL term compares with (rl.kl_coef > 0): the policy as RL began. RL's
        first step saves it to the run directory (kl-reference/), so a run resumed mid-RL compares
        with the same weights, not with the checkpoint it resumed from."""
        if self.rl.kl_coef <= 0:
            return None
        ctx = self.ctx
        folder = ctx.run.root / KL_REFERENCE
        if ctx.state.rl_step > 0:
            if (folder / KL_REFERENCE_DONE).exists():
                return _frozen(load_checkpoint_policy(ctx.config, ctx.run, folder).model)
            ctx.events.warning(f"resumed at RL step {ctx.state.rl_step} without {folder}: the KL reference is the resumed policy, "
                               "not the policy RL started from (this run predates saving it)")
        elif ctx.dist.is_main:
            folder.mkdir(exist_ok=True)
            ctx.policy.save(folder / "policy", adapter_directory=folder / "adapter")
            (folder / KL_REFERENCE_DONE).write_text("")  # last: a half-written reference is never read back
        ctx.dist.barrier()
        return _frozen(copy.deepcopy(ctx.policy.model))

    def record_step(self, result: StepResult, step_seconds: float, optimizer: torch.optim.Optimizer, synced: dict[str, float]) -> None:
        """The step's metrics line, its rollouts (gathered from every rank, up to logging.rollouts_per_step), its events."""
        ctx, step = self.ctx, self.ctx.state.global_step
        record = {"step": step, "stage": "rl", "rl/step": ctx.state.rl_step, **result.metrics,
                  "timing/step_s": step_seconds, "timing/env_fraction": result.metrics["timing/env_s"] / max(step_seconds, 1e-9),
                  "memory/trainer_peak_rss_mb": peak_rss_mb(), "memory/train_state_mb": ctx.engine.state_megabytes(optimizer),
                  **env_memory(ctx.client), **synced}
        ctx.run.append_metrics(record)
        limit = ctx.config.logging.rollouts_per_step
        share = -(-limit // ctx.dist.world)
        decode = ctx.policy.processor.tokenizer.decode
        records = [rollout_record(rollout, step, decode) for rollout in result.generated[:share]]
        records = [kept for rank_records in ctx.dist.gather(records) for kept in rank_records][:limit]
        ctx.run.append_rollouts(step, records)
        if limit:
            ctx.events.emit("rollouts", step=step, path=str(ctx.run.rollouts_path(step)), count=len(records))
        ctx.events.emit("step", **record)
        for message in result.warnings:
            ctx.events.warning(message, step=step)

    def every_steps(self, optimizer: torch.optim.Optimizer) -> None:
        """eval.every_steps and checkpoint.every_steps, inside the stage (its end has its own)."""
        ctx, rl_step = self.ctx, self.ctx.state.rl_step
        every_eval = ctx.config.eval.every_steps
        if every_eval and rl_step % every_eval == 0 and rl_step < self.rl.steps:
            ctx.evaluate(f"rl_step_{rl_step}", own_setting_only=True)
        every = ctx.config.checkpoint.every_steps
        if every and rl_step % every == 0 and rl_step < self.rl.steps:
            ctx.save_checkpoint(optimizer)


STAGE_CLASSES: dict[str, type[TrainingStage]] = {stage.name: stage for stage in (PerceptionStage, SftStage, RlStage)}


def run_stages(ctx: StageContext) -> int:
    """From the stage the run state names to the end: the evaluation before training (a new run),
    then each stage in turn until one stops the run or the state says done."""
    if ctx.state.stage == "start":
        if ctx.config.eval.before_and_after and ctx.config.eval.before:
            ctx.evaluate("before")
        ctx.state.stage = first_stage(ctx)
    while ctx.state.stage in STAGE_CLASSES:
        outcome = STAGE_CLASSES[ctx.state.stage](ctx).run()
        if outcome.stopped:
            return int(outcome.exit_code)  # type: ignore[arg-type]
    return ctx.finish("finished")


KL_REFERENCE = "kl-reference"
KL_REFERENCE_DONE = "complete"


def _frozen(model: torch.nn.Module) -> torch.nn.Module:
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model
