"""Where the agent loop finds the env server: the loop's own config keys first, then the
environment variables the launch script exports (VISTOOL_ENV_URL, VISTOOL_ENV_TOKEN_FILE).
Each episode gets its own client, because veRL runs many episodes at once on one event loop and
an HTTP connection must not be shared between threads.

The exported run.sh starts one server on loopback, on the node it runs on. veRL places agent-loop
workers on every node of the run, so a loopback address is refused when the run has more than one
node (docs/VERL.md, "More than one node"): such a run needs a server every node reaches."""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from vistool_trainer.rollouts.env_client import EnvClient, EnvServerError

__all__ = ["EnvAddress", "EnvServerError", "off_loop"]

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

    def refuse_loopback_across_nodes(self, nnodes: int) -> None:
        if nnodes > 1 and self.is_loopback():
            raise ValueError(
                f"the env server is at {self.url}, a loopback address, but the run has trainer.nnodes={nnodes}: veRL runs agent-loop "
                "workers on every node, and the other nodes cannot reach this one's loopback. Start one server that every node "
                "reaches (`vistool serve --host ADDRESS --allow-remote --token-file FILE --images-dir DIR`, with FILE and DIR on "
                "storage all nodes share) and give its URL and token file (env.url and env.token_file in the run config, or "
                "VISTOOL_ENV_URL and VISTOOL_ENV_TOKEN_FILE); docs/VERL.md, \"More than one node\"")

    def client(self) -> EnvClient:
        return EnvClient(self.url, self.token)


async def off_loop(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A blocking env call, run on a worker thread so the other episodes keep generating."""
    return await asyncio.get_running_loop().run_in_executor(None, partial(function, *args, **kwargs))
