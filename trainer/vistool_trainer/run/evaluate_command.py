"""`eval`: load a checkpoint (or the newest in the run directory) and evaluate it on held-out tasks.

The config is usually the checkpoint's own (or one derived from it), so keys the schema has
removed since are dropped with a warning event (config_migration) instead of failing."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..model.policy import Policy
from ..rollouts.rollout import load_tasks
from ..trainers.evaluate import evaluate, evaluation_options
from .config_migration import load_saved_config
from .eval_records import write_eval_records
from .events import EventStream
from .run_config import ConfigError
from .run_directory import RunDirectory
from ..rollouts.presentation import episode_options
from .train import generate_tasks, open_env


def checkpoint_step(folder: Path) -> int:
    """The global step a checkpoint was saved at: trainer_state.json's, else its folder name's (step-NNNNNN), else 0."""
    try:
        return int(json.loads((folder / "trainer_state.json").read_text())["global_step"])
    except (OSError, ValueError, KeyError, TypeError):
        digits = "".join(c for c in folder.name if c.isdigit())
        return int(digits) if digits else 0


def evaluate_checkpoint(config_path: str, checkpoint: str | None, n: int | None) -> int:
    events = EventStream()
    try:
        config = load_saved_config(Path(config_path), events.warning)
    except ConfigError as error:
        events.emit("failed", error=str(error))
        print(str(error), file=sys.stderr)
        return 2
    run = RunDirectory(Path(config.output_dir))
    folder = Path(checkpoint) if checkpoint else run.latest_checkpoint()
    if folder is None:
        print(f"no checkpoint in {run.checkpoints}: train first or pass --checkpoint", file=sys.stderr)
        return 2
    eval_path = Path(config.data.eval) if config.data.eval else generate_tasks(run.root / "data" / "eval", config.data.generate, config.seed, "test")
    tasks = load_tasks(eval_path)[: n or config.eval.n]
    policy = Policy.load(folder / "policy" if (folder / "policy").exists() else folder, config.device, config.policy.dtype)
    server, client = open_env(config, run, [eval_path.parent.resolve()], events)
    # The checkpoint's per-task records join the run's other evaluations (the viewer compares them).
    label = f"checkpoint_{folder.name.replace('-', '_')}"
    keep = lambda arms: write_eval_records(run.root, label, checkpoint_step(folder), arms)  # noqa: E731
    try:
        results = evaluate(policy, client, tasks, evaluation_options(episode_options(config, policy.processor), config.eval.max_turns), config.eval.max_new_tokens, keep=keep,
                           counterfactual=config.eval.counterfactual)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    events.emit("eval", checkpoint=str(folder), pid=os.getpid(), **results)
    return 0
