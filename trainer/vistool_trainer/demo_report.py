"""report.html for a finished (or stopped) run: held-out evaluations before and after each stage,
speed and memory, training curves as inline SVG, and a few rollouts with their images.

Reads only the run directory (run.json, config.json, metrics.jsonl, rollouts/, images/) and shows
only what was measured there. It never runs anything and never fetches anything: the page has no
scripts and links images by relative path, so it opens from disk.
"""
from __future__ import annotations

import html
import json
import statistics
from pathlib import Path
from typing import Any

from .run_directory import read_json_lines

EVAL_COLUMNS = [
    ("eval/acc_tools", "accuracy with tools"),
    ("eval/acc_no_tools", "accuracy without tools"),
    ("eval/tool_call_rate", "tool-call rate"),
    ("eval/tool_error_rate", "tool-error rate"),
    ("eval/format_valid_tools", "format valid (tools)"),
    ("eval/format_valid_no_tools", "format valid (no tools)"),
]
RL_CURVES = ["reward/mean", "acc/mean", "tool/call_rate", "tool/error_rate", "format/valid_rate", "response_length/mean", "timing/step_s"]


def evaluation_table(evaluations: dict[str, dict[str, float]]) -> str:
    """The before/after table as plain text (printed by the demo)."""
    header = f"{'checkpoint':10} " + " ".join(f"{title:>24}" for _, title in EVAL_COLUMNS)
    rows = [header]
    for label, values in evaluations.items():
        cells = " ".join(f"{values[key]:24.2f}" if key in values else f"{'-':>24}" for key, _ in EVAL_COLUMNS)
        rows.append(f"{label:10} {cells}")
    return "\n".join(rows)


def speed_summary(metrics: list[dict[str, Any]]) -> dict[str, float]:
    sft = [m for m in metrics if m.get("stage") == "sft"]
    rl = [m for m in metrics if m.get("stage") == "rl"]
    summary: dict[str, float] = {"sft_steps": float(len(sft)), "rl_steps": float(len(rl))}
    if sft:
        summary["sft_s_per_step_median"] = statistics.median(m["timing/step_s"] for m in sft)
    if rl:
        for key in ("timing/step_s", "timing/gen_s", "timing/env_s", "timing/train_s"):
            summary[key] = statistics.fmean(m.get(key, 0.0) for m in rl)
        summary["env_share"] = summary["timing/env_s"] / max(summary["timing/step_s"], 1e-9)
    peaks = [m["memory/trainer_peak_rss_mb"] for m in metrics if "memory/trainer_peak_rss_mb" in m]
    servers = [m["memory/env_server_rss_mb"] for m in metrics if "memory/env_server_rss_mb" in m]
    if peaks:
        summary["trainer_peak_rss_mb"] = max(peaks)
    if servers:
        summary["env_server_max_rss_mb"] = max(servers)
    return summary


