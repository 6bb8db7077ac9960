"""Where the agent loop finds the env server: the loop's own config keys first, then the
environment variables the launch script exports (VISTOOL_ENV_URL, VISTOOL_ENV_TOKEN_FILE).
Each episode gets its own client, because veRL runs many episodes at once on one event loop and
an HTTP connection must not be shared between threads.

The exported run.sh starts one server on loopback, on the node it runs on. veRL 0.9.1 places its
agent-loop workers round-robin over every live Ray node with CPUs (AgentLoopManager.
_init_agent_loop_workers: `ray.nodes()`, not trainer.nnodes), so a loopback address is refused when
those workers can land on more than one node (docs/VERL.md, "More than one node"): such a run needs
a server every node reaches."""
from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from vistool_trainer.rollouts.env_client import EnvClient, EnvServerError

__all__ = ["EnvAddress", "EnvServerError", "agent_loop_worker_nodes", "env_call_pool", "off_loop"]

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


@dataclass(frozen=True)
class EnvAddress:
    url: str
    token: str

    @classmethod
    def resolve(cls, url: str | None = None, token_file: str | None = None) -> "EnvAddress":
        url = url or os.environ.get("VISTOOL_ENV_URL")
        token_file = token_file or os.environ.get("VISTOOL_ENV_TOKEN_FILE")
        if not url or not token_file:
            raise ValueError("the vistool agent loop needs the env server: set env_url and env_token_file in the agent loop "
                             "config, or VISTOOL_ENV_URL and VISTOOL_ENV_TOKEN_FILE (the recipe's run.sh starts a server and sets both)")
        path = Path(token_file)
        if not path.is_file():
            raise ValueError(f"the env server's token file {path} does not exist (VISTOOL_ENV_TOKEN_FILE / env_token_file)")
        return cls(url=url, token=path.read_text().strip())

    def is_loopback(self) -> bool:
        host = urlsplit(self.url).hostname or ""
        return host in LOOPBACK_HOSTS or host.startswith("127.")

    def refuse_loopback_across_nodes(self, nnodes: int, worker_nodes: int = 1) -> None:
        """`nnodes`: trainer.nnodes; `worker_nodes`: the Ray nodes veRL spreads its agent-loop workers over
        (agent_loop_worker_nodes), which can be more than nnodes (a CPU-only head node counts too)."""
        if max(nnodes, worker_nodes) > 1 and self.is_loopback():
            raise ValueError(
                f"the env server is at {self.url}, a loopback address, but the run has trainer.nnodes={nnodes} and its agent-loop "
                f"workers go to {worker_nodes} Ray node(s): veRL places them round-robin on every live Ray node with CPUs, and the "
                "other nodes cannot reach this one's loopback. Start one server that every node "
                "reaches (`vistool serve --host ADDRESS --allow-remote --token-file FILE --images-dir DIR`, with FILE and DIR on "
                "storage all nodes share) and give its URL and token file (env.url and env.token_file in the run config, or "
                "VISTOOL_ENV_URL and VISTOOL_ENV_TOKEN_FILE); docs/VERL.md, \"More than one node\"")

    def client(self) -> EnvClient:
        return EnvClient(self.url, self.token)


@lru_cache(maxsize=1)
def _ray_nodes_once() -> list[dict[str, Any]] | None:
    """`ray.nodes()` once per process (veRL makes a loop per episode; the workers were placed at start),
    or None outside Ray."""
    try:
        import ray
    except ImportError:
        return None
    return ray.nodes() if ray.is_initialized() else None


def agent_loop_worker_nodes(num_workers: int, nodes: list[dict[str, Any]] | None = None) -> int:
    """How many Ray nodes veRL 0.9.1 puts `num_workers` agent-loop workers on: round-robin over the live
    nodes that have CPUs, as its AgentLoopManager does. `nodes` is `ray.nodes()`; without it, Ray's own
    when Ray is running in this process, else 1 (a loop made outside Ray, as in the tests)."""
    if nodes is None:
        nodes = _ray_nodes_once()
        if nodes is None:
            return 1
    usable = [node for node in nodes if node.get("Alive") and (node.get("Resources") or {}).get("CPU", 0) > 0]
    return max(1, min(int(num_workers), len(usable)))


# Env calls block for as long as the env server takes: a step runs a tool, and a score can wait on the
# LLM judge (rewards.judge.deadline_ms, 45 s by default). veRL's agent loop runs its tokenizer and token
# builder on the event loop's default executor (min(32, CPUs + 4) threads); env calls there would take
# its threads and stall every other episode's tokenization. They get a pool of their own.
ENV_CALL_THREADS = int(os.environ.get("VISTOOL_ENV_CALL_THREADS", "64"))
_env_pool: ThreadPoolExecutor | None = None
_env_pool_lock = threading.Lock()


def env_call_pool() -> ThreadPoolExecutor:
    """The process's thread pool for blocking env server calls (made on first use)."""
    global _env_pool
    with _env_pool_lock:
        if _env_pool is None:
            if ENV_CALL_THREADS < 1:
                raise ValueError(f"VISTOOL_ENV_CALL_THREADS is {ENV_CALL_THREADS}; it must be 1 or more (threads for env server calls)")
            _env_pool = ThreadPoolExecutor(max_workers=ENV_CALL_THREADS, thread_name_prefix="vistool-env")
        return _env_pool


async def off_loop(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A blocking env call, run on the env calls' own thread pool so the other episodes keep
    generating and veRL's tokenizer keeps the event loop's default executor."""
    return await asyncio.get_running_loop().run_in_executor(env_call_pool(), partial(function, *args, **kwargs))
