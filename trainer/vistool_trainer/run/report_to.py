"""`logging.report_to`: every metrics.jsonl line, and each RL step's sampled rollouts, also in
TensorBoard and Weights & Biases, the places researchers already look (TRL's `report_to`).

The run directory stays the record: the reporters get what it writes, after it is written, under
the same names (a metric `reward/mean` is the TensorBoard tag and the W&B key `reward/mean`; the
x axis is the line's `step`). Both go through their own libraries — `torch.utils.tensorboard`'s
SummaryWriter and `wandb` — optional extras (`pip install 'vistool-trainer[tensorboard]'`,
`'[wandb]'`); asking for one that is not installed stops the run before any training, saying what
to install. W&B runs offline, into `<run>/wandb/`, when it has no API key or cannot reach its
server, and says so (`wandb sync <that folder>` uploads it later).

It never decides anything about training and never reads its own output back.
"""
from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

REPORTERS = ("tensorboard", "wandb")
TENSORBOARD_FOLDER = "tensorboard"
# Keys of a metrics line that are not metrics: the x axis, the wall clock, and text.
NOT_METRICS = frozenset({"step", "time"})


class ReporterMissing(RuntimeError):
    """A reporter in logging.report_to whose library is not installed."""


def metric_values(record: Mapping[str, Any]) -> dict[str, float]:
    """The numeric metrics of one metrics line, under their metrics.jsonl names (text such as
    `stage` and `label`, the `step` axis and the `time` stamp are not metrics; NaN and ±inf are
    kept, both libraries store them)."""
    values = {}
    for key, value in record.items():
        if key in NOT_METRICS or isinstance(value, str) or value is None:
            continue
        if isinstance(value, bool):
            values[key] = float(value)
        elif isinstance(value, (int, float)):
            values[key] = float(value)
    return values


def _fence(text: str) -> str:
    """Model text as a fenced block that no backtick run inside it can close (TensorBoard's text
    plugin renders markdown)."""
    longest = run = 0
    for character in text:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def rollout_markdown(record: Mapping[str, Any]) -> str:
    """One rollout record (docs/CONTRACTS.md) as markdown: the question, the gold answer, the
    reward, then each turn, model text fenced."""
    task = record.get("task") or {}
    lines = [f"**{task.get('question', '')}** — gold `{task.get('answer', '')}`, answer `{record.get('answer')}`, "
             f"reward {float(record.get('reward') or 0.0):.3f}, {'correct' if record.get('correct') else 'wrong'}, "
             f"{int(record.get('tool_calls') or 0)} tool call(s)", ""]
    for turn in record.get("turns") or []:
        lines += [f"*{turn.get('role', '?')}*", _fence(str(turn.get("text", ""))), ""]
    return "\n".join(lines)


def rollout_images(record: Mapping[str, Any], image_dir: Path) -> tuple[Path | None, list[Path]]:
    """(the task's chart, the images the tools returned, in order) as files of the run's
    content-addressed image store; a ref without a file is left out."""
    def path_of(ref: Any) -> Path | None:
        if not isinstance(ref, str) or not ref or "/" in ref or ".." in ref:
            return None
        path = image_dir / f"{ref}.png"
        return path if path.is_file() else None

    chart = path_of((record.get("task") or {}).get("image"))
    outputs = [path for turn in record.get("turns") or [] for call in turn.get("calls") or []
               if (path := path_of(call.get("image_out"))) is not None]
    return chart, outputs


class TensorBoardReporter:
    """Event files in <run>/tensorboard, written by torch.utils.tensorboard's SummaryWriter."""

    name = "tensorboard"

    def __init__(self, run_root: Path, resume_step: int | None = None):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as error:  # torch ships the writer; the tensorboard package provides its protobufs
            raise ReporterMissing("logging.report_to has 'tensorboard' but the tensorboard package is not installed: "
                                  "pip install 'vistool-trainer[tensorboard]' (or remove 'tensorboard' from logging.report_to)") from error
        # A resumed run rewrites the steps after its checkpoint: TensorBoard drops the old events from there on.
        self.writer = SummaryWriter(log_dir=str(run_root / TENSORBOARD_FOLDER),
                                    purge_step=resume_step + 1 if resume_step is not None else None)
        self.location = str(run_root / TENSORBOARD_FOLDER)

    def metrics(self, record: Mapping[str, Any]) -> None:
        step, wall = int(record.get("step", 0)), record.get("time")
        for key, value in metric_values(record).items():
            self.writer.add_scalar(key, value, global_step=step, walltime=wall)

    def rollouts(self, step: int, records: list[Mapping[str, Any]], image_dir: Path) -> None:
        import numpy as np
        from PIL import Image

        for index, record in enumerate(records):
            self.writer.add_text(f"rollouts/{index}", rollout_markdown(record), global_step=step)
            chart, outputs = rollout_images(record, image_dir)
            for tag, path in [("chart", chart)] + [(f"tool_output_{n}", p) for n, p in enumerate(outputs)]:
                if path is not None:
                    with Image.open(path) as image:
                        self.writer.add_image(f"rollouts/{index}/{tag}", np.asarray(image.convert("RGB")), global_step=step,
                                              dataformats="HWC")

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()


