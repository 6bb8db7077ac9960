"""The rollout loop against the real `vistool serve` and tasks from `vistool data gen`."""
import subprocess
from pathlib import Path

import pytest

from vistool_trainer.env_client import LocalEnvServer
from vistool_trainer.environment_check import repo_root
from vistool_trainer.policy import Policy
from vistool_trainer.rollout import EpisodeOptions, load_tasks, run_rollouts


def _has_command(name: str) -> bool:
    bundle = repo_root() / "dist" / "cli.js"
    if not bundle.exists():
        return False
    result = subprocess.run(["node", str(repo_root() / "bin" / "vistool.js"), name, "--help"], capture_output=True, text=True, cwd=repo_root())
    return result.returncode == 0 and "Unknown" not in result.stderr


@pytest.mark.skipif(not (repo_root() / "dist" / "cli.js").exists(), reason="dist/cli.js is missing: run `npm run build`")
def test_rollouts_through_the_real_env_server(tmp_path):
    if not (_has_command("serve") and _has_command("data")):
        pytest.skip("bin/vistool.js does not register `serve` and `data gen` yet (env/cli/main.ts commands list)")
    out = tmp_path / "tasks"
    subprocess.run(["node", str(repo_root() / "bin" / "vistool.js"), "data", "gen", "--kind", "table", "--n", "4", "--seed", "1",
                    "--difficulty", "1", "--image-size", "224x112", "--out", str(out)], check=True, cwd=repo_root())
    tasks = load_tasks(out / "tasks.jsonl")
    policy = Policy.create({"model": "micro", "micro": {"vocab_size": 400}}, [t["question"] for t in tasks] * 5, 1, "cpu")
    with LocalEnvServer(out, tmp_path / "images", tmp_path / "token", tmp_path / "server.log") as client:
        rollouts = run_rollouts(policy, client, tasks[:2], 2, EpisodeOptions(max_turns=2, system_prompt=""), 8, 1.0)
    assert len(rollouts) == 4
    assert all(r.turns >= 1 and r.trajectory.get("prompt_id") for r in rollouts)
