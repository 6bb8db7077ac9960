"""`<out>/summary.json`: the numbers the demo's report and the dashboard show, read from the two
arms' run directories and nothing else.

Shape: {"arms": {"tools"|"text": {"after_sft"|"after_rl": {"acc", "acc_ci95", "n",
"tool_call_rate", "tool_error_rate", "tool_effect", "call_on_target_rate", "grid", "off_target", ...},
"after_rl_minus_after_sft": {...}}},
"differences": {"tools_minus_text": {"after_sft"|"after_rl": {"diff", "ci95", "method"}}},
"eval_split": {...}, "targets": [...], "minutes": ...}. `grid` is the gold × answer grid and
`off_target` the calls that named another label than the question's (run/eval_summary.py); the
differences carry 95% intervals: Newcombe's hybrid for the two arms (independent runs), Newcombe's
paired one for after RL − after SFT (the same held-out tasks).
`tool_effect` is the counterfactual replay's (eval.counterfactual; trainers/evaluate.py):
{"effect", "ci95": [lo, hi], "n", "answer_changed_rate", "method": "newcombe-paired"}, accuracy as run
− accuracy with the tool results withheld on the same tasks; null where it was not measured (the
text arm, eval.counterfactual off). Each arm's `cpu_capability` is the ATen kernel path its trainer
dispatched to (torch.backends.cpu.get_cpu_capability(): "AVX2", "DEFAULT"...; null where the run did
not record it), its `onednn_max_cpu_isa` oneDNN's cap (null: the CPU's own), and its `cpu` the CPU
the trainer ran on (model name, family and model; null where not recorded); the top-level `threads` and `cpu_kernels` are what the demo started the arms with
(demo.json; `cpu_kernels` null: the CPU's own path). `call_on_target_rate` is the evaluation's
`eval/call_on_target_rate`; null where the evaluation did not measure it. `crop_iou` is the
evaluation's `eval/crop_iou` (the mean IoU of the tools arm's zoom crops with the task's target box,
rollouts/turn_metrics.py); null where no call had a target box to measure against.
`eval_split` holds the generator options and seed of the held-out tasks, so anyone can make fresh
held-out tasks (`command`, with another seed) and re-evaluate the checkpoints with `vistool eval`.
"""
from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from ..algorithms.intervals import newcombe_hybrid, wilson_interval
from ..algorithms.tool_effect import METHOD
from .eval_summary import answer_grid, arm_records, off_target, paired_change
from .run_directory import read_json_lines, run_status

CHECKPOINTS = ("after_sft", "after_rl")
# What the demo sets out to show (issue "the main job shows the seeds' result"), checked on the
# measured numbers — never used to choose anything.
TOOLS_OVER_TEXT_POINTS = 15
RL_OVER_SFT_POINTS = 10


def _arm_setting(arm: str) -> str:
    return "tools" if arm == "tools" else "no_tools"


def checkpoint_numbers(evaluation: dict[str, float], setting: str) -> dict[str, Any]:
    """One checkpoint of one arm in its own setting: accuracy with its Wilson 95% interval, n, and
    the tool-call and tool-error rates (0 with the tools off: no call can succeed there)."""
    n = int(evaluation.get("eval/n", 0))
    acc = float(evaluation.get(f"eval/acc_{setting}", 0.0))
    correct = int(round(evaluation.get(f"eval/correct_{setting}", acc * n)))
    low, high = wilson_interval(correct, n)
    numbers: dict[str, Any] = {"acc": acc, "acc_ci95": [low, high], "n": n, "correct": correct,
                               "tool_call_rate": float(evaluation.get("eval/tool_call_rate", 0.0)) if setting == "tools" else 0.0,
                               "tool_error_rate": float(evaluation.get("eval/tool_error_rate", 0.0)) if setting == "tools" else 0.0,
                               "format_valid": float(evaluation.get(f"eval/format_valid_{setting}", 0.0))}
    if setting == "tools" and "eval/acc_no_tools" in evaluation:
        numbers["acc_without_tools"] = float(evaluation["eval/acc_no_tools"])
    numbers["tool_effect"] = tool_effect_numbers(evaluation) if setting == "tools" else None
    rate = evaluation.get("eval/call_on_target_rate")
    numbers["call_on_target_rate"] = float(rate) if setting == "tools" and rate is not None else None
    iou = evaluation.get("eval/crop_iou")
    numbers["crop_iou"] = float(iou) if setting == "tools" and iou is not None else None
    return numbers


def tool_effect_numbers(evaluation: dict[str, float]) -> dict[str, Any] | None:
    """The counterfactual replay's tool effect from an evaluation's metrics; None when it did not run."""
    if "eval/tool_effect" not in evaluation:
        return None
    changed = evaluation.get("eval/answer_changed_rate")
    return {"effect": float(evaluation["eval/tool_effect"]),
            "ci95": [float(evaluation["eval/tool_effect_lo"]), float(evaluation["eval/tool_effect_hi"])],
            "n": int(evaluation.get("eval/n", 0)), "answer_changed_rate": None if changed is None else float(changed), "method": METHOD}


