"""`train`: one config, two stages — SFT warm-up on gold trajectories, then GRPO/DAPO from that
checkpoint — with evaluation before and after, all written to the run directory.

SIGINT saves a checkpoint and exits 0; `--resume` continues from the newest complete checkpoint
(same data order and RNG state). The env server is started for the run unless env.url is set.
Launched as N processes (accelerate/torchrun), each rank rolls out its share and gradients are
summed (distributed.py); rank 0 alone writes the run directory and speaks on stdout.

This module opens the run (its tasks, the env server, the policy and its engine); the stages are
classes in stages.py, over one StageContext (stage_context.py) and the typed RunState that
trainer_state.json holds (run_state.py).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from ..checkout import repo_root
from ..config import DataGenerateConfig, RunConfig, to_dict
from ..engines.distributed import Distributed, init_distributed
from ..engines.factory import make_training_engine
from ..model.micro_model import parameter_count
from ..model.policy import Policy, gradient_checkpointing_wanted
from ..rollouts.env_client import EnvClient, LocalEnvServer, token_from
from ..rollouts.presentation import episode_options, policy_corpus, presentation_of
from ..rollouts.rollout import load_tasks
from . import rng_state
from .environment_check import check_environment
from .events import EventStream
from .report_to import reporters_for_run
from .rollout_engine import RolloutEngine
from .run_config import resolve_config
from .run_directory import RunDirectory, write_json_atomic
from .run_state import RunState, StepBudget
from .checkpoint_policy import BASE_POLICY, load_checkpoint_policy
from .cpu_kernels import ONEDNN_VARIABLE, cpu_model
from .stage_context import Interrupted, RunSetting, StageContext, TaskSets, parameter_checksum, rng_file
from .stages import run_stages

class _Discard:
    """A stdout for ranks other than 0: the event protocol has one speaker."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


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
    if generate.max_pixels is not None:
        arguments += ["--max-pixels", str(generate.max_pixels)]
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


def refuse_bridge_only_settings(config: RunConfig) -> None:
    """rl.train_turns 'final' (VTool-R1 v2's mask: only the turn that ends the episode is trained)
    is carried out by the veRL bridge's agent loop; this trainer trains every turn of an episode, so
    it stops before any work rather than train what the config says it will not."""
    if config.rl.enabled and config.rl.train_turns != "all":
        raise ValueError(f"rl.train_turns is {config.rl.train_turns!r}, which only the veRL bridge carries out (engine 'verl', "
                         "`vistool config export --to verl`; docs/VERL.md): this trainer trains every assistant turn. Set "
                         "rl.train_turns to 'all' to train here, or run the config on veRL")


def train(config: RunConfig, max_steps: int | None = None, resume: bool = False, events: EventStream | None = None) -> int:
    refuse_bridge_only_settings(config)
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
        # The ATen kernel path this process dispatches to (AVX512, AVX2, DEFAULT...: what the CPU has, or
        # ATEN_CPU_CAPABILITY; run/cpu_kernels.py): each path rounds differently, so a run's numbers hold for it,
        # on the CPU named beside it, with oneDNN's cap where one was set (null: the CPU's own).
        run.update_run(status="running", pid=os.getpid(), name=config.name, started_at=time.time(), versions=versions(), world_size=dist.world,
                       cpu_capability=torch.backends.cpu.get_cpu_capability(), cpu=cpu_model(),
                       onednn_max_cpu_isa=os.environ.get(ONEDNN_VARIABLE) or None)
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
        fresh = config.rl.fresh_tasks if config.rl.enabled else 0
        tasks = TaskSets(load_tasks(train_path), load_tasks(eval_path)[: config.eval.n], fresh_tasks=fresh)
        events.log(f"{len(tasks.train)} training tasks from {train_path}, {len(tasks.eval)} held-out from {eval_path}")
        if fresh:
            events.log(f"rl.fresh_tasks: RL draws its prompts from the last {fresh} training tasks only, which SFT never trains on "
                       f"(SFT has the first {len(tasks.sft_train)})")
        perception_paths: list[Path] = []
        if config.curriculum.perception_first:
            if dist.is_main:
                perception_paths = list(perception_task_paths(config, run, seed))
            dist.barrier()
            if not dist.is_main:
                perception_paths = list(perception_task_paths(config, run, seed, write=False))
            tasks.perception_train = load_tasks(perception_paths[0])
            tasks.perception_eval = load_tasks(perception_paths[1])[: config.curriculum.perception.n_eval]
            events.log(f"curriculum: {len(tasks.perception_train)} perception tasks from {perception_paths[0]}, "
                       f"{len(tasks.perception_eval)} held-out")

        # The server may read images from the data folders and nowhere else. It starts before
        # the policy, whose tokenizer learns the gold turns the server writes.
        roots = list(dict.fromkeys([path.parent.resolve() for path in [train_path, eval_path, *perception_paths]]))
        server_context, client = open_env(config, run, roots, events, dist.rank)
        try:
            return _prepare_and_run(RunSetting(config, run, events, client, tasks, interrupted, dist, max_steps), resume)
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


def _prepare_and_run(setting: RunSetting, resume: bool) -> int:
    """The policy (new, or from the newest checkpoint) and its engine, then the stages."""
    config, run, events, dist = setting.config, setting.run, setting.events, setting.dist
    seed = config.seed
    checkpoint = run.latest_checkpoint() if resume else None
    state = RunState()
    if checkpoint is not None:
        state = RunState.from_dict(json.loads((checkpoint / "trainer_state.json").read_text()))
        policy = load_checkpoint_policy(config, run, checkpoint)
        rng_state.restore(checkpoint / rng_file(dist.rank))
        run.discard_after(state.global_step)
        events.log(f"resumed from {checkpoint} at {state.to_dict()}")
    else:
        base = run.root / BASE_POLICY if dist.is_main and config.policy.model == "micro" else None
        # A curriculum's perception answers are words the policy must write too.
        corpus = tokenizer_corpus(config, setting.client, setting.tasks.train + setting.tasks.perception_train)
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
    rollout_engine = RolloutEngine(config, dist, events)
    try:
        return run_stages(StageContext(setting, policy, engine, episode_options(config, policy.processor), state, checkpoint, rollout_engine,
                                       StepBudget.of(setting.max_steps)))
    finally:
        rollout_engine.close()
        engine.close()


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
