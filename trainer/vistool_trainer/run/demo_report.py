"""HTML reports, read from run directories only: `write_report(run_dir)` for one run, and
`write_demo_report(root, summary)` for the demo's two arms (`<out>/report.html`).

Neither runs nor fetches anything: the pages have no scripts, draw their curves as inline SVG and
link images by relative path, so they open from disk. Every number comes from the run directories
or from summary.json (demo_summary.py); every piece of model text is escaped.
"""
from __future__ import annotations

import html
import json
import re
import statistics
from pathlib import Path
from typing import Any

from ..algorithms.sft_schedule import PHASES
from ..config import schema_default
from .run_directory import read_json_lines, run_status

EVAL_COLUMNS = [
    ("eval/acc_tools", "accuracy with tools"),
    ("eval/acc_no_tools", "accuracy without tools"),
    ("eval/tool_call_rate", "tool-call rate"),
    ("eval/tool_error_rate", "tool-error rate"),
    ("eval/format_valid_tools", "format valid (tools)"),
    ("eval/format_valid_no_tools", "format valid (no tools)"),
]
RL_CURVES = ["reward/mean", "acc/mean", "tool/call_rate", "tool/error_rate", "actor/pg_clipfrac", "actor/ppo_kl", "response_length/mean",
             "timing/step_s"]
# One colour per arm everywhere: the panels' light-theme series colours, in the order the dashboard
# gives them to the arms (webview/shared/run-colours.ts: tools blue, text orange).
ARM_COLOURS = {"tools": "#1a85ff", "text": "#d18616"}
# The report paints its own colours and follows the reader's theme: VS Code's (the body's class in
# its report tab, where the page otherwise sits transparent on the editor's background) or the
# browser's colour scheme. Every pair below passes WCAG AA (test/view/demo-report-browser.test.ts).
_LIGHT = {"bg": "#ffffff", "fg": "#222222", "muted": "#5f5f5f", "code": "#f4f4f4", "line": "#cccccc", "head": "#eeeeee",
          "good": "#176917", "bad": "#aa0000", "assistant": "#eef4ff", "plot": "#fafafa", "cap-bg": "#fff0f0", "cap-fg": "#700000",
          "cap-line": "#aa0000", "warn-bg": "#fff8d8", "warn-fg": "#553300", "warn-line": "#b88800"}
_DARK = {"bg": "#1e1e1e", "fg": "#dddddd", "muted": "#b0b0b0", "code": "#2b2b2b", "line": "#555555", "head": "#333333",
         "good": "#73c991", "bad": "#f48771", "assistant": "#1c2a3d", "plot": "#252526", "cap-bg": "#3a1e1e", "cap-fg": "#ffb4a8",
         "cap-line": "#f48771", "warn-bg": "#3a3216", "warn-fg": "#f0d58a", "warn-line": "#c9a227"}


def _palette(scheme: str, colours: dict[str, str]) -> str:
    return f"color-scheme:{scheme};" + ";".join(f"--{name}:{value}" for name, value in colours.items())


STYLE = (f":root{{{_palette('light', _LIGHT)}}} @media (prefers-color-scheme:dark){{:root{{{_palette('dark', _DARK)}}}}}\n"
         f":root:has(>body.vscode-dark),:root:has(>body.vscode-high-contrast:not(.vscode-high-contrast-light)){{{_palette('dark', _DARK)}}}\n"
         f":root:has(>body.vscode-light),:root:has(>body.vscode-high-contrast-light){{{_palette('light', _LIGHT)}}}\n"
         """html{background:var(--bg);color:var(--fg)}
body{font-family:sans-serif;max-width:68em;margin:2em auto;padding:0 1em;color:var(--fg);background:var(--bg);line-height:1.4}
figure{display:inline-block;margin:.4em} a{color:inherit}
figcaption{font-size:11px;color:var(--muted)} pre{background:var(--code);color:var(--fg);padding:.6em;white-space:pre-wrap;margin:.3em 0}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid var(--line);padding:.25em .6em;text-align:right} th{background:var(--head)}
td.left,th.left{text-align:left} .met{color:var(--good);font-weight:bold} .missed{color:var(--bad);font-weight:bold}
.rollout{border:1px solid var(--line);padding:.5em;margin:.6em 0} .rollout img,.pair img{image-rendering:pixelated;border:1px solid var(--line);margin-right:.4em}
pre.assistant{background:var(--assistant)} .error{color:var(--bad);font-size:90%} code{background:var(--code);color:var(--fg);padding:0 .2em}
svg text{fill:var(--fg)} svg rect{fill:var(--plot);stroke:var(--line)}
.muted{color:var(--muted)} .grid td.right{color:var(--good);font-weight:bold} .grid td.wrong{color:var(--bad)}
.grids{display:flex;flex-wrap:wrap;gap:0 2em} caption{font-size:90%;color:var(--muted);text-align:left}
.timecap{border:3px solid var(--cap-line);background:var(--cap-bg);color:var(--cap-fg);padding:.4em 1em;margin:1em 0;font-size:110%}
.erosion{border:2px solid var(--warn-line);background:var(--warn-bg);color:var(--warn-fg);padding:.4em 1em;margin:1em 0}""")


def evaluation_table(evaluations: dict[str, dict[str, float]]) -> str:
    """A run's checkpoint evaluations as plain text."""
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


def speed_line(speed: dict[str, float]) -> str:
    nan = float("nan")
    return (f"SFT {speed.get('sft_s_per_step_median', nan):.2f} s/step (median, {int(speed['sft_steps'])} steps); "
            f"RL {speed.get('timing/step_s', nan):.2f} s/step (mean, {int(speed['rl_steps'])} steps: gen "
            f"{speed.get('timing/gen_s', nan):.2f}, env {speed.get('timing/env_s', nan):.2f}, train "
            f"{speed.get('timing/train_s', nan):.2f}); peak RSS trainer {speed.get('trainer_peak_rss_mb', nan):.0f} MB, "
            f"env server {speed.get('env_server_max_rss_mb', nan):.0f} MB")