def _svg_curve(points: list[tuple[float, float]], title: str, width: int = 380, height: int = 170) -> str:
    if len(points) < 2:
        return f"<figure><figcaption>{html.escape(title)}: fewer than two points</figcaption></figure>"
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    y1 = y1 if y1 > y0 else y0 + 1
    left, right, top, bottom = 44, 8, 22, 24

    def place(x: float, y: float) -> tuple[float, float]:
        return (left + (x - x0) / max(x1 - x0, 1e-9) * (width - left - right),
                height - bottom - (y - y0) / (y1 - y0) * (height - top - bottom))

    path = " ".join(f"{'M' if i == 0 else 'L'}{place(x, y)[0]:.1f},{place(x, y)[1]:.1f}" for i, (x, y) in enumerate(points))
    window = max(1, len(points) // 10)
    smooth = [(points[i][0], statistics.fmean(p[1] for p in points[max(0, i - window + 1):i + 1])) for i in range(len(points))]
    trend = " ".join(f"{'M' if i == 0 else 'L'}{place(x, y)[0]:.1f},{place(x, y)[1]:.1f}" for i, (x, y) in enumerate(smooth))
    return (f'<figure><svg width="{width}" height="{height}" role="img" aria-label="{html.escape(title)}">'
            f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" fill="#fafafa" stroke="#ddd"/>'
            f'<path d="{path}" fill="none" stroke="#e8a0a0" stroke-width="1"/>'
            f'<path d="{trend}" fill="none" stroke="#b03030" stroke-width="2"/>'
            f'<text x="{left}" y="14" font-size="12" font-weight="bold">{html.escape(title)}</text>'
            f'<text x="2" y="{top + 10}" font-size="10">{y1:.3g}</text><text x="2" y="{height - bottom}" font-size="10">{y0:.3g}</text>'
            f'<text x="{left}" y="{height - 6}" font-size="10">step {x0:g}</text>'
            f'<text x="{width - right - 60}" y="{height - 6}" font-size="10">step {x1:g}</text></svg>'
            f'<figcaption>light: per step; dark: moving mean over {window}</figcaption></figure>')


def _rollout_html(record: dict[str, Any]) -> str:
    task = record.get("task", {})
    parts = [f'<div class="rollout"><p><b>{html.escape(str(task.get("question", "")))}</b> — gold '
             f'<code>{html.escape(str(task.get("answer", "")))}</code>, reward {record.get("reward", 0):.2f}, '
             f'{"correct" if record.get("correct") else "wrong"}, advantage {record.get("advantage", 0):+.2f}</p>']
    if task.get("image"):
        parts.append(f'<img src="images/{html.escape(task["image"])}.png" alt="task image" width="112">')
    for turn in record.get("turns", []):
        if turn.get("role") == "assistant":
            parts.append(f'<pre class="assistant">{html.escape(turn.get("text", ""))}</pre>')
            for error in turn.get("errors") or []:
                parts.append(f'<p class="error">{html.escape(str(error.get("class")))}: {html.escape(str(error.get("message")))}</p>')
        else:
            parts.append(f'<pre class="observation">{html.escape(turn.get("text", ""))}</pre>')
            for ref in turn.get("images") or []:
                parts.append(f'<img src="images/{html.escape(ref)}.png" alt="edited image" width="112">')
    parts.append("</div>")
    return "".join(parts)


def write_report(run_dir: Path) -> str:
    """Write run_dir/report.html; return the plain-text evaluation table and speed line."""
    metrics = read_json_lines(run_dir / "metrics.jsonl")
    run = json.loads((run_dir / "run.json").read_text())
    config = json.loads((run_dir / "config.json").read_text()) if (run_dir / "config.json").exists() else {}
    evaluations: dict[str, dict[str, float]] = run.get("evaluations", {})
    table = evaluation_table(evaluations)
    speed = speed_summary(metrics)
    sft = [(m["step"], m["sft/loss"]) for m in metrics if m.get("stage") == "sft"]
    rl = [m for m in metrics if m.get("stage") == "rl"]
    curves = [_svg_curve(sft, "SFT loss (policy tokens)")]
    curves += [_svg_curve([(m["step"], m[key]) for m in rl if key in m], key) for key in RL_CURVES]
    last_rollouts = sorted((run_dir / "rollouts").glob("step-*.jsonl"))
    examples = []
    if last_rollouts:
        records = read_json_lines(last_rollouts[-1])
        examples = [_rollout_html(record) for record in records[:6]]
    generate = config.get("data", {}).get("generate", {})
    policy = config.get("policy", {})
    speed_rows = "".join(f"<tr><td>{html.escape(key)}</td><td>{value:.3g}</td></tr>" for key, value in speed.items())
    speed_line = (f"SFT {speed.get('sft_s_per_step_median', float('nan')):.2f} s/step (median, {int(speed['sft_steps'])} steps); "
                  f"RL {speed.get('timing/step_s', float('nan')):.2f} s/step (mean, {int(speed['rl_steps'])} steps: gen "
                  f"{speed.get('timing/gen_s', float('nan')):.2f}, env {speed.get('timing/env_s', float('nan')):.2f}, train "
                  f"{speed.get('timing/train_s', float('nan')):.2f}); peak RSS trainer {speed.get('trainer_peak_rss_mb', float('nan')):.0f} MB, "
                  f"env server {speed.get('env_server_max_rss_mb', float('nan')):.0f} MB")
    body = f"""<!doctype html><meta charset="utf-8"><title>vistool demo — {html.escape(run_dir.name)}</title>
<style>body{{font-family:sans-serif;max-width:64em;margin:2em auto;padding:0 1em;color:#222}} figure{{display:inline-block;margin:.4em}}
figcaption{{font-size:11px;color:#666}} pre{{background:#f4f4f4;padding:.6em;white-space:pre-wrap;margin:.3em 0}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:right}} th{{background:#eee}}
.rollout{{border:1px solid #ddd;padding:.5em;margin:.6em 0}} .rollout img{{image-rendering:pixelated;border:1px solid #ccc;margin-right:.4em}}
pre.assistant{{background:#eef4ff}} .error{{color:#a00;font-size:90%}}</style>
<h1>vistool demo: {html.escape(str(config.get('name', run_dir.name)))}</h1>
<p>Status <b>{html.escape(str(run.get('status')))}</b>. Policy <code>{html.escape(str(policy.get('model')))}</code> on
<code>{html.escape(str(config.get('device')))}</code>: SFT on gold tool-call trajectories replayed through the env server, then
GRPO/DAPO with rollouts through the same server. Tasks: <code>vistool data gen --kind {html.escape(str(generate.get('kind')))}
--difficulty {html.escape(str(generate.get('difficulty')))} --image-size {html.escape(str(generate.get('image_size')))}{html.escape(_generator_options(generate))}</code>.</p>
<h2>Held-out evaluation (greedy)</h2>
{_eval_table_html(evaluations)}
{_chance_html(generate)}
{_memorisation_html(rl, evaluations)}
<h2>Speed and memory</h2><p>{html.escape(speed_line)}</p><table>{speed_rows}</table>
<h2>What this shows, and what it does not</h2>
<ul><li>It shows the pipeline end to end: the policy's raw text goes to the env server, which parses the tool call, edits the
image and returns it as the next turn; the server scores the episode; the trainer learns from those rewards. Format validity before
and after SFT shows the policy learning the tool protocol. The tool-call rate counts calls that succeeded: a call naming
a label the image does not have is refused (E4, the tool-error rate) and the server's message lists the real labels.</li>
<li>It does not show that tools make a model answer better. With fixed labels the question is a visual judgement ("which of
three bars is tallest"), which the model can make from the original image: the highlight it learns to call does not carry the
answer, so accuracy with and without tools should be close. The micro model (~0.6M parameters, random init, minutes on 2 CPU
cores) learns the tool-call format and that judgement; read the accuracy columns against the chance level above. Difficulty-1
charts also print each bar's value, so the judgement may rest on the bar heights, the printed digits or both.</li>
<li>At this size SFT on gold trajectories is far more sample-efficient than RL (REFERENCE §8: continued SFT reached 0.92 in 150 s
where GRPO moved 0.60 → 0.68 in 5 min). RL's case is the reward-only setting, where no gold trajectory exists. When SFT already
reaches the ceiling on these tasks, RL can only hold it: most groups get identical rewards and dynamic sampling drops them.</li></ul>
<h2>Curves</h2>{''.join(curves)}
<h2>Rollouts of the last RL step</h2>{''.join(examples) or '<p>none written</p>'}
"""
    (run_dir / "report.html").write_text(body)
    return table + "\n" + speed_line


def _generator_options(generate: dict[str, Any]) -> str:
    """The `data gen` options the run's data.generate adds (families, fixed labels, top gap)."""
    parts = []
    if generate.get("families"):
        parts.append(" --family " + ",".join(generate["families"]))
    if generate.get("labels"):
        parts.append(" --labels " + ",".join(generate["labels"]))
    if generate.get("min_top_gap"):
        parts.append(f" --min-top-gap {generate['min_top_gap']}")
    return "".join(parts)


def _chance_html(generate: dict[str, Any]) -> str:
    """What a guess scores on these tasks, so the accuracy columns can be read against it."""
    labels = generate.get("labels")
    if labels:
        return (f"<p>Every chart has the bars {html.escape(', '.join(labels))}, and each is the answer about equally often: "
                f"always writing one of them scores {1 / len(labels):.2f} (chance). The image decides which; the question text does not.</p>")
    return ("<p>A policy that reads the chart's labels and picks one at random scores 1 in the number of bars; one that cannot read the "
            "labels and writes a word of the right category (country, month, year, …) scores roughly 1 in the size of that category's pool.</p>")


def _memorisation_html(rl: list[dict[str, Any]], evaluations: dict[str, dict[str, float]]) -> str:
    """Accuracy on the training prompts (sampled during RL) next to held-out accuracy (greedy):
    the gap says whether the policy learned the skill or the training set."""
    if len(rl) < 2 or "after_rl" not in evaluations:
        return ""
    window = max(1, min(20, len(rl) // 2))
    first = statistics.fmean(m.get("acc/mean", 0.0) for m in rl[:window])
    last = statistics.fmean(m.get("acc/mean", 0.0) for m in rl[-window:])
    held_out = evaluations["after_rl"].get("eval/acc_tools", float("nan"))
    return (f"<p><b>Training prompts against held-out charts.</b> Accuracy of the RL rollouts (sampled, training prompts): "
            f"{first:.2f} over the first {window} RL steps, {last:.2f} over the last {window}. Held-out accuracy with tools "
            f"(greedy) after RL: {held_out:.2f}. A gap this size means the policy has learned the answers of the training "
            f"charts, not how to read a chart it has not seen.</p>") if last - held_out > 0.15 else (
            f"<p>Accuracy of the RL rollouts on training prompts: {first:.2f} → {last:.2f} (first and last {window} steps); "
            f"held-out with tools after RL: {held_out:.2f}.</p>")


def _eval_table_html(evaluations: dict[str, dict[str, float]]) -> str:
    if not evaluations:
        return "<p>No evaluation was recorded.</p>"
    head = "<tr><th>checkpoint</th>" + "".join(f"<th>{html.escape(title)}</th>" for _, title in EVAL_COLUMNS) + "<th>n</th></tr>"
    rows = []
    for label, values in evaluations.items():
        cells = "".join(f"<td>{values[key]:.2f}</td>" if key in values else "<td>–</td>" for key, _ in EVAL_COLUMNS)
        rows.append(f"<tr><th>{html.escape(label)}</th>{cells}<td>{int(values.get('eval/n', 0))}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"
