"""Per-tool and per-error-class counts for one step's rollouts, so the dashboard can chart which tools
are called, which fail, and why, over training (OpenThinkIMG's users ask for exactly this).

Names (stable, one series each):
- `tools/<tool>/calls`: calls of that tool that ran;
- `tools/<tool>/failed`: calls of that tool the env refused for their arguments or that failed
  (E2–E5). The env checks the name before the arguments, so these names are real tools;
- `errors/E1` … `errors/E6`: every error of the step by class (a failed call's error included), all
  six every step so a class that stops happening reads as 0, not as a gap.

A call the env refused as an unknown tool (E1) is counted under `errors/E1` only: its name is model
text, and a series per invented name would flood the dashboard.

They are counts, not means: ranks' counts add up (`COUNT_PREFIXES`, which also holds target_metrics'
`scan/` counts; its `tools/call_on_target_rate` is the one rate under `tools/`, recomputed after the
merge)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

ERROR_CLASSES = ("E1", "E2", "E3", "E4", "E5", "E6")
NAMED_TOOL_ERRORS = frozenset({"E2", "E3", "E4", "E5"})
COUNT_PREFIXES = ("tools/", "errors/", "scan/")


def tool_use_counts(trajectories: Iterable[dict[str, Any]]) -> dict[str, float]:
    counts: Counter[str] = Counter({f"errors/{cls}": 0 for cls in ERROR_CLASSES})
    for trajectory in trajectories:
        for turn in trajectory.get("turns") or []:
            if turn.get("role") != "assistant":
                continue
            for call in turn.get("calls") or []:
                error_class = (call.get("error") or {}).get("class")
                if call.get("ok") is True:
                    counts[f"tools/{call.get('name')}/calls"] += 1
                elif error_class in NAMED_TOOL_ERRORS:
                    counts[f"tools/{call.get('name')}/failed"] += 1
            for error in turn.get("errors") or []:
                if error.get("class") in ERROR_CLASSES:
                    counts[f"errors/{error['class']}"] += 1
    return {key: float(value) for key, value in sorted(counts.items())}