def wandb_mode(environ: Mapping[str, str], reachable: Callable[[str], bool], netrc_has_key: Callable[[str], bool]) -> tuple[str, str]:
    """(mode, why): WANDB_MODE when it is set; else 'online' with an API key and a server that
    answers, else 'offline' and the reason."""
    if environ.get("WANDB_MODE"):
        return environ["WANDB_MODE"], "WANDB_MODE is set"
    host = urlparse(environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname or "api.wandb.ai"
    if not environ.get("WANDB_API_KEY") and not netrc_has_key(host):
        return "offline", f"no W&B API key (WANDB_API_KEY, or `wandb login` for {host})"
    if not reachable(host):
        return "offline", f"{host} cannot be reached from this machine"
    return "online", f"an API key and {host} reachable"


def _reachable(host: str, timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def _netrc_has_key(host: str) -> bool:
    import netrc

    try:
        return netrc.netrc().authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


class WandbReporter:
    """A W&B run whose x axis is the metrics line's `step` (so a resumed run may log a step again)."""

    name = "wandb"

    def __init__(self, run_root: Path, name: str, config: dict[str, Any], project: str, run_id: str,
                 say: Callable[[str], None], environ: Mapping[str, str] | None = None):
        try:
            import wandb
        except ImportError as error:
            raise ReporterMissing("logging.report_to has 'wandb' but wandb is not installed: pip install 'vistool-trainer[wandb]' "
                                  "(or remove 'wandb' from logging.report_to)") from error
        environ = os.environ if environ is None else environ
        mode, why = wandb_mode(environ, _reachable, _netrc_has_key)
        # W&B stages a table's images (an artifact) in its data folder until they are uploaded:
        # inside the run directory unless the user chose one, so an offline run is all in one place.
        os.environ.setdefault("WANDB_DATA_DIR", str(run_root / "wandb"))
        self.wandb = wandb
        self.run = wandb.init(project=environ.get("WANDB_PROJECT") or project, name=name, id=run_id, resume="allow",
                              dir=str(run_root), mode=mode, config=config,
                              settings=wandb.Settings(console="off", x_disable_stats=True, silent=True))
        self.run.define_metric("step")
        self.run.define_metric("*", step_metric="step")
        self.location = str(Path(self.run.dir).parent)
        if mode == "offline":
            say(f"W&B is offline ({why}): the run is in {self.location}; `wandb sync {self.location}` uploads it")
        else:
            say(f"W&B run {self.run.url or run_id} ({mode}: {why})")

    def metrics(self, record: Mapping[str, Any]) -> None:
        values = metric_values(record)
        if values:
            self.run.log({**values, "step": int(record.get("step", 0))})

    def rollouts(self, step: int, records: list[Mapping[str, Any]], image_dir: Path) -> None:
        columns = ["step", "prompt_id", "question", "gold", "answer", "correct", "reward", "tool_calls", "transcript", "chart", "tool_output"]
        table = self.wandb.Table(columns=columns)
        for record in records:
            task = record.get("task") or {}
            chart, outputs = rollout_images(record, image_dir)
            table.add_data(step, record.get("prompt_id"), task.get("question"), task.get("answer"), record.get("answer"),
                           bool(record.get("correct")), float(record.get("reward") or 0.0), int(record.get("tool_calls") or 0),
                           rollout_markdown(record), self.wandb.Image(str(chart)) if chart else None,
                           self.wandb.Image(str(outputs[-1])) if outputs else None)
        self.run.log({"rollouts": table, "step": step})

    def close(self) -> None:
        self.run.finish()


class Reporters:
    """The reporters a run asked for, fed by the run directory's writer (run_directory.py)."""

    def __init__(self, reporters: list[Any], rollouts_per_step: int):
        self.reporters = reporters
        self.rollouts_per_step = rollouts_per_step

    def metrics(self, record: Mapping[str, Any]) -> None:
        for reporter in self.reporters:
            reporter.metrics(record)

    def rollouts(self, step: int, records: list[Mapping[str, Any]], image_dir: Path) -> None:
        chosen = records[:self.rollouts_per_step]
        if chosen:
            for reporter in self.reporters:
                reporter.rollouts(step, chosen, image_dir)

    def close(self) -> None:
        for reporter in self.reporters:
            reporter.close()
        self.reporters = []


def open_reporters(report_to: list[str], run_root: Path, run_name: str, config: dict[str, Any], project: str, rollouts_per_step: int,
                   run_id: str, say: Callable[[str], None], resume_step: int | None = None) -> Reporters:
    """Start each reporter in `report_to` (one of REPORTERS each); a missing library raises
    ReporterMissing before anything is written."""
    unknown = sorted(set(report_to) - set(REPORTERS))
    if unknown:
        raise ValueError(f"logging.report_to: {', '.join(unknown)} is not one of {', '.join(REPORTERS)}")
    opened: list[Any] = []
    try:
        for name in dict.fromkeys(report_to):
            if name == "tensorboard":
                opened.append(TensorBoardReporter(run_root, resume_step))
                say(f"TensorBoard: tensorboard --logdir {opened[-1].location}")
            else:
                opened.append(WandbReporter(run_root, run_name, config, project, run_id, say))
    except Exception:
        for reporter in opened:
            reporter.close()
        raise
    return Reporters(opened, rollouts_per_step)


def new_run_id() -> str:
    """A W&B run id (kept in run.json so a resumed run continues the same W&B run)."""
    return uuid.uuid4().hex[:12]



def reporters_for_run(report_to: list[str], run: Any, name: str, config: dict[str, Any], project: str, rollouts_per_step: int,
                      resume: bool, say: Callable[[str], None]) -> Reporters | None:
    """The reporters of a run directory (run_directory.RunDirectory): the W&B run id is kept in its
    run.json, and a resumed run starts them after its newest checkpoint's step."""
    if not report_to:
        return None
    run_id = run.read_run().get("wandb_run_id") or new_run_id()
    if "wandb" in report_to:
        run.update_run(wandb_run_id=run_id)
    checkpoint = run.latest_checkpoint() if resume else None
    resume_step = int(json.loads((checkpoint / "trainer_state.json").read_text())["global_step"]) if checkpoint is not None else None
    return open_reporters(report_to, run.root, name, config, project, rollouts_per_step, run_id, say, resume_step)
