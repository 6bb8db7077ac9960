"""`train`: one config, two stages — SFT warm-up on gold trajectories, then GRPO/DAPO from that
checkpoint — with evaluation before and after, all written to the run directory.

SIGINT saves a checkpoint and exits 0; `--resume` continues from the newest complete checkpoint
(same data order and RNG state). The env server is started for the run unless env.url is set.
Launched as N processes (accelerate/torchrun), each rank rolls out its share and gradients are
summed (distributed.py); rank 0 alone writes the run directory and speaks on stdout.
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

from ..algorithms.sft_schedule import SftSchedule
from ..algorithms.warmup_guard import WarmupGuard, report_erosion
from ..checkout import repo_root
from ..config import DataGenerateConfig, RunConfig, to_dict
from ..engines.distributed import Distributed, init_distributed
from ..engines.factory import make_training_engine
from ..engines.training_engine import TrainingEngine, half_precision_warning
from ..model.micro_model import parameter_count
from ..model.policy import Policy, gradient_checkpointing_wanted
from ..rollouts.env_client import EnvClient, LocalEnvServer, token_from
from ..rollouts.presentation import EpisodeOptions, episode_options, policy_corpus, presentation_of
from ..rollouts.rollout import load_tasks, rollout_record
from ..trainers.evaluate import evaluate
from ..trainers.grpo import grpo_step
from ..trainers.sft import gold_conversations, run_sft
from ..trainers.perception import evaluate_perception, perception_sft_config
from ..trainers.sft_probe import SftProbe, split_probe
from .environment_check import check_environment
from .eval_records import write_eval_records
from .events import EventStream
from .rollout_engine import RolloutEngine
from .run_config import resolve_config
from .run_directory import RunDirectory, write_json_atomic
from . import rng_state
from .report_to import reporters_for_run
from .time_caps import record_time_cap


class _Discard:
    """A stdout for ranks other than 0: the event protocol has one speaker."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class Interrupted:
    def __init__(self) -> None:
        self.flag = False

    def __call__(self, *_: object) -> None:
        self.flag = True


def data_gen_arguments(generate: DataGenerateConfig, seed: int, split: str) -> list[str]:
    """The `vistool data gen` arguments (without --out) that `data.generate` stands for. The editor's
    Generate Tasks and the veRL export build the same list in env/config/data-gen-args.ts; a test
    checks the two agree."""
    arguments = ["--kind", generate.kind, "--n", str(generate.n_train if split == "train" else generate.n_eval), "--seed", str(seed),
                 "--split", split, "--difficulty", str(generate.difficulty), "--image-size", generate.image_size]
    if generate.families:
        arguments += ["--family", ",".join(generate.families)]
    if generate.labels:
        arguments += ["--labels", ",".join(generate.labels)]
    if generate.min_top_gap:
        arguments += ["--min-top-gap", str(generate.min_top_gap)]
    if generate.categories:
        arguments += ["--categories", "-".join(str(count) for count in generate.categories)]
    if generate.shuffle_labels:
        arguments += ["--shuffle-labels"]
    return arguments


def generate_tasks(out: Path, generate: dict[str, Any], seed: int, split: str, write: bool = True) -> Path:
    """`vistool data gen` into `out` (kept when already there): the path of `out/tasks.jsonl`. The
    question families, fixed labels and top gap are generator options, so every task made is used."""
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "data", "gen", *data_gen_arguments(generate, seed, split), "--out", str(out)]
    if write and not (out / "tasks.jsonl").exists():
        result = subprocess.run(command, capture_output=True, text=True, cwd=repo_root())
        if result.returncode != 0:
            # The first line names what was wrong (a usage error is followed by the whole usage text); the tail holds a crash's trace.
            lines = result.stderr.strip().splitlines() or [f"exit {result.returncode}, no message"]
            detail = lines[0] if lines[0].startswith("vistool data gen:") else result.stderr.strip()[-500:]
            raise RuntimeError(f"task generation failed (`{' '.join(command)}`): {detail}")
    return out / "tasks.jsonl"


