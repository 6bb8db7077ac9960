"""HTTP client for the vistool env server (docs/CONTRACTS.md): bearer token, loopback, JSON.

Also starts a local server (`node bin/vistool.js serve --port 0 ...`) and stops the process it
started. The client sends model text as it is; parsing and tool execution happen in the server.
Uses only the standard library (http.client), one persistent connection per client.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlparse

from ..checkout import repo_root
from ..config import EnvConfig


class EnvServerError(RuntimeError):
    pass


# A batch request's time limit grows with its items: 64 search episodes (768x576 scenes) took over
# the flat 120 s to open on a 2-core machine running five trainings, and the demo died in its warm-up.
BATCH_ITEM_TIMEOUT_S = 5.0


@dataclass
class EnvClient:
    url: str
    token: str
    timeout_s: float = 120.0

    def __post_init__(self) -> None:
        parsed = urlparse(self.url)
        if parsed.scheme != "http" or parsed.hostname is None:
            raise ValueError(f"env server url {self.url!r} must be http://HOST:PORT")
        self._host = parsed.hostname
        self._port = parsed.port or 80
        self._connection: http.client.HTTPConnection | None = None

    def _request(self, method: str, path: str, body: Any = None, items: int = 0) -> Any:
        payload = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        timeout = self.timeout_s + BATCH_ITEM_TIMEOUT_S * items
        for attempt in range(2):
            if self._connection is None:
                self._connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
            self._connection.timeout = timeout
            if self._connection.sock is not None:
                self._connection.sock.settimeout(timeout)
            try:
                self._connection.request(method, path, body=payload, headers=headers)
                response = self._connection.getresponse()
                raw = response.read()
                break
            except TimeoutError as error:
                # The late answer would arrive on this keep-alive connection and be read as the next
                # request's: drop the connection with the request.
                self.close()
                raise TimeoutError(f"{method} {path}" + (f" ({items} items)" if items else "") + f": the env server did not answer "
                                   f"in {timeout:.0f} s; a loaded machine is the usual cause (EnvClient.timeout_s sets the base)") from error
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A keep-alive connection the server closed: reconnect once.
                self._connection.close()
                self._connection = None
                if attempt == 1:
                    raise
        data = json.loads(raw.decode("utf-8")) if raw else {}
        if response.status >= 400:
            message = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("error", raw[:300])
            raise EnvServerError(f"{method} {path} failed with HTTP {response.status}: {message}")
        return data

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # ---- API -----------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self._request("GET", "/v1/health")

    def tools(self) -> dict[str, Any]:
        return self._request("GET", "/v1/tools")

    def start_episodes(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._batch("/v1/batch/episodes", items)

    def step_episodes(self, items: list[dict[str, Any]], soft: bool = False) -> list[dict[str, Any]]:
        """`soft`: a failed item comes back in place as {"error": {"status", "message"}} instead of raising."""
        return self._batch("/v1/batch/step", items, soft)

    def score_episodes(self, episode_ids: list[str], soft: bool = False) -> list[dict[str, Any]]:
        return self._batch("/v1/batch/score", [{"episode_id": episode_id} for episode_id in episode_ids], soft)

    def gold(self, tasks: list[dict[str, Any]], chunk: int = 512) -> list[dict[str, Any]]:
        """Each task's gold assistant turns as the env writes them ({"tool_turns": [...], "answer": ...,
        "user_text": the user turn's text}): the trainer warms up on this text and never writes it
        itself (env/tasks/gold.ts)."""
        wire = [{"task": {k: v for k, v in task.items() if not k.startswith("_")}} for task in tasks]  # `_` keys are the trainer's own
        return [result for offset in range(0, len(wire), chunk) for result in self._batch("/v1/batch/gold", wire[offset:offset + chunk])]

    def presentation_texts(self, presentation: dict[str, Any] | None) -> list[str]:
        """Every text a policy may read under `presentation` that no task writes: the env's fixed
        observation words and the presentation's own system turns (POST /v1/presentation)."""
        return list(self._request("POST", "/v1/presentation", {"presentation": presentation})["texts"])

    def trajectory(self, episode_id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/episodes/{episode_id}")

    def close_episode(self, episode_id: str) -> None:
        self._request("DELETE", f"/v1/episodes/{episode_id}")

    def _batch(self, path: str, items: list[dict[str, Any]], soft: bool = False) -> list[dict[str, Any]]:
        if not items:
            return []
        results = self._request("POST", path, {"items": items}, items=len(items))["results"]
        if soft:
            return results
        for index, result in enumerate(results):
            if isinstance(result, dict) and "error" in result:
                error = result["error"]
                raise EnvServerError(f"{path} item {index} failed with HTTP {error.get('status')}: {error.get('message')}")
        return results


def _die_with_parent() -> None:
    """In the server child, before exec: ask Linux to SIGTERM it when the trainer dies, so a
    SIGKILLed trainer (OOM killer, a cluster pre-emption, the resume test) leaves no server behind."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# glibc raises its mmap threshold each time a large block is freed, so after one round of
# concurrent episodes the server's image buffers come from the heap and the peak is never given
# back (measured: 376 → 388 MiB over 5 soak rounds, against 213–299 MiB with the threshold fixed).
# A fixed threshold keeps buffers of 64 KiB and more in their own mappings, returned on free.
# It must be in the environment when the process starts; other allocators ignore it.
SERVER_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536"}


def server_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The environment for a `vistool serve` child: `base` plus the allocator settings it lacks."""
    return {**SERVER_MALLOC_ENV, **base}


class LocalEnvServer:
    """A `vistool serve` child process on 127.0.0.1 with a random port; a context manager."""

    def __init__(self, root: Path | list[Path], images_dir: Path, token_file: Path, log_path: Path | None = None, node: str = EnvConfig.node,
                 reward_config: Path | None = None):
        # Each data folder is its own allowed root: a common parent of two trees could be "/".
        self.roots = [Path(r) for r in (root if isinstance(root, list) else [root])]
        self.root = self.roots[0]
        self.images_dir, self.token_file, self.log_path, self.node = images_dir, token_file, log_path, node
        self.reward_config = reward_config
        self.process: subprocess.Popen[str] | None = None
        self.client: EnvClient | None = None

    def __enter__(self) -> EnvClient:
        cli = repo_root() / "bin" / "vistool.js"
        bundle = repo_root() / "dist" / "cli.js"
        if not bundle.exists():
            raise EnvServerError(f"the env server bundle {bundle} is missing: run `npm run build` in {repo_root()}")
        log = open(self.log_path, "a") if self.log_path else subprocess.DEVNULL
        command = [self.node, str(cli), "serve", "--port", "0", "--token-file", str(self.token_file),
                   *[arg for r in self.roots for arg in ("--root", str(r))], "--images-dir", str(self.images_dir), "--quiet"]
        if self.reward_config is not None:
            command += ["--reward-config", str(self.reward_config)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=repo_root(),
                                        env=server_environment(os.environ),
                                        preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        assert self.process.stdout is not None
        deadline = time.time() + 60
        line = ""
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line and self.process.poll() is not None:
                break
            if line.strip().startswith("{"):
                event = json.loads(line)
                if event.get("event") == "listening":
                    token = Path(self.token_file).read_text().strip()
                    self.client = EnvClient(event["url"], token)
                    self.client.health()
                    return self.client
        self.__exit__(None, None, None)
        raise EnvServerError(f"the env server did not start (`{' '.join(command)}`); last output: {line.strip()!r}; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()


def short_lived_server(work: Any) -> Any:
    """`work(client)` against a short-lived env server, for code outside a run that needs the env's
    text (the micro model of the veRL smoke, test fixtures); a run asks its own server."""
    with tempfile.TemporaryDirectory(prefix="vistool-env-") as scratch:
        with LocalEnvServer(Path(scratch), Path(scratch) / "images", Path(scratch) / "token") as client:
            return work(client)


def token_from(config_env: EnvConfig) -> str:
    if config_env.get("token_file"):
        return Path(config_env["token_file"]).read_text().strip()
    token = os.environ.get("VISTOOL_TOKEN")
    if not token:
        raise EnvServerError("env.url is set but there is no token: set env.token_file or $VISTOOL_TOKEN")
    return token
