"""Trainer events (docs/ARCHITECTURE.md, contract 3): one JSON object per line on stdout, human logs on stderr.

Event names: started, step, rollouts, checkpoint, warning, finished, failed (plus stage and eval
for the two-stage runs). Each line is written with one call and flushed, so a parent process
reading the pipe always gets whole objects. Never print anything else on stdout.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO


_event_stdout: TextIO | None = None


def reserve_stdout_for_events() -> None:
    """From now on only events reach the process's stdout: `print` and libraries that log to
    stdout (DeepSpeed's logger, torch extension builds) write to stderr instead. Called once, before
    the heavy imports, by the commands that speak the event protocol."""
    global _event_stdout
    if _event_stdout is None:
        _event_stdout = sys.stdout
        sys.stdout = sys.stderr


class EventStream:
    def __init__(self, stdout: TextIO | None = None, stderr: TextIO | None = None, log_file: Any = None, prefix: str = ""):
        self.stdout = stdout or _event_stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.log_file = log_file
        self.prefix = f" {prefix}" if prefix else ""

    def emit(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, "ts": round(time.time(), 3), **fields}, default=_plain) + "\n"
        self.stdout.write(line)
        self.stdout.flush()

    def log(self, message: str) -> None:
        line = f"[vistool-trainer{self.prefix} {time.strftime('%H:%M:%S')}] {message}\n"
        self.stderr.write(line)
        self.stderr.flush()
        if self.log_file is not None:
            self.log_file.write(line)
            self.log_file.flush()

    def warning(self, message: str, **fields: Any) -> None:
        self.emit("warning", message=message, **fields)
        self.log(f"warning: {message}")


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)