def perception_task_paths(config: RunConfig, run: RunDirectory, seed: int, write: bool = True) -> tuple[Path, Path]:
    """The curriculum's perception tasks (`curriculum.perception`): the files it names, else
    geometry `locate` tasks generated into data/perception-train and data/perception-eval."""
    stage = config.curriculum.perception
    generate = DataGenerateConfig(kind="geometry", n_train=stage.n_train, n_eval=stage.n_eval, difficulty=stage.difficulty,
                                  image_size=stage.image_size or config.data.generate.image_size, families=["locate"])
    train = Path(stage.train) if stage.train else generate_tasks(run.root / "data" / "perception-train", generate, seed, "train", write)
    held_out = Path(stage.eval) if stage.eval else generate_tasks(run.root / "data" / "perception-eval", generate, seed, "test", write)
    return train, held_out


def tokenizer_corpus(config: RunConfig, client: EnvClient, tasks: list[dict[str, Any]]) -> list[str]:
    """Everything the micro tokenizer learns from, for a run on `tasks`: what its policy will read
    and write, as the env server writes it (rollouts/presentation.py)."""
    return policy_corpus(client, tasks, presentation_of(config.policy))


def versions() -> dict[str, str | None]:
    report = check_environment()
    return {status.name: status.installed for status in report.packages}


BASE_POLICY = "base-policy"  # a LoRA run's frozen micro base, saved once (a hub model is its own base)


def rng_file(rank: int) -> str:
    return "rng.pt" if rank == 0 else f"rng-rank{rank}.pt"


def save_checkpoint(run: RunDirectory, policy: Policy, optimizer: torch.optim.Optimizer | None, state: dict[str, Any],
                    events: EventStream, keep: int, dist: Distributed = Distributed(), engine: TrainingEngine | None = None) -> Path:
    """Every rank saves its RNG state (CUDA generators included); rank 0 the weights (the policy's
    whole model, which every strategy keeps current), the engine its fp32 master weights (a
    half-precision policy's policy/ is their rounding) and the optimizer state, and rank 0, last,
    trainer_state.json (which marks the checkpoint complete) once the others are done."""
    path = run.checkpoint_path(state["global_step"])
    path.mkdir(parents=True, exist_ok=True)
    rng_state.save(path / rng_file(dist.rank))
    engine = engine or TrainingEngine(policy, dist)
    if dist.is_main:
        policy.save(path / "policy", adapter_directory=path / "adapter")
    engine.save_master_weights(path)
    if optimizer is not None:
        engine.save_optimizer(optimizer, path)
    dist.barrier()
    if dist.is_main:
        (path / "trainer_state.json").write_text(json.dumps(state, indent=2))
        run.prune_checkpoints(keep, protect={path})
        events.emit("checkpoint", path=str(path), **state)
    dist.barrier()
    return path


def load_checkpoint_policy(config: RunConfig, run: RunDirectory, checkpoint: Path) -> Policy:
    """The policy to continue training from a checkpoint. A LoRA run goes on with its adapters on
    the untouched base (the run's saved base for the micro model, else policy.model); the merged
    weights in policy/ are for evaluation and serving."""
    device, dtype = config.device, config.policy.dtype
    if not config.policy.lora.enabled:
        policy = Policy.load(checkpoint / "policy", device, dtype)
    else:
        if not (checkpoint / "adapter").is_dir():
            raise RuntimeError(f"{checkpoint} has no adapter/ folder: it was not written by a LoRA run (or predates LoRA resume); "
                               "resume with policy.lora.enabled false, or start a new run")
        base = run.root / BASE_POLICY if config.policy.model == "micro" else config.policy.model
        policy = Policy.load_with_adapter(base, checkpoint / "adapter", checkpoint / "policy", device, dtype)
    policy.set_gradient_checkpointing(gradient_checkpointing_wanted(config.policy))
    return policy


def write_reward_config(config: RunConfig, run: RunDirectory, suffix: str = "") -> Path:
    """The run config's `rewards` section as the file the server reads (`--reward-config`)."""
    path = run.root / "logs" / f"reward-config{suffix}.json"
    write_json_atomic(path, config.rewards)
    return path