def svg_lines(series: dict[str, list[tuple[float, float]]], title: str, colours: dict[str, str] | None = None, width: int = 420,
              height: int = 190, y_range: tuple[float, float] | None = None, x_label: str = "step", smooth: bool = True) -> str:
    """One chart, several named series: each drawn light per point and dark as a moving mean (when
    `smooth`), so the raw values stay visible. `y_range` fixes the axis (accuracies on [0, 1]) so
    noise does not look like a trend."""
    drawn = {name: points for name, points in series.items() if points}
    if not drawn or sum(len(points) for points in drawn.values()) < 2:
        return f"<figure><figcaption>{html.escape(title)}: fewer than two points</figcaption></figure>"
    xs = [x for points in drawn.values() for x, _ in points]
    ys = [y for points in drawn.values() for _, y in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = y_range if y_range else (min(ys), max(ys))
    y1 = y1 if y1 > y0 else y0 + 1
    left, right, top, bottom = 44, 8, 22, 38
    palette = ["#1a85ff", "#d18616", "#388a34", "#652d90"]

    def place(x: float, y: float) -> tuple[float, float]:
        return (left + (x - x0) / max(x1 - x0, 1e-9) * (width - left - right),
                height - bottom - (y - y0) / (y1 - y0) * (height - top - bottom))

    def path(points: list[tuple[float, float]]) -> str:
        return " ".join(f"{'M' if i == 0 else 'L'}{place(x, y)[0]:.1f},{place(x, y)[1]:.1f}" for i, (x, y) in enumerate(points))

    parts = [f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" fill="#fafafa" stroke="#ddd"/>']
    legend = []
    for index, (name, points) in enumerate(drawn.items()):
        colour = (colours or {}).get(name, palette[index % len(palette)])
        points = sorted(points)
        window = max(1, len(points) // 10) if smooth else 1
        trend = [(points[i][0], statistics.fmean(p[1] for p in points[max(0, i - window + 1):i + 1])) for i in range(len(points))]
        if window > 1:
            parts.append(f'<path d="{path(points)}" fill="none" stroke="{colour}" stroke-opacity="0.35" stroke-width="1"/>')
        parts.append(f'<path d="{path(trend)}" fill="none" stroke="{colour}" stroke-width="2"/>')
        if len(points) <= 20:
            parts += [f'<circle cx="{place(x, y)[0]:.1f}" cy="{place(x, y)[1]:.1f}" r="2.5" fill="{colour}"/>' for x, y in points]
        legend.append(f'<tspan fill="{colour}">■ {html.escape(name)}</tspan> ')
    parts.append(f'<text x="{left}" y="14" font-size="12" font-weight="bold">{html.escape(title)}</text>')
    parts.append(f'<text x="2" y="{top + 10}" font-size="10">{y1:.3g}</text><text x="2" y="{height - bottom}" font-size="10">{y0:.3g}</text>')
    parts.append(f'<text x="{left}" y="{height - bottom + 12}" font-size="10">{html.escape(x_label)} {x0:g}</text>')
    parts.append(f'<text x="{width - right - 70}" y="{height - bottom + 12}" font-size="10">{html.escape(x_label)} {x1:g}</text>')
    parts.append(f'<text x="{left}" y="{height - 6}" font-size="11">{"".join(legend)}</text>')
    caption = "light: per point; dark: moving mean over a tenth of the points" if smooth else "one point per evaluation"
    return (f'<figure><svg width="{width}" height="{height}" role="img" aria-label="{html.escape(title)}">{"".join(parts)}</svg>'
            f'<figcaption>{caption}</figcaption></figure>')


def _passes(epochs: Any) -> str:
    """'1 pass' / '2 passes' for rl.ppo_epochs (the report is read by people, not parsed)."""
    return "1 pass" if epochs == 1 else f"{epochs} passes"


def _image(src: str, alt: str, width: int = 224) -> str:
    return f'<img src="{html.escape(src)}" alt="{html.escape(alt)}" width="{width}">'


def rollout_html(record: dict[str, Any], images: str = "images") -> str:
    """One rollout: question, gold, reward, the turns (model text escaped) and the images, linked
    under `images` (relative to the page)."""
    task = record.get("task", {})
    parts = [f'<div class="rollout"><p><b>{html.escape(str(task.get("question", "")))}</b> — gold '
             f'<code>{html.escape(str(task.get("answer", "")))}</code>, reward {float(record.get("reward", 0)):.2f}, '
             f'{"correct" if record.get("correct") else "wrong"}, advantage {float(record.get("advantage", 0)):+.2f}</p>']
    if task.get("image"):
        parts.append(_image(f"{images}/{task['image']}.png", "task image"))
    for turn in record.get("turns", []):
        if turn.get("role") == "assistant":
            parts.append(f'<pre class="assistant">{html.escape(str(turn.get("text", "")))}</pre>')
            for error in turn.get("errors") or []:
                parts.append(f'<p class="error">{html.escape(str(error.get("class")))}: {html.escape(str(error.get("message")))}</p>')
        else:
            parts.append(f'<pre class="observation">{html.escape(str(turn.get("text", "")))}</pre>')
            for ref in turn.get("images") or []:
                parts.append(_image(f"{images}/{ref}.png", "edited image"))
    parts.append("</div>")
    return "".join(parts)


def _eval_table_html(evaluations: dict[str, dict[str, float]]) -> str:
    if not evaluations:
        return "<p>No evaluation was recorded.</p>"
    head = "<tr><th>checkpoint</th>" + "".join(f"<th>{html.escape(title)}</th>" for _, title in EVAL_COLUMNS) + "<th>n</th></tr>"
    rows = []
    for label, values in evaluations.items():
        cells = "".join(f"<td>{values[key]:.2f}</td>" if key in values else "<td>–</td>" for key, _ in EVAL_COLUMNS)
        rows.append(f"<tr><th>{html.escape(label)}</th>{cells}<td>{int(values.get('eval/n', 0))}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def write_report(run_dir: Path) -> str:
    """run_dir/report.html for one run (finished or stopped); returns its evaluation table and speed line as text."""
    metrics = read_json_lines(run_dir / "metrics.jsonl")
    run = json.loads((run_dir / "run.json").read_text())
    config = json.loads((run_dir / "config.json").read_text()) if (run_dir / "config.json").exists() else {}
    evaluations: dict[str, dict[str, float]] = run.get("evaluations", {})
    speed = speed_summary(metrics)
    sft = [(m["step"], m["sft/loss"]) for m in metrics if m.get("stage") == "sft"]
    rl = [m for m in metrics if m.get("stage") == "rl"]
    curves = [svg_lines({"loss": sft}, "SFT loss (policy tokens)")]
    curves += [svg_lines({key: [(m["step"], m[key]) for m in rl if key in m]}, key) for key in RL_CURVES]
    last_rollouts = sorted((run_dir / "rollouts").glob("step-*.jsonl"))
    examples = [rollout_html(record) for record in read_json_lines(last_rollouts[-1])[:6]] if last_rollouts else []
    policy = config.get("policy", {})
    speed_rows = "".join(f"<tr><td class=left>{html.escape(key)}</td><td>{value:.3g}</td></tr>" for key, value in speed.items())
    body = f"""<!doctype html><meta charset="utf-8"><title>vistool run — {html.escape(run_dir.name)}</title><style>{STYLE}</style>
<h1>vistool run: {html.escape(str(config.get('name', run_dir.name)))}</h1>
<p>Status <b>{html.escape(run_status(run))}</b>. Policy <code>{html.escape(str(policy.get('model')))}</code> on
<code>{html.escape(str(config.get('device')))}</code>, tools {'on' if config.get('env', {}).get('tools', schema_default('env.tools')) else 'off'}.</p>
<h2>Held-out evaluation (greedy)</h2>{_eval_table_html(evaluations)}
<h2>Speed and memory</h2><p>{html.escape(speed_line(speed))}</p><table>{speed_rows}</table>
<h2>Curves</h2>{''.join(curves)}
<h2>Rollouts of the last RL step</h2>{''.join(examples) or '<p>none written</p>'}
"""
    (run_dir / "report.html").write_text(body)
    return evaluation_table(evaluations) + "\n" + speed_line(speed)


# ---- the demo's report ---------------------------------------------------------------------

def arm_process_words(summary: dict[str, Any]) -> str:
    """How the arms' trainers ran, as the report says it: their threads and the ATen kernel path each
    recorded, with whether it was asked for (`--cpu-kernels`) or the CPU's own, and the CPU."""
    arms = (summary.get("arms") or {}).values()
    caps = sorted({str(numbers["onednn_max_cpu_isa"]) for numbers in arms if numbers.get("onednn_max_cpu_isa")})
    cpus = sorted({str(numbers["cpu"]) for numbers in arms if numbers.get("cpu")})
    return (_threads_and_kernels(summary) + (f", oneDNN at most {' and '.join(caps)}" if caps else "")
            + (f", on {' and '.join(cpus)}" if cpus else ""))


def _threads_and_kernels(summary: dict[str, Any]) -> str:
    threads = summary.get("threads")
    words = f"{threads} trainer thread{'' if threads == 1 else 's'} per arm" if threads else "the trainer's default threads"
    recorded = {arm: numbers.get("cpu_capability") for arm, numbers in (summary.get("arms") or {}).items()}
    asked = summary.get("cpu_kernels")
    how = f"asked with --cpu-kernels {asked}" if asked else "the CPU's own"
    if not any(recorded.values()):
        return f"{words}; ATen kernel path not recorded" + (f" ({how})" if asked else "")
    if len(set(recorded.values())) == 1:
        return f"{words}; ATen kernels {next(iter(recorded.values()))} ({how})"
    return f"{words}; ATen kernels " + ", ".join(f"{arm} {path or 'not recorded'}" for arm, path in recorded.items()) + f" ({how})"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _ci(numbers: dict[str, Any]) -> str:
    low, high = numbers["acc_ci95"]
    return f"{_pct(numbers['acc'])} [{_pct(low)}, {_pct(high)}]"


def demo_table(summary: dict[str, Any]) -> str:
    """The evaluation table as plain text (printed by the demo)."""
    rows = [f"{'arm':6} {'checkpoint':10} {'accuracy [95% Wilson]':>28} {'n':>5} {'tool calls':>11} {'tool errors':>12}"]
    for arm, numbers in summary["arms"].items():
        for label in ("after_sft", "after_rl"):
            if label in numbers:
                value = numbers[label]
                rows.append(f"{arm:6} {label:10} {_ci(value):>28} {value['n']:>5} {value['tool_call_rate']:>11.3f} {value['tool_error_rate']:>12.3f}")
    for arm, numbers in summary["arms"].items():
        for label in ("after_sft", "after_rl"):
            effect = (numbers.get(label) or {}).get("tool_effect")
            if effect:
                low, high = effect["ci95"]
                changed = "–" if effect["answer_changed_rate"] is None else _pct(effect["answer_changed_rate"])
                rows.append(f"{arm:6} {label:10} tool effect (acc as run − tool results withheld) {100 * effect['effect']:+.1f} points "
                            f"[{100 * low:+.1f}, {100 * high:+.1f}] (95%, Newcombe paired, n={effect['n']}); answers changed {changed} of replays")
    for target in summary.get("targets", []):
        rows.append(f"{'MET' if target['met'] else 'NOT MET':8} {target['claim']}: {target['measured']}")
    erosion = summary.get("warmup_erosion") or []
    if erosion:
        rows.append(EROSION_HEADLINE.upper() + ": " + "; ".join(erosion) + ".")
    caps = summary.get("time_caps_reached") or []
    if caps:
        rows.append(TIME_CAP_HEADLINE + ": " + "; ".join(caps) + ". " + TIME_CAP_MEANING)
    return "\n".join(rows)


TIME_CAP_HEADLINE = "TIME CAP REACHED"
TIME_CAP_MEANING = ("The step budgets did not all run: the outcome above depends on this machine's speed, not only on the recipe. "
                    "Run again with more time (make demo DEMO_MINUTES=...) for the designed run.")


def time_cap_banner_html(summary: dict[str, Any]) -> str:
    """A banner above everything else when a time cap stopped a stage (nothing when none did)."""
    caps = summary.get("time_caps_reached") or []
    if not caps:
        return ""
    items = "".join(f"<li>{html.escape(sentence)}</li>" for sentence in caps)
    return (f'<div class="timecap"><p><b>{TIME_CAP_HEADLINE}.</b> {html.escape(TIME_CAP_MEANING)}</p><ul>{items}</ul></div>')


EROSION_HEADLINE = "A warm-up phase lowered an earlier skill"
EROSION_MEANING = ("The SFT probe measured a skill an earlier phase had taught lower, by more than the guard's margin, at the end "
                   "of a later phase (trainer/vistool_trainer/algorithms/warmup_guard.py). RL starts from the lowered skill; "
                   "issue 40 saw such a run end far below the documented accuracy.")


def erosion_note_html(summary: dict[str, Any]) -> str:
    """A yellow note when the warm-up guard found an eroded skill (nothing when it found none)."""
    found = summary.get("warmup_erosion") or []
    if not found:
        return ""
    items = "".join(f"<li>{html.escape(sentence)}</li>" for sentence in found)
    return f'<div class="erosion"><p><b>{EROSION_HEADLINE}.</b> {html.escape(EROSION_MEANING)}</p><ul>{items}</ul></div>'


def _points(diff: dict[str, Any]) -> str:
    low, high = diff["ci95"]
    method = ("Newcombe's hybrid score interval, independent runs" if diff.get("method") == "newcombe-hybrid"
              else "Newcombe's paired score interval, the same tasks")
    return (f'<b>{100 * diff["diff"]:+.1f} points</b> [{100 * low:+.1f}, {100 * high:+.1f}] '
            f'<span class="muted" title="{html.escape(method)}">(95%, {html.escape(method)})</span>')


def _grid_html(arm: str, label: str, grid: dict[str, Any]) -> str:
    head = "".join(f"<th>{html.escape(answer)}</th>" for answer in grid["answers"])
    totals = [sum(row[j] for row in grid["counts"]) for j in range(len(grid["answers"]))]
    n = sum(totals) or 1
    rows = "".join(f'<tr><th class=left>{html.escape(gold)}</th>'
                   + "".join(f'<td class="{("right" if answer == gold else "wrong") if count else ""}">{count}</td>'
                             for answer, count in zip(grid["answers"], row)) + f"<td>{sum(row)}</td></tr>"
                   for gold, row in zip(grid["gold"], grid["counts"]))
    total_row = "<tr><th class=left>answered</th>" + "".join(f"<td>{t} ({100 * t / n:.0f}%)</td>" for t in totals) + f"<td>{sum(totals)}</td></tr>"
    return (f'<table class="grid"><caption>{html.escape(arm)} arm, {html.escape(label)}: gold answer (rows) × answer given (columns)</caption>'
            f"<tr><th class=left>gold ↓ answered →</th>{head}<th>tasks</th></tr>{rows}{total_row}</table>")


TOOL_EFFECT_LIMITS = ("It shows whether the edited image changed the answers, not that the policy read the right thing from it "
                      "(whether a call was on target is another number), and nothing about episodes that never called a tool, "
                      "which count as unchanged; a narrow interval around 0 says the tool's results were not used.")


def tool_effect_items(arms: dict[str, Any]) -> list[str]:
    """One line per checkpoint of the tools arm: the tool effect with its paired interval (or that it was
    not measured), the share of replayed answers that changed, the on-target rate, and what it does not show."""
    items = []
    for arm, numbers in arms.items():
        for label in ("after_sft", "after_rl"):
            value = numbers.get(label)
            if not value or (value.get("tool_effect") is None and arm != "tools"):
                continue
            effect, rate = value.get("tool_effect"), value.get("call_on_target_rate")
            on_target = "calls on target: not measured" if rate is None else f"calls on target: {_pct(rate)}"
            if value.get("crop_iou") is not None:  # only where a zoom met a task with a target box
                on_target += f"; zoom crops' IoU with the target box {value['crop_iou']:.2f}"
            if effect is None:
                if arm == "tools":
                    items.append(f"<li>{html.escape(arm)} arm, {label}: tool effect not measured (eval.counterfactual off); {on_target}</li>")
                continue
            changed = "–" if effect["answer_changed_rate"] is None else _pct(effect["answer_changed_rate"])
            diff = {"diff": effect["effect"], "ci95": effect["ci95"], "method": "newcombe-paired"}
            items.append(f"<li>{html.escape(arm)} arm, {label}: tool effect (accuracy as run − with the tool results withheld, "
                         f"the same {effect['n']} tasks) {_points(diff)}; answer changed in {changed} of the replayed episodes; "
                         f"{on_target}. <span class=muted>{html.escape(TOOL_EFFECT_LIMITS)}</span></li>")
    return items


def evaluation_summary_html(summary: dict[str, Any]) -> str:
    """The report's opening summary (issue 44): each arm's held-out accuracy with its Wilson interval
    and call rate, tools − text and after RL − after SFT with their 95% intervals, the tools arm's
    off-target calls, and each arm's gold × answer grid after RL (summary.json's numbers)."""
    arms = summary.get("arms", {})
    rows = []
    for arm, numbers in arms.items():
        for label in ("after_sft", "after_rl"):
            if label in numbers:
                value = numbers[label]
                rows.append(f"<tr><td class=left>{html.escape(arm)}</td><td class=left>{label}</td><td>{_ci(value)}</td><td>{value['n']}</td>"
                            f"<td>{_pct(value['tool_call_rate'])}</td></tr>")
    items = []
    for label, diff in (summary.get("differences", {}).get("tools_minus_text") or {}).items():
        items.append(f"<li>tools − text, {html.escape(label)}: {_points(diff)}</li>")
    for arm, numbers in arms.items():
        change = numbers.get("after_rl_minus_after_sft")
        if change:
            items.append(f"<li>{html.escape(arm)} arm, after RL − after SFT on the same {change['shared']} tasks: {_points(change)}; "
                         f"{change['fixed']} fixed, {change['broken']} broken</li>")
        off = (numbers.get("after_rl") or {}).get("off_target")
        if off and off["calls"]:
            wrong, right = off["off_target_accuracy"], off["on_target_accuracy"]
            what = ("episodes with a call made a call off the task's target (the off_target_call scanner)" if off.get("rule") == "scanner"
                    else "calls named another label than the question's")
            items.append(f"<li>{html.escape(arm)} arm after RL: {off['off_target']} of {off['calls']} {what}; "
                         f"accuracy {_ci(wrong)} on those, {_ci(right)} on the others</li>")
    items.extend(tool_effect_items(arms))
    grids = "".join(_grid_html(arm, "after RL", numbers["after_rl"]["grid"]) for arm, numbers in arms.items()
                    if (numbers.get("after_rl") or {}).get("grid"))
    if not rows:
        return ""
    return (f'<section class="eval-summary"><h2>Evaluation summary</h2>'
            f"<table><tr><th class=left>arm</th><th class=left>checkpoint</th><th>accuracy [95% Wilson]</th><th>n</th><th>tool-call rate</th></tr>"
            f"{''.join(rows)}</table><ul>{''.join(items)}</ul><div class=grids>{grids}</div></section>")


def _demo_table_html(summary: dict[str, Any]) -> str:
    head = ("<tr><th class=left>arm</th><th class=left>checkpoint</th><th>accuracy</th><th>95% Wilson interval</th><th>n</th>"
            "<th>tool-call rate</th><th>tool-error rate</th><th>accuracy of the same checkpoint without tools</th></tr>")
    rows = []
    for arm, numbers in summary["arms"].items():
        for label in ("after_sft", "after_rl"):
            if label not in numbers:
                rows.append(f"<tr><td class=left>{arm}</td><td class=left>{label}</td><td colspan=6>not evaluated (status "
                            f"{html.escape(str(numbers.get('status')))})</td></tr>")
                continue
            value = numbers[label]
            low, high = value["acc_ci95"]
            other = _pct(value["acc_without_tools"]) if "acc_without_tools" in value else "– (tools off)"
            rows.append(f"<tr><td class=left>{arm}</td><td class=left>{label}</td><td>{_pct(value['acc'])}</td><td>[{_pct(low)}, {_pct(high)}]</td>"
                        f"<td>{value['n']}</td><td>{value['tool_call_rate']:.3f}</td><td>{value['tool_error_rate']:.3f}</td><td>{other}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _accuracy_over_steps(run_dir: Path, setting: str) -> list[tuple[float, float]]:
    """Held-out accuracy against RL step: after SFT (step 0), every periodic evaluation, after RL."""
    records = [m for m in read_json_lines(run_dir / "metrics.jsonl") if m.get("stage") == "eval"]
    rl_steps = [m for m in read_json_lines(run_dir / "metrics.jsonl") if m.get("stage") == "rl"]
    last = len(rl_steps)
    points = []
    for record in records:
        label = str(record.get("label"))
        key = f"eval/acc_{setting}"
        if key not in record:
            continue
        if label == "after_sft":
            points.append((0.0, record[key]))
        elif label.startswith("rl_step_"):
            points.append((float(label.removeprefix("rl_step_")), record[key]))
        elif label == "after_rl":
            points.append((float(last), record[key]))
    return points


def _rl_series(run_dir: Path, key: str) -> list[tuple[float, float]]:
    return [(float(m["rl/step"]), float(m[key])) for m in read_json_lines(run_dir / "metrics.jsonl") if m.get("stage") == "rl" and key in m]


def _question_label(task: dict[str, Any]) -> str | None:
    """The label a question asks about: the demo's questions quote it last ('... for "D"?')."""
    quoted = re.findall(r'"([^"]+)"', str(task.get("question", "")))
    return quoted[-1] if quoted else None


def _first_call(record: dict[str, Any]) -> dict[str, Any] | None:
    return next((call for turn in record.get("turns", []) for call in turn.get("calls") or []), None)


def _call_targets(call: dict[str, Any]) -> list[str]:
    """What a call named: the labels in its first list argument (columns, rows, x_values, ...)."""
    for value in (call.get("arguments") or {}).values():
        if isinstance(value, list):
            return [str(v) for v in value]
    return []


def call_words(record: dict[str, Any]) -> str:
    """What the rollout's first call did, set against the question: 'masked the question's label "D"',
    'masked "B", not the question's "D"', or 'called no tool'. Plain text (the caller escapes it)."""
    call = _first_call(record)
    if call is None:
        return "called no tool"
    name = str(call.get("name", ""))
    verb = "masked" if name.endswith("_with_mask") else "highlighted" if name.endswith("_with_highlight") else \
        "boxed" if name.endswith("_with_draw") else f"called {name} on"
    targets = _call_targets(call)
    label = _question_label(record.get("task", {}))
    named = ", ".join(f'"{t}"' for t in targets) or "nothing"
    failed = "" if call.get("ok", True) else " (the call failed)"
    if label is None or not targets:
        return f"{verb} {named}{failed}"
    if targets == [label]:
        return f'{verb} the question\'s label "{label}"{failed}'
    return f'{verb} {named}, not the question\'s "{label}"{failed}'


def _outcome_words(record: dict[str, Any]) -> str:
    gold = record.get("task", {}).get("answer")
    return f"answered {record.get('answer')!r}, {'right' if record.get('correct') else 'wrong'} (gold {gold!r})"


def showcase_rollouts(records: list[dict[str, Any]], limit: int = 9) -> list[dict[str, Any]]:
    """The rollouts the report shows of a step, by a rule it states: one rollout per (gold, answer)
    pair, in gold then answer order, each of a prompt not shown yet (the first such line of the file; a
    pair with none left is skipped); so the page shows how the answers spread over the golds, never one
    prompt twice."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in records:
        cells.setdefault((str(record.get("task", {}).get("answer")), str(record.get("answer"))), []).append(record)
    shown: list[dict[str, Any]] = []
    prompts: set[Any] = set()
    for key in sorted(cells):
        pick = next((r for r in cells[key] if r.get("prompt_id") not in prompts), None)
        if pick is not None and len(shown) < limit:
            shown.append(pick)
            prompts.add(pick.get("prompt_id"))
    return shown


def showcase_html(records: list[dict[str, Any]], images: str = "tools/images") -> str:
    """The step's showcased rollouts (showcase_rollouts' rule, said above them), each with what its call did."""
    chosen = showcase_rollouts(records)
    if not chosen:
        return ""
    rule = (f"<p>{len(chosen)} of the step's {len(records)} rollouts: one rollout per (gold, answer) pair, each of another prompt "
            "(the first such line of the step's file; a pair whose rollouts are all of prompts already shown is left out); "
            "above each, what its call did against the question's label.</p>")
    return rule + "".join(f'<p class="call-note">It {html.escape(call_words(r))}, then {html.escape(_outcome_words(r))}.</p>'
                          f"{rollout_html(r, images)}" for r in chosen)


def _example_pair(root: Path) -> str:
    """A tools-arm rollout of the last RL step, by this rule: a call on the question's own label that
    led to a right answer; else a call on it; else any call (the caption says which label it named
    and how the rollout ended, so a right answer after masking another bar is not shown as the tool
    at work). The chart, and what the tool returned for the policy's own call."""
    files = sorted((root / "tools" / "rollouts").glob("step-*.jsonl"))
    records = read_json_lines(files[-1]) if files else []

    def edited(record: dict[str, Any]) -> list[str]:
        return [ref for turn in record.get("turns", []) if turn.get("role") != "assistant" for ref in turn.get("images") or []]

    def on_label(record: dict[str, Any]) -> bool:
        call = _first_call(record)
        return call is not None and _call_targets(call) == [_question_label(record.get("task", {}))]

    candidates = [r for r in records if edited(r) and _first_call(r) and r.get("task", {}).get("image")]
    candidates.sort(key=lambda r: (not on_label(r), not (on_label(r) and r.get("correct"))))
    if not candidates:
        return ""
    record = candidates[0]
    task, call = record["task"], _first_call(record) or {}
    text = json.dumps({"name": call.get("name"), "arguments": call.get("arguments")})
    return (f'<div class="pair"><p><b>{html.escape(str(task.get("question", "")))}</b> (gold '
            f'<code>{html.escape(str(task.get("answer", "")))}</code>)</p>'
            f'{_image("tools/images/" + task["image"] + ".png", "the chart")}{_image("tools/images/" + edited(record)[0] + ".png", "what the tool returned")}'
            f'<p>Left, what both arms see. Right, what the tool returned for the policy\'s call '
            f'<code>{html.escape(text)}</code> in the last RL step: it {html.escape(call_words(record))}, then '
            f'{html.escape(_outcome_words(record))}.</p></div>')


PHASE_WORDS = {
    "answers_after_tool": ("answers after the tool", "only the answer written after the edited image is trained (reading it)"),
    "calls_without_images": ("calls without images", "only the tool calls, with the images in their context left out (copying the label "
                             "from the question into the call, which the micro model learns far faster with no image tokens in view)"),
    "tool_trajectories": ("tool trajectories", "whole gold tool trajectories, images in view (both skills together)"),
}


def warmup_html(run_dir: Path, sft: dict[str, Any]) -> str:
    """The tools arm's warm-up as it ran: each phase's steps, where the probe ended one, the probe at the end."""
    run_file = run_dir / "run.json"
    state = json.loads(run_file.read_text()).get("sft_schedule") if run_file.exists() else None
    total = sft.get("steps")
    if not state or "ends" not in state:
        return (f"<p>Warm-up: {html.escape(str(total))} SFT steps (the run did not record its phases: it stopped before the end of SFT, "
                "or predates sft_schedule).</p>")
    items, start = [], 0
    rates = {name: rate for name, _, _, rate in PHASES}
    for index, name in enumerate(state.get("names") or [name for name, _, _, _ in PHASES]):
        rate = rates[name]
        end = state["ends"][index]
        if end <= start:
            continue
        title, what = PHASE_WORDS[name]
        early, target, cap = state["ended_early_at"][index], state["targets"][index], state["lengths"][index]
        if early is not None:
            how = f"ended at step {early}, when the probe's {rate} reached {target}"
        else:
            how = f"ran its cap of {cap} steps" + (f" (the probe's {rate} stayed under {target})" if target is not None else "")
        items.append(f"<li><b>{title}</b>, steps {start + 1}–{end}: {what}; the phase {how};</li>")
        start = end
    direct = int(round(100 * state.get("direct_answer_fraction", schema_default("sft.direct_answer_fraction"))))
    sft_rows = [row for row in read_json_lines(run_dir / "metrics.jsonl") if row.get("stage") == "sft"]
    probes = [row for row in sft_rows if "sft/probe_call_acc" in row]
    last = probes[-1] if probes else {}
    ran = int(sft_rows[-1].get("sft/step", 0)) if sft_rows else 0
    mixture_end, mixture_target = state.get("mixture_ended_at"), state.get("mixture_target")
    if mixture_end is not None:
        how = (f"it ended SFT at step {mixture_end}, when the greedy first turn was the direct answer on "
               f"{_pct(last.get('sft/probe_first_turn_direct_rate', 0.0))} of the held-out tasks (target {mixture_target})")
    elif mixture_target is not None:
        how = (f"the probe's sft/probe_first_turn_direct_rate stayed under {mixture_target}, so it ran to step {ran} "
               f"(cap {html.escape(str(total))})")
    else:
        how = f"it ran to step {ran} (cap {html.escape(str(total))})"
    items.append(f"<li><b>the mixture</b>, steps {start + 1}–{mixture_end if mixture_end is not None else ran}: {100 - direct}% whole tool "
                 f"trajectories, {direct}% direct answers in tools-on episodes, so the warmed-up policy can call or answer and RL learns "
                 f"when to call; {how}.</li>")
    total = ran
    probe_words = ", ".join(f"{name} {_pct(last[key])}" for key, name in (("sft/probe_answer_after_tool_acc", "reading the edited image"),
                                                                         ("sft/probe_call_acc", "writing the call"),
                                                                         ("sft/probe_call_without_images_acc", "writing the call with no image in view"),
                                                                         ("sft/probe_direct_answer_acc", "reading the raw chart"),
                                                                         ("sft/probe_first_turn_direct_rate",
                                                                          "answering directly as the greedy first turn"))
                            if key in last)
    return (f"<p>Warm-up ({html.escape(str(total))} SFT steps in {len(items)} phases, docs/DEMO.md):</p><ol>{''.join(items)}</ol>"
            f"<p>The probe: {sft.get('probe_tasks', schema_default('sft.probe_tasks'))} training tasks held out of SFT, their gold turns scored every {sft.get('probe_every')} "
            f"steps; at the end of SFT it read {probe_words or 'nothing (no probe ran)'}. The text arm trains direct answers for all its steps.</p>")


def write_demo_report(root: Path, summary: dict[str, Any]) -> str:
    """<root>/report.html for the demo's two arms; returns the plain-text table."""
    split = summary.get("eval_split", {})
    arms = summary["arms"]
    reward = {arm: _rl_series(root / arm, "reward/mean") for arm in arms}
    accuracy = {arm: _accuracy_over_steps(root / arm, "tools" if arm == "tools" else "no_tools") for arm in arms}
    curves = [
        svg_lines(reward, "reward/mean per RL step (sampled rollouts)", ARM_COLOURS),
        svg_lines(accuracy, "held-out accuracy (greedy), by RL step", ARM_COLOURS, y_range=(0.0, 1.0), x_label="RL step", smooth=False),
        svg_lines({arm: _rl_series(root / arm, "tool/call_rate") for arm in ("tools",) if arm in arms}, "tool-call rate per RL step (sampled)",
                  ARM_COLOURS, y_range=(0.0, 1.0)),
        svg_lines({arm: _rl_series(root / arm, "actor/pg_clipfrac") for arm in arms}, "actor/pg_clipfrac per RL step", ARM_COLOURS),
        svg_lines({arm: [(float(m["sft/step"]), float(m["sft/loss"])) for m in read_json_lines(root / arm / "metrics.jsonl")
                         if m.get("stage") == "sft"] for arm in arms}, "SFT loss (policy tokens)", ARM_COLOURS, x_label="SFT step"),
    ]
    targets = "".join(f'<li><span class="{"met" if t["met"] else "missed"}">{"met" if t["met"] else "not met"}</span> — '
                      f'{html.escape(t["claim"])}: {html.escape(t["measured"])}</li>' for t in summary.get("targets", []))
    budgets = "".join(f"<tr><td class=left>{arm}</td><td>{n['budget']['sft_steps']}</td><td>{n['budget']['sft_seconds'] / 60:.1f}</td>"
                      f"<td>{n['budget']['rl_steps']}</td><td>{n['budget']['rl_seconds'] / 60:.1f}</td>"
                      f"<td class=left>{html.escape(str(n.get('status')))}</td><td class=left><code>{html.escape(str(n.get('initial_weights_checksum')))}</code></td></tr>"
                      for arm, n in arms.items())
    speeds = "".join(f"<li>{arm}: {html.escape(speed_line(speed_summary(read_json_lines(root / arm / 'metrics.jsonl'))))}</li>" for arm in arms)
    answers = ", ".join(f"{html.escape(k)} {v}" for k, v in split.get("answers", {}).items())
    chance = split.get("chance")
    tools_config = json.loads((root / "tools.vistool.json").read_text()) if (root / "tools.vistool.json").exists() else {}
    sft = tools_config.get("sft", {})
    rl = tools_config.get("rl", {})
    examples = ""
    files = sorted((root / "tools" / "rollouts").glob("step-*.jsonl"))
    if files:
        examples = showcase_html(read_json_lines(files[-1]))
    minutes = summary.get("minutes")
    # The bars demo's reading of its own results (docs/DEMO.md); the geometry variant's is in _shows_section.
    bars_shows = """<ul><li>It shows, on held-out charts, that editing the image lets a model answer what it cannot read from the raw image, and that
RL with outcome rewards raises how often a warmed-up policy uses the tool, and with it the accuracy, while the same budgets
leave the text arm where the raw image lets it be.</li>
<li>It does not show that RL teaches a skill SFT could not: the gold tool trajectories already teach the reading; RL changes
<i>when</i> the policy calls. The warm-up mixture is chosen to leave that decision open, as a base model that rarely calls tools
would.</li>
<li>It does not show anything about real charts, real models or other questions: the micro model is trained from scratch on one
synthetic family in minutes. At this size SFT on gold trajectories is far more sample-efficient than RL; RL's own case is where no
gold trajectory exists.</li>
<li>The intervals are over held-out tasks for one seed of one training run per arm; they say nothing about the spread across
training seeds.</li></ul>"""
    body = f"""<!doctype html><meta charset="utf-8"><title>vistool demo — tools against text</title><style>{STYLE}</style>
<h1>vistool demo: the image-tool arm against the text-only arm</h1>
{time_cap_banner_html(summary)}
{erosion_note_html(summary)}
{evaluation_summary_html(summary)}
<p>Policy <code>{html.escape(str(summary.get('model')))}</code> on <code>{html.escape(str(summary.get('device')))}</code>
({html.escape(arm_process_words(summary))});
{f'{minutes:.1f} minutes of wall time' if minutes is not None else 'wall time not recorded'}. Two runs from the same initial model
(the weight checksums below are equal), the same training tasks, the same SFT and RL step budgets: the <b>tools</b> arm may call
the image tools, the <b>text</b> arm has them switched off in the env. The dashboard shows both overlaid:
<code>npx vistool view {html.escape(str(root))}</code>.</p>

<h2>The task, and why this one</h2>
{_task_section(root, answers, chance, split)}
{_example_pair(root)}
{warmup_html(root / "tools", sft)}
<p>A policy warmed up that way calls the tool in some sampled rollouts and, greedily, answers directly, which leaves RL the
decision of when to call. (A policy that always calls cannot answer once the tools are off, so the tools arm's accuracy
without tools after RL says how far RL moved it to the tool, not what it can read.)
RL: GRPO/DAPO with the env's rewards (correct 0.8 + format 0.2, tool bonus 0.2 when a successful call led to a correct answer,
no-tool factor 0.8), {rl.get('prompts_per_step')} prompts × {rl.get('group_size')} rollouts a step, mini-batches of
{rl.get('ppo_mini_batch_size')} prompts, {html.escape(_passes(rl.get('ppo_epochs')))} over each step's samples, so each RL step makes several optimizer steps
and the clip ranges (ε_low {rl.get('clip_ratio_low')}, ε_high {rl.get('clip_ratio_high')}, c {rl.get('clip_ratio_c')}) act.</p>

<h2>Held-out evaluation (greedy, n per checkpoint, a split training never saw)</h2>
{_demo_table_html(summary)}
<p>Fresh held-out tasks: <code>{html.escape(str(split.get('command', '')))}</code> with another <code>--seed</code>, then
<code>npx vistool eval --policy checkpoint:{html.escape(str(root))}/tools/checkpoints/step-N --tasks heldout/tasks.jsonl --out evals/x</code>
(and the same for <code>text/</code>).</p>

<h2>What the demo set out to show</h2><ul>{targets or '<li>no arm finished both stages</li>'}</ul>

<h2>Training curves</h2>{''.join(curves)}

<h2>Budgets</h2>
<table><tr><th class=left>arm</th><th>SFT steps</th><th>SFT minutes</th><th>RL steps</th><th>RL minutes</th><th class=left>status</th>
<th class=left>initial weights checksum</th></tr>{budgets}</table>
<ul>{speeds}</ul>

<h2>What this shows, and what it does not</h2>
{_shows_section(root, bars_shows)}

<h2>Rollouts of the tools arm's last RL step</h2>{examples or '<p>none written</p>'}
"""
    (root / "report.html").write_text(body)
    return demo_table(summary)


def _task_section(root: Path, answers: str, chance: Any, split: dict[str, Any]) -> str:
    """What the demo's task is and why it suits the comparison: the bars task (the default), the
    geometry variant (`--task geometry`) or the search variant (`--task search`), by the task demo.json records."""
    demo = json.loads((root / "demo.json").read_text()) if (root / "demo.json").exists() else {}
    odds = (f"in the held-out split the answers are {answers or 'unknown'} (chance {chance if chance is None else f'{chance:.3f}'}, "
            f"always writing the most common answer {_pct(split.get('majority_rate') or 0)})")
    if demo.get("task") == "search":
        config = json.loads((root / "tools.vistool.json").read_text()) if (root / "tools.vistool.json").exists() else {}
        generate = config.get("data", {}).get("generate", {})
        size = str(generate.get("image_size", "?x?"))
        budget = generate.get("max_pixels") or 50176  # data gen's default budget (env/tasks/search/profiles.ts)
        width, _, height = size.partition("x")
        scale = (budget / (int(width) * int(height))) ** 0.5 if width.isdigit() and height.isdigit() else None
        seen = f"{budget:,} pixels" + ("" if scale is None else f", about {scale:.2f} of the scene's scale")
        return f"""<p>Each scene is a {html.escape(size.replace("x", "×"))} canvas of dozens of coloured shapes (circles, squares, triangles,
diamonds; difficulty {html.escape(str(generate.get("difficulty")))}) on a textured background. The question names a colour and a shape and asks how many such objects there are; 2 to 5 of them stand near one
another, and the two nearest others have the same colour in another shape, so the colour alone does not give the count. Each
count is the answer equally often, so a guess scores one in four; {odds}. The gold call, <code>zoom_in</code> on the box around
the counted objects, carries no answer.</p>
<p>The policy sees the scene at its image budget ({seen}), where a shape's detail is under
6 px: the generator keeps only scenes where the counted shapes are that small in the whole view and at least 6 px in the gold
zoom's view (its checker verifies both from the record). Without the tool, the model must tell a circle from a diamond at a few
pixels; with it, it must first find the cluster by its colour, write the box around it, and count the shapes in the enlarged
crop. Whether the 0.6M-parameter micro model learns either in these minutes is what this run measures.</p>"""
    if demo.get("task") == "geometry":
        return f"""<p>Each diagram has three labelled points, A, B and C, in random places and random roles. The question names two of
them and asks whether the line through them passes above or below the third; the line is not drawn. The third point lies 10 to
22 px from the line (a few pixels of error never change the answer: the generator's checker refuses any closer), above or below
equally often, so a guess scores one in two; {odds}. The gold call, <code>draw_line</code> through the two points the question
names, carries no answer.</p>
<p>Without the tool, the model must find the two named points by their letters and judge where the line between them runs at the
third point's x. With the tool, the edited image shows the line in red and the only dot off it: "is the dot above or below the
red line" is a judgement that needs no letter once the call is made. Whether the 0.6M-parameter micro model learns either in these
minutes is what this run measures; the variant's design was fixed before its first run, and the numbers below are what this run gave.</p>"""
    return f"""<p>Each chart has six bars labelled A–F, in a different order on every chart. The question names one label and asks whether its
value is low (under a quarter of the value scale), medium or high (over three quarters). Every chart has all three levels, and each
level is the answer equally often, so a guess scores one in three; {odds}.
The question alone says nothing about the answer, and the gold call, <code>focus_on_x_values_with_mask</code> with the label copied
from the question, names no level either.</p>
<p>Without the tool, the model must read which tiny letter sits under which bar and bind that bar's height to it: a lookup the
0.6M-parameter micro model does not learn in these minutes (it reads the 2×3 cells of a table no better than chance either).
With the tool, the edited image shows one bar alone, and "how tall is the only bar" is a judgement it learns in a few hundred
SFT steps. So the tool supplies exactly what the model cannot get from the raw image — the seeds' first claim, at laptop scale.</p>"""


def _shows_section(root: Path, bars: str) -> str:
    """What the run shows: the bars demo's established reading, or, for the geometry and search
    variants, what the targets above say and nothing more (neither was designed from earlier runs)."""
    demo = json.loads((root / "demo.json").read_text()) if (root / "demo.json").exists() else {}
    if demo.get("task") == "search":
        return """<ul><li>It measures, on held-out scenes, whether a zoom the policy places itself lets the micro model count what it cannot
tell apart at its image budget, and whether RL moves the call rate and the accuracy; the targets above say which happened in this
run. Unlike the bars and geometry demos, the call carries coordinates the policy must read off the image: a call can miss.</li>
<li>It does not show search in the sense of deep multi-turn exploration: the gold is one zoom, the turn budget allows one
more, and the question names a colour that the whole view shows, so finding the region is a one-look task; only counting
needs the zoom.</li>
<li>Where the zooms went is measured against each scene's exact target box (the counted objects' union, in the task image):
a call is on target when its crop holds every counted object and shows them legibly at the budget (the generator's own
criterion), partly when it overlaps them otherwise, off when it misses them. The crops' IoU with the target box stays plain IoU:
a good crop holds the target with room around it, so its IoU is well under 1.</li>
<li>It does not show anything about real photographs, real models or the other search questions (text on an object, its colour,
its neighbour), whose answers a micro model cannot learn as a set in these minutes: one synthetic family, a micro model trained
from scratch.</li>
<li>The intervals are over held-out tasks for one seed of one training run per arm; they say nothing about the spread across
training seeds.</li></ul>"""
    if demo.get("task") != "geometry":
        return bars
    return """<ul><li>It measures, on held-out diagrams, whether drawing the line lets the micro model answer better than it can from the
raw diagram, and whether RL moves the tool-call rate and the accuracy; the targets above say which happened in this run.</li>
<li>It does not show anything about real diagrams, real models or other geometry questions: one synthetic family, three points,
a micro model trained from scratch in minutes.</li>
<li>The intervals are over held-out tasks for one seed of one training run per arm; they say nothing about the spread across
training seeds.</li></ul>"""
