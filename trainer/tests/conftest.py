"""Shared fixtures: the REAL env server (`node bin/vistool.js serve`) and tasks from the REAL
generator (`node bin/vistool.js data gen`). The env server is this project's own component, so
no test replaces it with a stand-in; when dist/cli.js is missing the fixture builds it
(`npm run build`) instead of skipping.
"""
import importlib.util
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import vistool_trainer  # noqa: F401  (sets OMP_WAIT_POLICY before torch loads)
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
torch.set_num_threads(1)

from vistool_trainer.rollouts.env_client import LocalEnvServer  # noqa: E402
from vistool_trainer.checkout import repo_root  # noqa: E402

_build_lock = threading.Lock()

# The vLLM suite (tests/vllm_suite) runs in its own environment, .venv-vllm (`make test-vllm`); where vLLM
# is not installed it is not collected at all, rather than collected and skipped.
collect_ignore = [] if importlib.util.find_spec("vllm") else ["vllm_suite"]


def ensure_cli_bundle() -> Path:
    """dist/cli.js, built with `npm run build` when it is missing (a failed build fails the test)."""
    bundle = repo_root() / "dist" / "cli.js"
    with _build_lock:
        if not bundle.exists():
            result = subprocess.run(["npm", "run", "build"], cwd=repo_root(), capture_output=True, text=True, timeout=600)
            if result.returncode != 0 or not bundle.exists():
                raise RuntimeError(f"`npm run build` failed (exit {result.returncode}); the env server cannot start:\n{result.stderr[-2000:]}")
    return bundle


def generate_tasks(out: Path, n: int, split: str = "train", kind: str = "vbar", seed: int = 1, image_size: str = "112x112") -> Path:
    """Tasks from the real generator (`vistool data gen`), difficulty 1."""
    ensure_cli_bundle()
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "data", "gen", "--kind", kind, "--n", str(n), "--seed", str(seed),
               "--split", split, "--difficulty", "1", "--image-size", image_size, "--out", str(out)]
    result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed: {result.stderr[-1000:]}")
    return out / "tasks.jsonl"


@pytest.fixture(scope="session")
def cli_bundle() -> Path:
    return ensure_cli_bundle()


@pytest.fixture(scope="session")
def vbar_data(tmp_path_factory, cli_bundle):
    """(train tasks.jsonl, held-out tasks.jsonl): small vertical-bar sets, 112x112, difficulty 1."""
    root = tmp_path_factory.mktemp("vbar-data")
    return generate_tasks(root / "train", 24, "train"), generate_tasks(root / "eval", 6, "test")


@pytest.fixture(scope="session")
def env_server(tmp_path_factory, vbar_data):
    """One real env server for the session: (client, token file). Its root holds both splits."""
    root = vbar_data[0].parent.parent
    tmp = tmp_path_factory.mktemp("env-server")
    server = LocalEnvServer(root, tmp / "images", tmp / "token", tmp / "server.log")
    client = server.__enter__()
    try:
        yield client, tmp / "token"
    finally:
        server.__exit__(None, None, None)


class _JudgeHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.requests.append(body)  # type: ignore[attr-defined]
        reply = json.dumps({"id": "j", "object": "chat.completion", "model": body.get("model", "judge"),
                            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "<|YES|>"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def judge_server():
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that always says <|YES|>.

    The LLM judge is a third-party service (vLLM, an API): the one true external boundary of
    scoring, so it is the one thing replaced here. `.requests` lists the bodies it received."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JudgeHandler)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def policy_section(**extra: object) -> dict:
    from model_under_test import policy_section as section

    return section(**extra)


def write_run_config(tmp: Path, name: str, train_path: Path, eval_path: Path, **sections: object) -> Path:
    """`tmp/NAME.json`: a run of the micro policy (or the Qwen fixture: model_under_test.py) on CPU (one thread, empty system prompt, a small
    vocabulary, two turns, no evaluation), output in `tmp/NAME`. Each keyword replaces a top-level
    key; a dict extends that section of the defaults."""
    config: dict = {
        "name": name, "seed": 1, "output_dir": str(tmp / name), "device": "cpu", "threads": 1,
        "data": {"train": str(train_path), "eval": str(eval_path)},
        "policy": policy_section(system_prompt=""),
        "env": {"max_turns": 2, "max_tool_calls": 1},
        "eval": {"before_and_after": False},
    }
    for key, value in sections.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) and isinstance(config.get(key), dict) else value
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(config))
    return path