def open_env(config: RunConfig, run: RunDirectory, roots: list[Path], events: EventStream, rank: int = 0) -> tuple[Any, EnvClient]:
    """(server context or None, client): a local `vistool serve` scoring with the run's rewards (one
    per rank in a multi-process run, all writing the run's content-addressed images/), or the
    server at env.url (which scores with its own reward config)."""
    if config.env.url:
        if config.rewards != resolve_config({}).rewards:
            events.warning(f"env.url is set ({config.env.url}): that server scores with the reward config it was started with; "
                           "this run's rewards section is not applied (start it with --reward-config logs/reward-config.json)")
        write_reward_config(config, run)
        return None, EnvClient(config.env.url, token_from(config.env))
    suffix = "" if rank == 0 else f"-rank{rank}"
    server = LocalEnvServer(roots, run.images, run.root / "logs" / f"env-token{suffix}", run.root / "logs" / f"env-server{suffix}.log",
                            config.env.node, reward_config=write_reward_config(config, run, suffix))
    client = server.__enter__()
    events.emit("env", url=client.url, pid=server.process.pid if server.process else None, log=str(server.log_path))
    return server, client


def train(config: RunConfig, max_steps: int | None = None, resume: bool = False, events: EventStream | None = None) -> int:
    dist = init_distributed(config.device)
    run = RunDirectory(Path(config.output_dir), writable=dist.is_main)
    log_file = open(run.root / "logs" / ("trainer.log" if dist.is_main else f"trainer-rank{dist.rank}.log"), "a")
    if not dist.is_main:
        # Only rank 0 speaks the event protocol on stdout; the others log to stderr and their own file.
        events = EventStream(stdout=_Discard(), log_file=log_file, prefix=f"rank {dist.rank}")
    events = events or EventStream(log_file=log_file)
    interrupted = Interrupted()
    previous_handler = signal.signal(signal.SIGINT, interrupted)
    seed = config.seed
    try:
        if config.threads:
            torch.set_num_threads(config.threads)
        run.write_config(to_dict(config))
        run.update_run(status="running", pid=os.getpid(), name=config.name, started_at=time.time(), versions=versions(), world_size=dist.world)
        events.emit("started", run_dir=str(run.root), pid=os.getpid(), name=config.name, resume=resume, world_size=dist.world)
        if dist.is_main:  # logging.report_to: TensorBoard and W&B get what the run directory writes (report_to.py)
            run.reporters = reporters_for_run(config.logging.report_to, run, config.name, to_dict(config), config.logging.wandb_project,
                                              config.logging.report_rollouts_per_step, resume, events.log)
        torch.manual_seed(seed)
        random.seed(seed)

        data = config.data
        generate = data.generate
        if dist.is_main:  # one process generates; the others read what it wrote
            train_path = Path(data.train) if data.train else generate_tasks(run.root / "data" / "train", generate, seed, "train")
            eval_path = Path(data.eval) if data.eval else generate_tasks(run.root / "data" / "eval", generate, seed, "test")
        dist.barrier()
        if not dist.is_main:
            train_path = Path(data.train) if data.train else generate_tasks(run.root / "data" / "train", generate, seed, "train", write=False)
            eval_path = Path(data.eval) if data.eval else generate_tasks(run.root / "data" / "eval", generate, seed, "test", write=False)
        train_tasks, eval_tasks = load_tasks(train_path), load_tasks(eval_path)[: config.eval.n]
        events.log(f"{len(train_tasks)} training tasks from {train_path}, {len(eval_tasks)} held-out from {eval_path}")
        perception: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
        perception_paths: list[Path] = []
        if config.curriculum.perception_first:
            if dist.is_main:
                perception_paths = list(perception_task_paths(config, run, seed))
            dist.barrier()
            if not dist.is_main:
                perception_paths = list(perception_task_paths(config, run, seed, write=False))
            perception = (load_tasks(perception_paths[0]), load_tasks(perception_paths[1])[: config.curriculum.perception.n_eval])
            events.log(f"curriculum: {len(perception[0])} perception tasks from {perception_paths[0]}, {len(perception[1])} held-out")

        # The server may read images from the data folders and nowhere else. It starts before
        # the policy, whose tokenizer learns the gold turns the server writes.
        roots = list(dict.fromkeys([path.parent.resolve() for path in [train_path, eval_path, *perception_paths]]))
        server_context, client = open_env(config, run, roots, events, dist.rank)
        try:
            return _prepare_and_run(config, run, events, client, train_tasks, eval_tasks, resume, interrupted, max_steps, dist, perception)
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
        run.close_reporters()
        log_file.close()
        dist.close()


