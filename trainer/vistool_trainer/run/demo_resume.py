"""`demo --resume` (make demo RESUME=1): continue an interrupted demo in its own folder.

A demo is an hour of CPU on a small machine; a Ctrl-C, a closed laptop lid or a killed shell must
not cost it. The demo folder already holds everything a continuation needs: `demo.json` (task,
model, device, seed, threads, cpu_kernels), each arm's resolved config (`<arm>.vistool.json`) and
the generated splits. Each arm is then in one of three states, read from its `run.json` and checkpoints:

- finished: kept as it is, never rerun;
- stopped with a complete checkpoint (interrupted, failed, or killed mid-run): `train --resume`
  continues from the newest one, which discards whatever the run logged after it;
- stopped before its first checkpoint: its folder is moved aside (never deleted) and it starts over.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config import RunConfig
from .run_config import ConfigError, resolve_config

ArmState = Literal["new", "finished", "resume", "restart"]


@dataclass
class StoredDemo:
    """What `demo.json` and the arm configs of an earlier demo say, read back for a continuation."""

    demo: dict[str, Any]
    configs: dict[str, RunConfig]


def read_stored_demo(root: Path, arms: tuple[str, ...]) -> StoredDemo:
    """The earlier demo in `root`, or a ConfigError that says what is missing and what to do instead."""
    start_anew = "start one with `make demo` (without RESUME=1)"
    if not (root / "demo.json").is_file():
        raise ConfigError(f"nothing to resume in {root}: it has no demo.json; {start_anew}")
    try:
        demo = json.loads((root / "demo.json").read_text())
    except json.JSONDecodeError as error:
        raise ConfigError(f"{root / 'demo.json'} is not JSON ({error}); {start_anew} in another folder") from error
    configs: dict[str, RunConfig] = {}
    for arm in arms:
        path = root / f"{arm}.vistool.json"
        if not path.is_file():
            raise ConfigError(f"nothing to resume in {root}: {path.name} is missing; {start_anew}")
        try:
            configs[arm] = resolve_config(json.loads(path.read_text()))
        except (json.JSONDecodeError, ConfigError) as error:
            raise ConfigError(f"{path} cannot be read back ({error}); {start_anew} in another folder") from error
    for split in ("train", "eval"):
        if not (root / "data" / split / "tasks.jsonl").is_file():
            raise ConfigError(f"nothing to resume in {root}: data/{split}/tasks.jsonl is missing; {start_anew}")
    return StoredDemo(demo, configs)


def disagreements(demo: dict[str, Any], asked: dict[str, Any]) -> list[str]:
    """The settings given on the command line that differ from the ones the stored demo ran with:
    a continuation runs the recipe it started with, so these are refused rather than mixed in."""
    return [f"{name} {value!r} (the demo in this folder has {demo.get(name)!r})"
            for name, value in asked.items() if value is not None and demo.get(name) != value]


def arm_state(run_dir: Path) -> ArmState:
    """Where an arm stands: not started, finished, resumable from a checkpoint, or to start over."""
    run_file = run_dir / "run.json"
    if not run_dir.exists():
        return "new"
    status = None
    if run_file.is_file():
        try:
            status = json.loads(run_file.read_text()).get("status")
        except json.JSONDecodeError:
            status = None
    if status == "finished":
        return "finished"
    if any((path / "trainer_state.json").exists() for path in (run_dir / "checkpoints").glob("step-*")):
        return "resume"
    return "restart"


def rename_aside(path: Path, infix: str = "") -> Path:
    """`path` renamed to `<name>-<infix><time it was last written>` (`-2`, `-3`... if taken), never deleted."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(path.stat().st_mtime))
    target, n = path.with_name(f"{path.name}-{infix}{stamp}"), 2
    while target.exists():
        target, n = path.with_name(f"{path.name}-{infix}{stamp}-{n}"), n + 1
    path.rename(target)
    return target


def move_aside(run_dir: Path) -> Path:
    """An arm folder with no checkpoint to continue from goes to `<arm>-abandoned-<time>`, kept."""
    return rename_aside(run_dir, "abandoned-")


def read_json_or_none(path: Path) -> dict[str, Any] | None:
    """A JSON object written by an earlier invocation, or None when it is absent or unreadable."""
    try:
        value = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None
