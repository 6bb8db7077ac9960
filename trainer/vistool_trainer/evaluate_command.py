"""`eval`: load a checkpoint (or the newest in the run directory) and evaluate it on held-out tasks."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .env_client import EnvClient, LocalEnvServer, token_from
from .evaluate import evaluate
from .policy import Policy
from .rollout import load_tasks
from .run_config import load_config
from .run_directory import RunDirectory
from .train import episode_options


def evaluate_checkpoint(config_path: str, checkpoint: str | None, n: int | None) -> int:
    config = load_config(Path(config_path))
    run = RunDirectory(Path(config["output_dir"]))
    folder = Path(checkpoint) if checkpoint else run.latest_checkpoint()
    if folder is None:
        print(f"no checkpoint in {run.checkpoints}: train first or pass --checkpoint", file=sys.stderr)
        return 2
    eval_path = Path(config["data"]["eval"]) if config["data"]["eval"] else run.root / "data" / "eval" / "tasks.jsonl"
    tasks = load_tasks(eval_path)[: n or config["eval"]["n"]]
    policy = Policy.load(folder / "policy" if (folder / "policy").exists() else folder, config["device"], config["policy"]["dtype"])
    if config["env"]["url"]:
        results = evaluate(policy, EnvClient(config["env"]["url"], token_from(config["env"])), tasks, episode_options(config), config["eval"]["max_new_tokens"])
    else:
        with LocalEnvServer(eval_path.parent.resolve(), run.images, run.root / "logs" / "env-token", run.root / "logs" / "env-server.log") as client:
            results = evaluate(policy, client, tasks, episode_options(config), config["eval"]["max_new_tokens"])
    print(json.dumps({"event": "eval", "checkpoint": str(folder), "pid": os.getpid(), **results}), flush=True)
    return 0
