"""The GPU check's summary: $OUT/summary.json (and summary.txt) from the stage records in
$OUT/results.jsonl. check.py rewrites it after every stage; check.sh runs this file once more after
check.py has exited, so a run killed mid-stage (the wall-clock limit, out of host memory) still
leaves a summary that names what finished and what did not. No torch import: it runs in a second.

summary.json: {"check", "complete", "dry_run", "device", "gpu", "gpu_memory_gib", "wall_budget_s",
"elapsed_s", "counts": {"passed", "failed", "skipped"}, "stages": [{"stage", "status", "reason",
"seconds", "summary"}], "unfinished": [stage names planned but never recorded]}.

    python scripts/gpu/summary.py --out OUT [--planned a,b,c] [--started EPOCH]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

STATUSES = ("passed", "failed", "skipped")


def read_records(results: Path) -> list[dict[str, Any]]:
    """The stage records (memory points and other sub-records are left out), in order; a torn last
    line (a killed write) is skipped."""
    records = []
    if not results.exists():
        return records
    for line in results.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("record") == "stage":
            records.append(record)
    return records


def build_summary(records: list[dict[str, Any]], planned: list[str], complete: bool, started: float | None,
                  wall_budget_s: float | None, header: dict[str, Any] | None = None) -> dict[str, Any]:
    stages = [{key: record.get(key) for key in ("stage", "status", "reason", "seconds", "summary")} for record in records]
    recorded = {stage["stage"] for stage in stages}
    environment = next((record.get("figures", {}) for record in records if record.get("stage") == "environment"), {})
    counts = {status: sum(1 for stage in stages if stage["status"] == status) for status in STATUSES}
    return {"check": "vistool-gpu-check", "complete": complete, **(header or {}),
            "gpu": environment.get("gpu"), "gpu_memory_gib": environment.get("gpu_memory_gib"),
            "wall_budget_s": wall_budget_s, "elapsed_s": round(time.time() - started, 1) if started else None,
            "counts": counts, "stages": stages, "unfinished": [name for name in planned if name not in recorded]}


def summary_text(summary: dict[str, Any]) -> str:
    title = "=== vistool GPU check" + (" (CPU dry run)" if summary.get("dry_run") else "") + " ==="
    lines = ["", title]
    for stage in summary["stages"]:
        status = stage["status"].upper() if stage["status"] == "failed" else stage["status"]
        detail = stage.get("summary") or stage.get("reason") or ""
        seconds = f"{stage['seconds']:6.1f} s" if isinstance(stage.get("seconds"), (int, float)) else "       "
        lines.append(f"{stage['stage']:<15}{status:<8}{seconds}  {detail}")
    for name in summary["unfinished"]:
        lines.append(f"{name:<15}{'not run':<8}           (the check stopped before it)")
    counts = summary["counts"]
    lines.append(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
                 + (f"; {summary['elapsed_s']} s of {summary['wall_budget_s']:.0f}" if summary.get("elapsed_s") is not None
                    and summary.get("wall_budget_s") else "")
                 + ("" if summary["complete"] else "; INCOMPLETE (stopped early)"))
    return "\n".join(lines)


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    """summary.json and summary.txt, each replaced atomically."""
    for name, text in (("summary.json", json.dumps(summary, indent=2) + "\n"), ("summary.txt", summary_text(summary) + "\n")):
        temporary = out / f".{name}.tmp"
        temporary.write_text(text)
        os.replace(temporary, out / name)


def main() -> int:
    parser = argparse.ArgumentParser(description="write summary.json from results.jsonl (after check.py stopped)")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--planned", default="", help="comma-separated stage names the check meant to run")
    parser.add_argument("--started", type=float, default=None, help="when the command started (epoch seconds)")
    parser.add_argument("--wall-s", type=float, default=None)
    args = parser.parse_args()
    existing = args.out / "summary.json"
    if existing.exists():
        try:
            previous = json.loads(existing.read_text())
        except json.JSONDecodeError:
            previous = {}
        if previous.get("complete"):
            print(summary_text(previous))
            return 0
    else:
        previous = {}
    planned = [name for name in args.planned.split(",") if name] or list(previous.get("unfinished", []))
    header = {key: previous[key] for key in ("dry_run", "device") if key in previous}
    summary = build_summary(read_records(args.out / "results.jsonl"), planned, False, args.started,
                            args.wall_s or previous.get("wall_budget_s"), header)
    write_summary(args.out, summary)
    print(summary_text(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
