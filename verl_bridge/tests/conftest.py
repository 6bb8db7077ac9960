"""Fixtures: real generated tasks, a real `vistool serve`, a fresh micro Qwen2.5-VL saved to disk."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vistool_trainer.rollouts.env_client import LocalEnvServer, short_lived_server
from vistool_trainer.checkout import repo_root
from vistool_trainer.model.micro_model import MicroSize, build_micro_policy, save_policy
from vistool_trainer.rollouts.presentation import policy_corpus
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.smoke import generate_tasks


def generate(out: Path, n: int, seed: int) -> Path:
    if not (repo_root() / "dist" / "cli.js").exists():
        subprocess.run(["npm", "run", "build"], cwd=repo_root(), check=True, capture_output=True)
    return generate_tasks(out, n, seed)


@pytest.fixture(scope="session")
def tasks_path(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("tasks"), 4, 3)


@pytest.fixture(scope="session")
def micro_dir(tmp_path_factory, tasks_path) -> Path:
    directory = tmp_path_factory.mktemp("micro")
    tasks = load_tasks(tasks_path)
    model, processor = build_micro_policy(short_lived_server(lambda client: policy_corpus(client, tasks, None)), MicroSize(), 0)
    save_policy(model, processor, directory)
    return directory


@pytest.fixture(scope="session")
def env_server(tmp_path_factory, tasks_path):
    """(client, token file, images dir) of one real env server rooted at the tasks' folder."""
    scratch = tmp_path_factory.mktemp("env")
    server = LocalEnvServer(tasks_path.parent, scratch / "images", scratch / "token", scratch / "server.log")
    client = server.__enter__()
    try:
        yield client, scratch / "token", scratch / "images"
    finally:
        server.__exit__(None, None, None)
