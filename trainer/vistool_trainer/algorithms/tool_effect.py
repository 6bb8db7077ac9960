"""Did the tool matter? The tool effect of an evaluation: accuracy as run − accuracy with the tool
results withheld (the counterfactual replay, rollouts/counterfactual.py) on the same tasks, with
Newcombe's paired score interval (Newcombe 1998, "Improved confidence intervals for the difference
between binomial proportions based on paired data", method 10, on Wilson intervals). An episode that
was not replayed (no successful call) is its own counterfactual: right or wrong both ways, unchanged.
The env's `vistool eval --counterfactual` computes the same (env/eval/tool-effect.ts)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .intervals import newcombe_paired

METHOD = "newcombe-paired"


@dataclass(frozen=True)
class ToolEffectPair:
    real: bool       # right as run
    withheld: bool   # right with the results withheld
    replayed: bool
    changed: bool    # the normalised answer changed (only when replayed)


def tool_effect(pairs: Iterable[ToolEffectPair]) -> dict[str, Any]:
    """{effect, ci95: [lo, hi], n, replayed, answer_changed_rate, method}; answer_changed_rate is
    over the replayed pairs (None when none was)."""
    pairs = list(pairs)
    both = sum(p.real and p.withheld for p in pairs)
    only_real = sum(p.real and not p.withheld for p in pairs)
    only_withheld = sum(p.withheld and not p.real for p in pairs)
    neither = len(pairs) - both - only_real - only_withheld
    effect, low, high = newcombe_paired(both, only_real, only_withheld, neither)
    replayed = [p for p in pairs if p.replayed]
    return {"effect": effect, "ci95": [low, high], "n": len(pairs), "replayed": len(replayed),
            "answer_changed_rate": sum(p.changed for p in replayed) / len(replayed) if replayed else None, "method": METHOD}


def tool_effect_metrics(effect: dict[str, Any]) -> dict[str, float]:
    """The flat evaluation metrics, named as `vistool eval` names them (env/eval/summary.ts)."""
    metrics = {"eval/tool_effect": float(effect["effect"]), "eval/tool_effect_lo": float(effect["ci95"][0]),
               "eval/tool_effect_hi": float(effect["ci95"][1]), "eval/counterfactual_n": float(effect["replayed"])}
    if effect["answer_changed_rate"] is not None:
        metrics["eval/answer_changed_rate"] = float(effect["answer_changed_rate"])
    return metrics
