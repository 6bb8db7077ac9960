"""The run directory (docs/ARCHITECTURE.md, contract 2): config.json, run.json, metrics.jsonl,
rollouts/step-NNNNNN.jsonl, images/, checkpoints/, logs/.

Appends are one `write` of one complete line on a file opened with O_APPEND, then flushed and
fsynced, so a reader (the VS Code dashboard) never sees half a line and a killed run leaves a
readable directory. Whole-file writes (run.json, config.json) go through a temp file + rename.
It deletes only its own old checkpoints and, when a killed run resumes, the records that run
wrote after its last checkpoint.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any


def append_json_line(path: Path, record: dict[str, Any]) -> None:
    append_json_lines(path, [record])


def append_json_lines(path: Path, records: list[dict[str, Any]]) -> None:
    """`records`, one JSON line each, in a single write to a file opened with O_APPEND: a reader, or
    another process appending to the same file, never sees part of them."""
    lines = [json.dumps(record, ensure_ascii=False, allow_nan=False, default=_jsonable) + "\n" for record in records]
    if any("\n" in line[:-1] for line in lines):
        raise ValueError(f"a record for {path} would span more than one line")
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        data = "".join(lines).encode("utf-8")
        written = os.write(descriptor, data)
        if written != len(data):
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=2, ensure_ascii=False, default=_jsonable)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """Every complete line of a JSONL file (a torn last line, from a crash mid-write, is skipped)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def run_status(run: dict[str, Any]) -> str:
    """run.json's status as a reader should show it: a trainer killed with SIGKILL (or a reboot)
    leaves "running" behind, which reads "stopped" once its pid is gone (the Runs view's word)."""
    status = str(run.get("status", "missing"))
    pid = run.get("pid")
    if status == "running" and isinstance(pid, int) and not _process_alive(pid):
        return "stopped"
    return status


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


class RunDirectoryInUse(ValueError):
    """A fresh run was pointed at a folder that already holds one."""


def refuse_to_mix_runs(root: Path) -> None:
    """A fresh (not resumed) run into a folder that holds another run's records would append to its
    metrics and prune its checkpoints as if they were its own: refuse, and say what to do instead."""
    root = Path(root)
    held = []
    run = root / "run.json"
    if run.exists():
        try:
            status = json.loads(run.read_text()).get("status")
        except (json.JSONDecodeError, OSError, AttributeError):
            status = "unreadable"
        # The editor writes {"status": "starting"} just before it starts the trainer into the folder.
        if status != "starting":
            held.append(f"run.json, status {status}")
    metrics = root / "metrics.jsonl"
    if metrics.exists() and metrics.stat().st_size > 0:
        held.append("metrics.jsonl")
    checkpoints = sorted(path.name for path in (root / "checkpoints").glob("step-*")) if (root / "checkpoints").is_dir() else []
    if checkpoints:
        held.append(f"checkpoints up to {checkpoints[-1]}")
    if held:
        raise RunDirectoryInUse(f"{root} already holds a run ({', '.join(held)}); pass --resume to continue it, or set another "
                                f"output_dir (or remove this one) to start afresh")


class RunDirectory:
    """`writable` False (the non-zero ranks of a multi-process run) turns every write into a no-op:
    one process, rank 0, owns the run directory's records."""

    def __init__(self, root: Path, writable: bool = True):
        # logging.report_to (report_to.py): what the writer hands each metrics line and rollout batch to, once written.
        self.reporters: Any = None
        self.root = Path(root).resolve()
        self.writable = writable
        for name in ("rollouts", "images", "checkpoints", "logs"):
            (self.root / name).mkdir(parents=True, exist_ok=True)

    @property
    def images(self) -> Path:
        return self.root / "images"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def metrics_path(self) -> Path:
        return self.root / "metrics.jsonl"

    def write_config(self, config: dict[str, Any]) -> None:
        if not self.writable:
            return
        write_json_atomic(self.root / "config.json", config)

    def read_run(self) -> dict[str, Any]:
        path = self.root / "run.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def update_run(self, **fields: Any) -> dict[str, Any]:
        run = self.read_run()
        run.update(fields)
        if not self.writable:
            return run
        run["updated_at"] = time.time()
        write_json_atomic(self.root / "run.json", run)
        return run

    def append_metrics(self, record: dict[str, Any]) -> None:
        """One metrics line, stamped with `time` (unix seconds, float) when the caller gave none:
        the dashboard's wall-time axis reads it."""
        if not self.writable:
            return
        line = {**record, "time": record.get("time", time.time())}
        append_json_line(self.metrics_path, line)
        if self.reporters is not None:
            self.reporters.metrics(line)

    def rollouts_path(self, step: int) -> Path:
        return self.root / "rollouts" / f"step-{step:06d}.jsonl"

    def append_rollout(self, step: int, record: dict[str, Any]) -> None:
        if not self.writable:
            return
        append_json_line(self.rollouts_path(step), record)

    def append_rollouts(self, step: int, records: list[dict[str, Any]]) -> None:
        """A step's rollout lines, then the step's sample to the reporters (logging.report_to)."""
        if not self.writable:
            return
        for record in records:
            append_json_line(self.rollouts_path(step), record)
        if self.reporters is not None:
            self.reporters.rollouts(step, records, self.images)

    def close_reporters(self) -> None:
        if self.reporters is not None:
            reporters, self.reporters = self.reporters, None
            reporters.close()

    def checkpoint_path(self, step: int) -> Path:
        return self.checkpoints / f"step-{step:06d}"

    def latest_checkpoint(self) -> Path | None:
        """The newest checkpoint that finished writing (it has trainer_state.json, written last)."""
        done = sorted(path for path in self.checkpoints.glob("step-*") if (path / "trainer_state.json").exists())
        return done[-1] if done else None

    def prune_checkpoints(self, keep: int, protect: set[Path] | None = None) -> None:
        if not self.writable:
            return
        protected = {path.resolve() for path in (protect or set())}
        done = sorted(path for path in self.checkpoints.glob("step-*") if (path / "trainer_state.json").exists())
        for path in done[:-keep] if keep > 0 else []:
            if path.resolve() not in protected:
                shutil.rmtree(path, ignore_errors=True)

    def discard_after(self, step: int) -> None:
        """Before resuming from the checkpoint at `step`: forget what a killed run wrote after it —
        metric lines past `step` (rewritten atomically) and rollout files of later steps — so the
        resumed run's records are not doubled."""
        if not self.writable:
            return
        self.metrics_after_resume(step)
        for path in self.root.joinpath("rollouts").glob("step-*.jsonl"):
            try:
                later = int(path.stem.split("-", 1)[1]) > step
            except ValueError:
                continue
            if later:
                path.unlink(missing_ok=True)

    def metrics_after_resume(self, step: int) -> None:
        """Drop metric lines past `step` (from a run killed after its last checkpoint) by rewriting atomically."""
        kept = [record for record in read_json_lines(self.metrics_path) if record.get("step", 0) <= step]
        temporary = self.metrics_path.with_suffix(".jsonl.tmp")
        with open(temporary, "w", encoding="utf-8") as stream:
            for record in kept:
                stream.write(json.dumps(record) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, self.metrics_path)
