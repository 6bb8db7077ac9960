"""FOR TESTS ONLY: make a share of tool calls fail as if the env server had failed them.

`make verl-e2e VERL_E2E_FAULTS=0.1` sets `VISTOOL_TEST_ENV_FAULTS=0.1` (and the run's seed in
`VISTOOL_TEST_ENV_FAULT_SEED`) for veRL's trainer; every agent loop then answers a turn in which the
policy called a tool, one time in ten, with an env server error (HTTP 503, "injected test fault")
instead of the server's observation. From there the loop takes the same path as for a real server
failure (`EnvServerError`: the episode fails, veRL tags its group `failure`), which is what the e2e
checks (docs/VERL.md, "A group with a failed episode").

Which calls fail is decided by a hash of the seed, the task, veRL's step, the session and the turn:
the same run fails the same calls. Each injected fault is appended to
`VISTOOL_RUN_DIR/logs/injected-faults.jsonl` ({task, step, uid, session, turn}), which the e2e checks
hold the trainer's counts to. Off unless the variable is set; never set it in a real run.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

RATE_VARIABLE = "VISTOOL_TEST_ENV_FAULTS"
SEED_VARIABLE = "VISTOOL_TEST_ENV_FAULT_SEED"
MESSAGE = "injected test fault (VISTOOL_TEST_ENV_FAULTS): the tool call failed at the env server"


@dataclass(frozen=True)
class InjectedFaults:
    rate: float = 0.0
    seed: int = 0

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> "InjectedFaults":
        env = os.environ if env is None else env
        raw = env.get(RATE_VARIABLE, "").strip()
        if not raw:
            return cls()
        try:
            rate = float(raw)
        except ValueError:
            raise ValueError(f"{RATE_VARIABLE} is {raw!r}; it must be a number from 0 to 1 (the share of tool calls that fail)") from None
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{RATE_VARIABLE} is {rate}; it must be from 0 to 1 (the share of tool calls that fail)")
        seed_raw = env.get(SEED_VARIABLE, "0").strip() or "0"
        try:
            seed = int(seed_raw)
        except ValueError:
            raise ValueError(f"{SEED_VARIABLE} is {seed_raw!r}; it must be an integer") from None
        return cls(rate, seed)

    def fails(self, task: Any, step: Any, session: Any, turn: Any) -> bool:
        """Whether the call at (task, veRL step, session, turn) fails: a uniform draw from a hash."""
        if self.rate <= 0.0:
            return False
        digest = hashlib.sha256(":".join(str(part) for part in (self.seed, task, step, session, turn)).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64 < self.rate

    def apply(self, answer: dict[str, Any], task: Any, step: Any, uid: Any, session: Any, turn: int,
              run_dir: str | None = None) -> dict[str, Any]:
        """The env server's answer to a turn, or an injected error when the turn called a tool and the call fails."""
        called = bool(((answer.get("info") or {}).get("calls")))
        if "error" in answer or not called or not self.fails(task, step, session, turn):
            return answer
        if run_dir:
            log = Path(run_dir) / "logs" / "injected-faults.jsonl"
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a") as out:
                out.write(json.dumps({"task": task, "step": step, "uid": uid, "session": session, "turn": turn}) + "\n")
        return {"error": {"status": 503, "message": MESSAGE}}
