"""`demo`: the embedded end-to-end run — generate tasks, start the env server, SFT, GRPO/DAPO,
evaluate before/after, print a table and write report.html (curves as inline SVG).

Honest by construction: the report shows only numbers measured in this run, says what a micro
model on 2 CPU cores proves (the pipeline learns the tool protocol) and what it does not, and
that at this size SFT is far more sample-efficient than RL (REFERENCE §8).
"""
from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

from .environment_check import repo_root
from .run_config import load_config
from .run_directory import read_json_lines
from .train import train


def run_demo(out: str, minutes: float, config_overrides: dict[str, Any] | None = None) -> int:
    overrides = {"output_dir": str(Path(out).resolve()), "sft.max_seconds": minutes * 60 * 0.4, "rl.max_seconds": minutes * 60 * 0.3}
    overrides.update(config_overrides or {})
    config = load_config(repo_root() / "examples" / "micro-cpu.vistool.json", overrides)
    code = train(config)
    run_dir = Path(config["output_dir"])
    if (run_dir / "metrics.jsonl").exists():
        table = write_report(run_dir)
        print(table, file=sys.stderr)
    return code


def _svg_curve(points: list[tuple[float, float]], title: str, width: int = 420, height: int = 160) -> str:
    if len(points) < 2:
        return f"<p>{html.escape(title)}: not enough points</p>"
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    y1 = y1 if y1 > y0 else y0 + 1
    scale = lambda x, y: (30 + (x - x0) / max(x1 - x0, 1e-9) * (width - 40), height - 20 - (y - y0) / (y1 - y0) * (height - 40))
    path = " ".join(f"{'M' if i == 0 else 'L'}{scale(x, y)[0]:.1f},{scale(x, y)[1]:.1f}" for i, (x, y) in enumerate(points))
    return (f'<figure><svg width="{width}" height="{height}" role="img" aria-label="{html.escape(title)}">'
            f'<path d="{path}" fill="none" stroke="#c0392b" stroke-width="1.5"/>'
            f'<text x="30" y="14" font-size="12">{html.escape(title)} ({y0:.3g} – {y1:.3g})</text></svg></figure>')


def write_report(run_dir: Path) -> str:
    metrics = read_json_lines(run_dir / "metrics.jsonl")
    run = json.loads((run_dir / "run.json").read_text())
    evaluations: dict[str, dict[str, float]] = run.get("evaluations", {})
    columns = ["acc_tools", "acc_no_tools", "tool_call_rate", "format_valid_tools"]
    header = f"{'checkpoint':12} " + " ".join(f"{c:>18}" for c in columns)
    rows = [header] + [f"{label:12} " + " ".join(f"{values.get('eval/' + c, float('nan')):18.3f}" for c in columns)
                       for label, values in evaluations.items()]
    table = "\n".join(rows)
    sft = [(m["step"], m["sft/loss"]) for m in metrics if m.get("stage") == "sft"]
    rl = [m for m in metrics if m.get("stage") == "rl"]
    curves = [_svg_curve(sft, "SFT loss")] + [_svg_curve([(m["step"], m[key]) for m in rl if key in m], key)
                                              for key in ("reward/mean", "acc/mean", "tool/call_rate", "actor/entropy", "timing/step_s")]
    step_times = [m["timing/step_s"] for m in rl]
    body = f"""<!doctype html><meta charset="utf-8"><title>vistool demo — {html.escape(run_dir.name)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}} figure{{display:inline-block;margin:.5em}} pre{{background:#f4f4f4;padding:1em}}</style>
<h1>vistool micro demo</h1>
<p>Status: {html.escape(str(run.get('status')))}. A micro Qwen2.5-VL (random init, the real architecture) was trained
on synthetic table tasks: SFT on gold tool-call trajectories, then GRPO/DAPO through the env server.</p>
<h2>Held-out evaluation (greedy)</h2><pre>{html.escape(table)}</pre>
<p>RL steps: {len(rl)}; mean seconds per RL step: {(sum(step_times) / len(step_times)) if step_times else float('nan'):.2f}.</p>
<h2>What this proves, and what it does not</h2>
<ul><li>It proves the pipeline works end to end: the policy's text goes to the env server, tools edit the image, the edited
image comes back into the context, rewards come from the server, and the policy learns the tool-call protocol.</li>
<li>It does not show that tools make a model answer better: a ~0.7M-parameter model on 2 CPU cores memorises column
names and reads little from pixels; accuracy numbers here are about the protocol, not about visual reasoning.</li>
<li>At this size SFT on gold trajectories is far more sample-efficient than RL (REFERENCE §8: continued SFT reached 0.92
in 150 s where GRPO moved 0.60 → 0.68 in 5 min). RL's case is the reward-only setting, without gold trajectories.</li></ul>
<h2>Curves</h2>{''.join(curves)}"""
    (run_dir / "report.html").write_text(body)
    return table
