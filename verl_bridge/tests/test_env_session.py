"""Env server calls run on their own thread pool (M4 of issue 41): while many episodes wait on the
env (a judge can take 45 s to score), the event loop's default executor — where veRL's agent loop
runs its tokenizer and token builder — still has its threads."""
from __future__ import annotations

import asyncio
import os
import threading
import time

from vistool_verl.env_session import env_call_pool, off_loop


def test_blocked_env_calls_leave_the_default_executor_free():
    release = threading.Event()
    # More blocked env calls than the default executor has threads (min(32, CPUs + 4)).
    waiting = min(32, (os.cpu_count() or 1) + 4) + 8

    async def main() -> tuple[float, set[str]]:
        loop = asyncio.get_running_loop()
        names: set[str] = set()

        def env_call() -> None:
            names.add(threading.current_thread().name)
            release.wait(30)

        blocked = [asyncio.ensure_future(off_loop(env_call)) for _ in range(waiting)]
        await asyncio.sleep(0.2)
        started = time.monotonic()
        # What veRL does with the default executor: a tokenizer call.
        await asyncio.wait_for(loop.run_in_executor(None, lambda: sum(range(1000))), timeout=5)
        elapsed = time.monotonic() - started
        release.set()
        await asyncio.gather(*blocked)
        return elapsed, names

    elapsed, names = asyncio.run(main())
    assert elapsed < 1.0, f"the default executor waited {elapsed:.1f} s behind env calls"
    assert names and all(name.startswith("vistool-env") for name in names), names
    assert env_call_pool()._max_workers >= waiting