def _prepare_and_run(config: RunConfig, run: RunDirectory, events: EventStream, client: EnvClient, train_tasks: list[dict[str, Any]],
                     eval_tasks: list[dict[str, Any]], resume: bool, interrupted: Interrupted, max_steps: int | None, dist: Distributed,
                     perception: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])) -> int:
    """The policy (new, or from the newest checkpoint) and its engine, then the stages."""
    seed = config.seed
    checkpoint = run.latest_checkpoint() if resume else None
    state: dict[str, Any] = {"global_step": 0, "sft_step": 0, "rl_step": 0, "stage": "start"}
    if checkpoint is not None:
        state = json.loads((checkpoint / "trainer_state.json").read_text())
        policy = load_checkpoint_policy(config, run, checkpoint)
        rng_state.restore(checkpoint / rng_file(dist.rank))
        run.discard_after(state["global_step"])
        events.log(f"resumed from {checkpoint} at {state}")
    else:
        base = run.root / BASE_POLICY if dist.is_main and config.policy.model == "micro" else None
        # A curriculum's perception answers are words the policy must write too.
        corpus = tokenizer_corpus(config, client, train_tasks + perception[0])
        policy = Policy.create(config.policy, corpus, seed, config.device, base)
        dist.broadcast_parameters(policy.model)
        # Two runs that start from the same model (the demo's arms) show the same sum here.
        run.update_run(initial_weights_checksum=parameter_checksum(policy.model))
        if dist.enabled:  # same weights everywhere, different samples on each rank
            torch.manual_seed(seed * 1_000_003 + dist.rank)
            random.seed(seed * 1_000_003 + dist.rank)
    events.log(f"policy {config.policy.model}: {parameter_count(policy.model):,} parameters on {policy.device}")
    check_sharding(config, dist)
    engine = make_training_engine(policy, config.distributed, dist)
    if checkpoint is not None and engine.load_master_weights(checkpoint):
        events.log(f"fp32 master weights from {checkpoint}")
    if dist.enabled:
        events.log(f"distributed: {dist.world} processes, strategy {engine.strategy}")
    options = episode_options(config)
    rollout_engine = RolloutEngine(config, dist, events)
    try:
        return _stages(config, run, events, policy, client, options, train_tasks, eval_tasks, state, checkpoint, interrupted, max_steps,
                       dist, engine, rollout_engine, perception)
    finally:
        rollout_engine.close()
        engine.close()


