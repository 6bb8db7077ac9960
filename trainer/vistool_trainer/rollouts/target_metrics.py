"""How a step's calls met their targets, and which scanners fired, from the trajectory records the
env server returns (each call that ran carries `target`, each scored trajectory `findings`:
docs/CONTRACTS.md, Rollout record; env/episodes/call-target.ts and env/episodes/scanners/).

Names (stable, every step):
- `tools/calls_on_target`, `tools/calls_partly_on_target`, `tools/calls_off_target`,
  `tools/calls_target_unknown`: calls that ran, by target (a call without one, from an env that
  predates targets, counts as unknown). Counts: ranks add them up.
- `tools/call_on_target_rate` = on / (on + partly + off); left out when no call had a known
  target. A rate of counts, so a multi-rank step recomputes it from the summed counts
  (`with_call_on_target_rate`), never averages it.
- `scan/<name>`: trajectories the scanner fired on, for every scanner name (0 when none did).
  Counts: ranks add them up.

Evaluations name the tools arm's rate `eval/call_on_target_rate` and its scanner counts
`eval/scan/<name>`, as `vistool eval` does (env/eval/summary.ts)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TARGET_COUNTS = {
    "on": "tools/calls_on_target",
    "partly": "tools/calls_partly_on_target",
    "off": "tools/calls_off_target",
    "unknown": "tools/calls_target_unknown",
}
CALL_ON_TARGET_RATE = "tools/call_on_target_rate"
# The rollout record's findings, in its order (schemas/rollout-record.schema.json).
FINDINGS = ("off_target_call", "repeated_call", "ignored_tool_error", "degenerate_edit", "format_collapse", "answered_without_looking")


def call_target_counts(trajectories: Iterable[dict[str, Any]]) -> dict[str, float]:
    counts = dict.fromkeys(TARGET_COUNTS.values(), 0.0)
    for trajectory in trajectories:
        for turn in trajectory.get("turns") or []:
            if turn.get("role") != "assistant":
                continue
            for call in turn.get("calls") or []:
                if call.get("ok") is True:
                    target = call.get("target")
                    counts[TARGET_COUNTS[target if target in TARGET_COUNTS else "unknown"]] += 1
    return with_call_on_target_rate(counts)


def call_on_target_rate(counts: dict[str, float]) -> float | None:
    """on / (on + partly + off) from the counts; None when no call had a known target."""
    known = sum(counts.get(TARGET_COUNTS[target], 0.0) for target in ("on", "partly", "off"))
    return counts.get(TARGET_COUNTS["on"], 0.0) / known if known > 0 else None


def with_call_on_target_rate(metrics: dict[str, float]) -> dict[str, float]:
    """`metrics` with the rate recomputed from its counts (and dropped when it is undefined)."""
    out = {key: value for key, value in metrics.items() if key != CALL_ON_TARGET_RATE}
    rate = call_on_target_rate(out)
    if rate is not None:
        out[CALL_ON_TARGET_RATE] = rate
    return out


def scan_counts(trajectories: Iterable[dict[str, Any]]) -> dict[str, float]:
    counts = {f"scan/{name}": 0.0 for name in FINDINGS}
    for trajectory in trajectories:
        for name in set(trajectory.get("findings") or []):
            if name in FINDINGS:
                counts[f"scan/{name}"] += 1
    return counts