def arm_summary(run_dir: Path, arm: str) -> dict[str, Any]:
    run = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").exists() else {}
    metrics = read_json_lines(run_dir / "metrics.jsonl") if (run_dir / "metrics.jsonl").exists() else []
    evaluations = run.get("evaluations", {})
    setting = _arm_setting(arm)
    summary: dict[str, Any] = {label: checkpoint_numbers(evaluations[label], setting) for label in CHECKPOINTS if label in evaluations}
    records = {label: arm_records(run_dir, label, setting) for label in summary}
    for label, kept in records.items():
        if kept:
            summary[label]["grid"] = answer_grid(kept)
            summary[label]["off_target"] = off_target(kept) if setting == "tools" else None
    if records.get("after_sft") and records.get("after_rl"):
        summary["after_rl_minus_after_sft"] = paired_change(records["after_sft"], records["after_rl"])
    sft = [m for m in metrics if m.get("stage") == "sft"]
    rl = [m for m in metrics if m.get("stage") == "rl"]
    summary["status"] = run_status(run)
    summary["budget"] = {"sft_steps": len(sft), "rl_steps": len(rl),
                         "sft_seconds": sum(m.get("timing/step_s", 0.0) for m in sft),
                         "rl_seconds": sum(m.get("timing/step_s", 0.0) for m in rl)}
    summary["initial_weights_checksum"] = run.get("initial_weights_checksum")
    # The ATen kernel path the arm's trainer ran (torch's own name, from inside it); None: a trainer that did not record it.
    summary["cpu_capability"] = run.get("cpu_capability")
    # The CPU it ran on (cpu_kernels.cpu_model); None: a trainer that did not record it.
    summary["cpu"] = run.get("cpu")
    # oneDNN's instruction-set cap the trainer was started with (cpu_kernels.ONEDNN_ISA); None: the CPU's own, or not recorded.
    summary["onednn_max_cpu_isa"] = run.get("onednn_max_cpu_isa")
    # A stage its time cap stopped (run/time_caps.py): its outcome depends on the machine's speed.
    summary["time_caps_reached"] = run.get("time_caps_reached") or {}
    # A warm-up phase that lowered an earlier phase's skill by more than the guard's margin (warmup_guard.py).
    summary["warmup_erosion"] = run.get("warmup_erosion") or []
    if rl:
        clip = [m.get("actor/pg_clipfrac", 0.0) for m in rl if "actor/pg_clipfrac" in m]
        summary["rl"] = {
            "reward_first": statistics.fmean(m.get("reward/mean", 0.0) for m in rl[: max(1, len(rl) // 10)]),
            "reward_last": statistics.fmean(m.get("reward/mean", 0.0) for m in rl[-max(1, len(rl) // 10):]),
            "pg_clipfrac_mean": statistics.fmean(clip) if clip else 0.0,
            "steps_with_clipping": sum(1 for value in clip if value > 0),
        }
    return summary


def eval_split(root: Path) -> dict[str, Any]:
    """The held-out tasks' generator options and seed (from the first record's provenance), the
    command that makes more of them, and the answers' distribution (the chance level)."""
    path = root / "data" / "eval" / "tasks.jsonl"
    if not path.exists():
        return {}
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    provenance = dict(records[0].get("generator") or {})
    for key in ("index", "attempt"):
        provenance.pop(key, None)
    answers = Counter(str(record["answer"]) for record in records)
    command = ["npx", "vistool", "data", "gen", "--kind", str(provenance.get("kind")), "--n", str(len(records)),
               "--seed", str(provenance.get("seed")), "--split", str(provenance.get("split")),
               "--difficulty", str(provenance.get("difficulty"))]
    if provenance.get("image_size"):
        command += ["--image-size", "x".join(str(side) for side in provenance["image_size"])]
    if provenance.get("families"):
        command += ["--family", ",".join(provenance["families"])]
    if provenance.get("labels"):
        command += ["--labels", ",".join(provenance["labels"])]
    if provenance.get("shuffle_labels"):
        command += ["--shuffle-labels"]
    if provenance.get("categories"):
        command += ["--categories", "-".join(str(count) for count in provenance["categories"])]
    if provenance.get("min_top_gap"):
        command += ["--min-top-gap", str(provenance["min_top_gap"])]
    # Search scenes are made for one image budget: fresh ones must be judged under the same.
    if provenance.get("max_pixels"):
        command += ["--max-pixels", str(provenance["max_pixels"])]
    if provenance.get("legible_px"):
        command += ["--legible-px", str(provenance["legible_px"])]
    command += ["--out", "heldout/"]
    most_common = answers.most_common(1)[0][1] if answers else 0
    return {**provenance, "n": len(records), "path": str(path), "command": " ".join(command),
            "answers": dict(sorted(answers.items())), "chance": 1 / len(answers) if answers else None,
            "majority_rate": most_common / len(records) if records else None}


def targets(arms: dict[str, Any]) -> list[dict[str, Any]]:
    """The demo's three claims, each with its measured numbers and whether it held."""
    tools, text = arms.get("tools", {}), arms.get("text", {})
    checks: list[dict[str, Any]] = []
    if "after_rl" in tools and "after_rl" in text:
        a, b = tools["after_rl"], text["after_rl"]
        gap = (a["acc"] - b["acc"]) * 100
        apart = a["acc_ci95"][0] > b["acc_ci95"][1]
        checks.append({"claim": f"tools arm after RL beats the text arm after RL by ≥ {TOOLS_OVER_TEXT_POINTS} points, 95% intervals apart",
                       "measured": f"{a['acc']:.3f} vs {b['acc']:.3f}: {gap:+.1f} points; intervals "
                                   f"[{a['acc_ci95'][0]:.3f}, {a['acc_ci95'][1]:.3f}] and [{b['acc_ci95'][0]:.3f}, {b['acc_ci95'][1]:.3f}]"
                                   f" {'do not overlap' if apart else 'overlap'}",
                       "met": gap >= TOOLS_OVER_TEXT_POINTS and apart})
    if "after_sft" in tools and "after_rl" in tools:
        a, b = tools["after_rl"], tools["after_sft"]
        gain = (a["acc"] - b["acc"]) * 100
        rises = a["tool_call_rate"] > b["tool_call_rate"]
        checks.append({"claim": f"tools arm after RL beats the tools arm after SFT by ≥ {RL_OVER_SFT_POINTS} points, and its tool-call rate rises",
                       "measured": f"accuracy {b['acc']:.3f} → {a['acc']:.3f} ({gain:+.1f} points); tool-call rate "
                                   f"{b['tool_call_rate']:.3f} → {a['tool_call_rate']:.3f}",
                       "met": gain >= RL_OVER_SFT_POINTS and rises})
    if "rl" in tools:
        rl = tools["rl"]
        # Clipping is a per-token event: a step whose mini-batches moved the policy by less than ε
        # clips nothing, so the claim is that it acts on most steps, not on every one (docs/DEMO.md).
        checks.append({"claim": "DAPO's clipping acts: actor/pg_clipfrac > 0 on most RL steps",
                       "measured": f"pg_clipfrac > 0 on {rl['steps_with_clipping']} of {tools['budget']['rl_steps']} RL steps "
                                   f"(mean {rl['pg_clipfrac_mean']:.4f})",
                       "met": rl["steps_with_clipping"] * 2 > tools["budget"]["rl_steps"]})
    return checks


def time_caps_reached(arms: dict[str, Any]) -> list[str]:
    """One sentence per stage a time cap stopped, arm by arm: what the report and the console must
    say first, because the claims below them then hold or fail by where the wall clock fell."""
    sentences = []
    for arm, numbers in arms.items():
        for stage, cap in sorted((numbers.get("time_caps_reached") or {}).items()):
            where = f" (in its {cap['phase']} phase)" if cap.get("phase") else ""
            sentences.append(f"the {arm} arm's {stage.upper()} was stopped by its time cap of {float(cap.get('max_seconds', 0)):.0f} s "
                             f"after {cap.get('step')} of its {cap.get('steps')} steps{where}")
    return sentences


def warmup_erosion(arms: dict[str, Any]) -> list[str]:
    """One sentence per skill a later warm-up phase lowered (algorithms/warmup_guard.py), arm by arm."""
    sentences = []
    for arm, numbers in arms.items():
        for found in numbers.get("warmup_erosion") or []:
            sentences.append(f"the {arm} arm's {found['lowered_by']} phase lowered {str(found['skill']).removeprefix('sft/')} from "
                             f"{float(found['rate_then']):.2f} (end of {found['taught_by']}, SFT step {found['taught_step']}) to "
                             f"{float(found['rate_now']):.2f} (SFT step {found['lowered_step']})")
    return sentences


def differences(arms: dict[str, Any]) -> dict[str, Any]:
    """tools − text at each checkpoint both arms have: two runs, so independent samples (Newcombe's hybrid interval)."""
    tools, text = arms.get("tools", {}), arms.get("text", {})
    between = {}
    for label in CHECKPOINTS:
        if label in tools and label in text:
            diff, low, high = newcombe_hybrid(tools[label]["correct"], tools[label]["n"], text[label]["correct"], text[label]["n"])
            between[label] = {"diff": diff, "ci95": [low, high], "method": "newcombe-hybrid"}
    return {"tools_minus_text": between}


def demo_summary(root: Path, minutes: float | None = None) -> dict[str, Any]:
    arms = {arm: arm_summary(root / arm, arm) for arm in ("tools", "text") if (root / arm).is_dir()}
    demo = json.loads((root / "demo.json").read_text()) if (root / "demo.json").exists() else {}
    return {"arms": arms, "differences": differences(arms), "eval_split": eval_split(root), "targets": targets(arms), "minutes": minutes,
            "minutes_cap": demo.get("minutes_cap"), "seed": demo.get("seed"), "time_caps_reached": time_caps_reached(arms),
            "warmup_erosion": warmup_erosion(arms),
            "model": demo.get("model"), "device": demo.get("device"),
            # How the arms' trainers were started: their threads and the kernel path asked for (None: the CPU's own).
            "threads": demo.get("threads"), "cpu_kernels": demo.get("cpu_kernels")}