def _eval(config: RunConfig, run: RunDirectory, events: EventStream, policy: Policy, client: EnvClient, options: EpisodeOptions,
          tasks: list[dict[str, Any]], label: str, state: dict[str, Any], own_setting_only: bool = False,
          perception_tasks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    keep = (lambda arms: write_eval_records(run.root, label, state["global_step"], arms)) if run.writable else None  # noqa: E731
    results: dict[str, Any] = evaluate(policy, client, tasks, options, config.eval.max_new_tokens, own_setting_only, keep)
    if perception_tasks and not own_setting_only:  # a curriculum's checkpoints also measure its perception skill
        results.update(evaluate_perception(policy, client, perception_tasks, options, config.eval.max_new_tokens))
    results["timing/eval_s"] = time.perf_counter() - started
    record = {"step": state["global_step"], "stage": "eval", "label": label, **results}
    run.append_metrics(record)
    events.emit("eval", **record)
    events.log(f"eval {label}: " + ", ".join(f"{k.split('/')[-1]}={v:.3f}" for k, v in results.items() if v is not None))
    if not own_setting_only:  # the checkpoints' evaluations; the periodic curve lives in metrics.jsonl
        evaluations = run.read_run().get("evaluations", {})
        evaluations[label] = results
        run.update_run(evaluations=evaluations)
    return results


def _stages(config: RunConfig, run: RunDirectory, events: EventStream, policy: Policy, client: EnvClient, options: EpisodeOptions,
            train_tasks: list[dict[str, Any]], eval_tasks: list[dict[str, Any]], state: dict[str, Any], checkpoint: Path | None,
            interrupted: Interrupted, max_steps: int | None, dist: Distributed = Distributed(),
            engine: TrainingEngine | None = None, rollout_engine: RolloutEngine | None = None,
            perception: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])) -> int:
    seed, keep = config.seed, config.checkpoint.keep
    engine = engine or TrainingEngine(policy, dist)
    budget = {"left": max_steps if max_steps is not None else 1 << 62}

    def out_of_steps(time_is_up: bool = False) -> bool:
        return dist.agree(interrupted.flag or budget["left"] <= 0 or time_is_up)

    def evaluate_on_rank0(label: str, own_setting_only: bool = False) -> None:
        if dist.is_main:
            _eval(config, run, events, policy, client, options, eval_tasks, label, state, own_setting_only, perception[1])
        dist.barrier()

    if state["stage"] == "start":
        if config.eval.before_and_after and config.eval.before:
            evaluate_on_rank0("before")
        state["stage"] = "perception" if config.curriculum.perception_first else "sft" if config.sft.enabled else "rl"

    if state["stage"] == "perception":
        # V-Thinker's first stage: point localisation, direct answers (the gold has no tool turns).
        stage_config = perception_sft_config(config)
        events.emit("stage", stage="perception")
        conversations = gold_conversations(client, perception[0], options, seed=seed)
        optimizer = engine.make_optimizer(stage_config.lr, stage_config.weight_decay, 1.0)
        if checkpoint is not None and engine.has_optimizer(checkpoint) and state.get("perception_step", 0) > 0:
            engine.load_optimizer(optimizer, checkpoint)

        def on_perception_step(step: int, loss: float, seconds: float) -> None:
            state["perception_step"] = step
            state["global_step"] += 1
            budget["left"] -= 1
            record = {"step": state["global_step"], "stage": "perception", "perception/step": step, "perception/loss": loss,
                      "timing/step_s": seconds, "memory/trainer_peak_rss_mb": peak_rss_mb()}
            run.append_metrics(record)
            events.emit("step", **record)

        step, optimizer = run_sft(policy, conversations, stage_config, seed, on_perception_step, state.get("perception_step", 0),
                                  out_of_steps, optimizer, dist, engine)
        if step < stage_config.steps and out_of_steps():
            save_checkpoint(run, policy, optimizer, state, events, keep, dist, engine)
            return _finish(run, events, "interrupted" if interrupted.flag else "paused", state, policy, dist)
        state["stage"] = "sft" if config.sft.enabled else "rl" if config.rl.enabled else "done"
        save_checkpoint(run, policy, None, state, events, keep, dist, engine)
        if config.eval.before_and_after:
            evaluate_on_rank0("after_perception")

    if state["stage"] == "sft":
        sft = config.sft
        events.emit("stage", stage="sft")
        sft_tasks, probe_tasks = split_probe(train_tasks, sft.probe_tasks)
        conversations = gold_conversations(client, sft_tasks, options, no_tool_fraction=sft.no_tool_fraction, seed=seed)
        # Direct answers with the tools on, mixed into the batches as sft.direct_answer_fraction says.
        direct = (gold_conversations(client, sft_tasks, options, seed=seed, direct_answers=True)
                  if options.tools and sft.direct_answer_fraction > 0 else None)
        probe = None
        if probe_tasks and dist.is_main:  # the probe reads the policy's whole copy: rank 0 alone runs it
            held_out = gold_conversations(client, probe_tasks, options, seed=seed)
            pairs: list[tuple[int, int]] = []
            if options.tools:
                # Each task's tool trajectory beside its direct answer: the call-or-answer choice (sft_probe.py).
                pairs = [(index, index + len(held_out)) for index, conversation in enumerate(held_out)
                         if any(message.get("role") == "tool" for message in conversation.messages)]
                held_out += gold_conversations(client, probe_tasks, options, seed=seed, direct_answers=True)
            probe = SftProbe.build(policy, held_out, pairs)
            events.log(f"SFT probe: {len(probe_tasks)} training tasks held out of the SFT batches ({len(held_out)} gold conversations)")
        optimizer = engine.make_optimizer(sft.lr, sft.weight_decay, 1.0)
        warn_about_precision(events, engine, sft.lr, "sft")
        if checkpoint is not None and engine.has_optimizer(checkpoint) and state["sft_step"] > 0:
            engine.load_optimizer(optimizer, checkpoint)

        schedule = SftSchedule.from_config(sft, state.get("sft_schedule"))
        state["sft_schedule"] = schedule.state()
        run.update_run(sft_schedule=schedule.state())  # the dashboard marks the phases from it while SFT runs
        guard = WarmupGuard()  # a later phase that lowers an earlier phase's skill is reported (warmup_guard.py)

        def on_step(step: int, loss: float, seconds: float) -> None:
            state["sft_step"] = step
            state["global_step"] += 1
            budget["left"] -= 1
            record = {"step": state["global_step"], "stage": "sft", "sft/step": step, "sft/loss": loss, "timing/step_s": seconds,
                      "memory/trainer_peak_rss_mb": peak_rss_mb(), "memory/train_state_mb": engine.state_megabytes(optimizer)}
            if probe is not None and (step % sft.probe_every == 0 or step == sft.steps):
                probe_started = time.perf_counter()
                record.update(probe.measure(policy))
                record["timing/probe_s"] = time.perf_counter() - probe_started
                report_erosion(guard.observe(step, schedule.phase(step - 1), record), events, run)
            # Every rank asks at the same steps; rank 0's probe decides (sft_schedule.py).
            if probe_tasks and step % sft.probe_every == 0 and schedule.wants_probe_decision(step):
                if dist.agree(probe is not None and schedule.reached(step, record)):
                    ended = schedule.end_phase(step)
                    state["sft_schedule"] = schedule.state()
                    run.update_run(sft_schedule=schedule.state())
                    events.log(f"SFT phase {ended} ended at step {step}{' (and with it SFT)' if schedule.finished(step) else ''}: "
                               f"the probe reached its target ({', '.join(f'{k}={v:.2f}' for k, v in record.items() if k.startswith('sft/probe_'))})")
            run.append_metrics(record)
            events.emit("step", **record)

        def stop_sft(time_is_up: bool) -> bool:
            stop = out_of_steps(time_is_up)
            if stop and dist.agree(time_is_up) and not interrupted.flag and dist.is_main:
                record_time_cap(run, events, "sft", state["sft_step"], sft.steps, float(sft.max_seconds or 0),
                                schedule.phase(state["sft_step"]))
            return stop

        step, optimizer = run_sft(policy, conversations, sft, seed, on_step, state["sft_step"], stop_sft, optimizer, dist, engine,
                                  direct_conversations=direct, schedule=schedule)
        if step < sft.steps and out_of_steps():
            save_checkpoint(run, policy, optimizer, state, events, keep, dist, engine)
            return _finish(run, events, "interrupted" if interrupted.flag else "paused", state, policy, dist)
        report_erosion(guard.finish(), events, run)
        state["stage"] = "rl" if config.rl.enabled else "done"
        # Where the warm-up's phases ended (the report and the panels read it from run.json).
        run.update_run(sft_schedule=schedule.state())
        save_checkpoint(run, policy, None, state, events, keep, dist, engine)
        if config.eval.before_and_after:
            evaluate_on_rank0("after_sft")

    if state["stage"] == "rl":
        rl = config.rl
        events.emit("stage", stage="rl")
        optimizer = engine.make_optimizer(rl.lr, 0.0, rl.max_grad_norm)
        warn_about_precision(events, engine, rl.lr, "rl")
        if checkpoint is not None and engine.has_optimizer(checkpoint) and state["rl_step"] > 0:
            engine.load_optimizer(optimizer, checkpoint)
        reference = None
        if rl.kl_coef > 0:
            reference = copy.deepcopy(policy.model).eval()
            for parameter in reference.parameters():
                parameter.requires_grad_(False)
        sampler = rollout_engine.start(policy) if rollout_engine is not None else None
        started = time.perf_counter()
        while state["rl_step"] < rl.steps:
            time_is_up = rl.max_seconds is not None and time.perf_counter() - started > rl.max_seconds
            if out_of_steps(time_is_up):
                if dist.agree(time_is_up) and not interrupted.flag and dist.is_main:
                    record_time_cap(run, events, "rl", state["rl_step"], rl.steps, float(rl.max_seconds or 0))
                break
            step_started = time.perf_counter()
            result = grpo_step(policy, optimizer, client, train_tasks, rl, options, seed, state["rl_step"], reference, dist, engine, sampler)
            synced = rollout_engine.after_update() if rollout_engine is not None else {}
            state["rl_step"] += 1
            state["global_step"] += 1
            budget["left"] -= 1
            step_seconds = time.perf_counter() - step_started
            record = {"step": state["global_step"], "stage": "rl", "rl/step": state["rl_step"], **result.metrics,
                      "timing/step_s": step_seconds, "timing/env_fraction": result.metrics["timing/env_s"] / max(step_seconds, 1e-9),
                      "memory/trainer_peak_rss_mb": peak_rss_mb(), "memory/train_state_mb": engine.state_megabytes(optimizer),
                      **env_memory(client), **synced}
            run.append_metrics(record)
            limit = config.logging.rollouts_per_step
            share = -(-limit // dist.world)
            records = [rollout_record(rollout, state["global_step"], policy.processor.tokenizer.decode) for rollout in result.generated[:share]]
            records = [record for rank_records in dist.gather(records) for record in rank_records][:limit]
            run.append_rollouts(state["global_step"], records)
            if limit:
                events.emit("rollouts", step=state["global_step"], path=str(run.rollouts_path(state["global_step"])), count=len(records))
            events.emit("step", **record)
            for message in result.warnings:
                events.warning(message, step=state["global_step"])
            every_eval = config.eval.every_steps
            if every_eval and state["rl_step"] % every_eval == 0 and state["rl_step"] < rl.steps:
                evaluate_on_rank0(f"rl_step_{state['rl_step']}", own_setting_only=True)
            every = config.checkpoint.every_steps
            if every and state["rl_step"] % every == 0 and state["rl_step"] < rl.steps:
                save_checkpoint(run, policy, optimizer, state, events, keep, dist, engine)
        if state["rl_step"] < rl.steps and (rl.max_seconds is None or out_of_steps()):
            save_checkpoint(run, policy, optimizer, state, events, keep, dist, engine)
            return _finish(run, events, "interrupted" if interrupted.flag else "paused", state, policy, dist)
        state["stage"] = "done"
        save_checkpoint(run, policy, None, state, events, keep, dist, engine)
        if config.eval.before_and_after:
            evaluate_on_rank0("after_rl")
    return _finish(run, events, "finished", state, policy, dist)


def warn_about_precision(events: EventStream, engine: TrainingEngine, lr: float, stage: str) -> None:
    message = half_precision_warning(engine, lr)
    if message:
        events.warning(f"{stage}: {message}")


def check_sharding(config: RunConfig, dist: Distributed) -> None:
    """A sharded strategy runs every micro-batch on every rank together, so each rank needs a share
    of every batch; say so before any work is done."""
    strategy = config.distributed.strategy
    if strategy == "ddp" or not dist.enabled:
        return
    problems = []
    if config.sft.enabled and config.sft.batch_size < dist.world:
        problems.append(f"sft.batch_size {config.sft.batch_size} is below the {dist.world} processes")
    if config.rl.enabled and config.rl.prompts_per_step < dist.world:
        problems.append(f"rl.prompts_per_step {config.rl.prompts_per_step} is below the {dist.world} processes")
    if problems:
        raise ValueError(f"distributed.strategy {strategy!r} needs a share of every batch on each rank: " + "; ".join(problems)
                         + " (raise them, use fewer processes, or strategy 'ddp')")


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


def _finish(run: RunDirectory, events: EventStream, status: str, state: dict[str, Any], policy: Policy | None = None,
            dist: Distributed = Distributed()) -> int:
    fields: dict[str, Any] = {}
    if dist.enabled and policy is not None:
        fields["replica_checksums"] = dist.gather(parameter_checksum(policy.model))
        fields["peak_rss_mb_per_rank"] = dist.gather(peak_rss_mb())
    run.update_run(status=status, ended_at=time.time(), state=state, memory={"trainer_peak_rss_mb": peak_rss_mb()}, **fields)
    events.emit("finished", status=status, **state)
    return 0
