"""Where one demo's numbers fall in the range measured over seeds, thread counts and kernel paths.

A demo run is deterministic on one machine, but another CPU sums in another order and the micro
model's training amplifies that into another trajectory (issue 40: seed 1 gave 99.0 % here and
57.7 % on another AMD EPYC). So the repo states the result as a range, measured over seeds (and
thread counts, which turned out not to change a rounding here; and ATen kernel paths,
`--cpu-kernels`, the stand-in for another CPU's instruction set: cpu_kernels.py), and stores it in
examples/demo-range.json; at its end `make demo` says where its own numbers fall in that range.
docs/DEMO.md has the table the range comes from.

Each stored run carries the kernel path its tools arm recorded (`cpu_capability`, torch's name), the
one asked for (`cpu_kernels`, null: the CPU's own) and the CPU it ran on (`cpu`: recorded by the
trainer, or given with `demo-range --cpu` for a run that did not record it). Runs stored before the
path was recorded ran the measuring machine's own path, which is shown as not recorded, never guessed.
A run on another CPU is another measurement: stored beside the same seed, threads and path.

A range says something only about the recipe it was measured with: each stored task carries its
runs' recipe (`recipe_config`: the tools arm's config less what differs from run to run by design,
the seed, threads, paths and time caps), and a run of another recipe (the example config edited,
or `--set`) is told so instead of being placed in it. Both sides are resolved with today's schema
before they are compared (`recipe_fingerprint`), so a key added since the range was measured, at
the behaviour its runs had, does not part them.
"""
from __future__ import annotations

import hashlib
import json
import statistics
from pathlib import Path
from typing import Any

from ..checkout import repo_root
from .cpu_kernels import CAPABILITY_NAMES

DEMO_RANGE = repo_root() / "examples" / "demo-range.json"
# The numbers placed, by their key in each stored run and where they sit in summary.json.
MEASURES = (("tools_after_rl", "tools", "after_rl", "tools after RL"),
            ("tools_after_sft", "tools", "after_sft", "tools after SFT"),
            ("text_after_rl", "text", "after_rl", "text after RL"))


# What a run's config may differ in from another run of the same recipe.
RUN_SPECIFIC = ("$schema", "name", "output_dir", "seed", "threads")
RUN_SPECIFIC_DATA = ("train", "eval")


def recipe_of(config: dict[str, Any]) -> dict[str, Any]:
    """A demo arm's config as today's schema resolves it (the defaults of keys added since it was
    written filled in), less its run-specific keys (RUN_SPECIFIC, data.train / data.eval, and every
    time cap `max_seconds`). A config today's schema refuses is taken as written (and so matches no
    current run)."""
    from ..config import to_dict
    from .run_config import ConfigError, resolve_config

    try:
        config = to_dict(resolve_config(config))
    except (ConfigError, ValueError, TypeError, KeyError):
        pass

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: strip(value) for key, value in node.items() if key != "max_seconds"}
        return node

    recipe = {key: value for key, value in config.items() if key not in RUN_SPECIFIC}
    if isinstance(recipe.get("data"), dict):
        recipe["data"] = {key: value for key, value in recipe["data"].items() if key not in RUN_SPECIFIC_DATA}
    return strip(recipe)


def recipe_fingerprint(config: dict[str, Any]) -> str:
    """A short hash of `recipe_of(config)`: the same for two configs of one recipe, today."""
    return hashlib.sha256(json.dumps(recipe_of(config), sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:12]


def stored_fingerprint(stored: dict[str, Any]) -> str | None:
    """The fingerprint of a stored range's recipe, resolved today (None: it stores no recipe)."""
    return recipe_fingerprint(stored["recipe_config"]) if isinstance(stored.get("recipe_config"), dict) else None


def load_ranges(path: Path = DEMO_RANGE) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def spread(values: list[float]) -> tuple[float, float, float]:
    """(min, median, max)."""
    return min(values), statistics.median(values), max(values)


def placement(value: float, values: list[float]) -> str:
    """Where `value` falls among the measured `values`: below, at the bottom, inside, at the top or above."""
    low, _, high = spread(values)
    if value < low - 1e-9:
        return "below the measured range"
    if value > high + 1e-9:
        return "above the measured range"
    if len(values) > 1 and abs(value - low) <= 1e-9:
        return "at its minimum"
    if len(values) > 1 and abs(value - high) <= 1e-9:
        return "at its maximum"
    below = sum(1 for other in values if other < value - 1e-9)
    return f"inside it ({below} of {len(values)} measured runs lower)"


def kernels_label(run: dict[str, Any]) -> str:
    """A stored run's kernel path as a table and a closing line say it: the one its trainer recorded,
    or "not recorded" (a run stored before it was), with the request beside it when one was made,
    and oneDNN's cap where there was one (runs before 2026-12-07 asked ATen's path alone)."""
    recorded, asked = run.get("cpu_capability"), run.get("cpu_kernels")
    onednn = f", oneDNN {run['onednn_max_cpu_isa']}" if run.get("onednn_max_cpu_isa") else ""
    if recorded and asked and recorded != CAPABILITY_NAMES.get(asked):
        return f"{recorded}{onednn} (asked {asked})"
    return (recorded + onednn) if recorded else ("not recorded" + onednn + (f" (asked {asked})" if asked else ""))


def same_kernel_path(run: dict[str, Any], asked: str | None, recorded: str | None, onednn: str | None) -> bool:
    """Whether a stored run ran the kernel path of a run that asked for `asked`, recorded `recorded`
    and capped oneDNN at `onednn`: by the recorded paths when both have one, else by the request
    (absent: the CPU's own path), and by oneDNN's cap (absent: none)."""
    if run.get("onednn_max_cpu_isa") != onednn:
        return False
    if run.get("cpu_capability") and recorded:
        return bool(run["cpu_capability"] == recorded)
    return run.get("cpu_kernels") == asked


def range_lines(summary: dict[str, Any], task: str, threads: int | None, ranges: dict[str, Any] | None = None,
                recipe: str | None = None) -> list[str]:
    """The console's closing lines: each measure of this run against the stored range of `task`, if
    that range was measured with this run's `recipe` (its fingerprint; None: not checked)."""
    ranges = load_ranges() if ranges is None else ranges
    stored = ranges.get(task) or {}
    runs = stored.get("runs") or []
    if not runs:
        return [f"no measured range is stored for the {task} demo (examples/demo-range.json)"
                + (f": {stored['measured']}" if stored.get("measured") else "")]
    if recipe is not None and stored_fingerprint(stored) != recipe:
        return [f"the stored range of the {task} demo (examples/demo-range.json) was measured with another recipe (fingerprint "
                f"{stored_fingerprint(stored) or 'not recorded'}, this run's {recipe}: the example config or the --set "
                "overrides differ), so this run is not placed in it; `python -m vistool_trainer demo-range RUN_DIR...` stores "
                "runs of this recipe"]
    seeds = sorted({int(run["seed"]) for run in runs})
    thread_counts = sorted({int(run["threads"]) for run in runs})
    paths = sorted({kernels_label(run) for run in runs})
    lines = [f"the {task} demo measured on {len(runs)} run{'s' if len(runs) != 1 else ''} "
             f"(seed{'s' if len(seeds) != 1 else ''} {', '.join(map(str, seeds))} x threads "
             f"{', '.join(map(str, thread_counts))}, {cpus_label(stored)}, {stored.get('date', 'date not recorded')}, "
             f"kernel path {', '.join(paths)}); "
             "another CPU rounds differently (its kernels) and follows another trajectory, so a run elsewhere may fall outside it"
             + (f"; {stored['measured']}" if stored.get("measured") else "") + ":"]
    arms = summary.get("arms") or {}
    for key, arm, label, name in MEASURES:
        values = [float(run[key]) for run in runs if run.get(key) is not None]
        if not values or label not in (arms.get(arm) or {}):
            continue
        value = float(arms[arm][label]["acc"])
        low, median, high = spread(values)
        lines.append(f"  {name}: {100 * value:.1f} % — {placement(value, values)} "
                     f"(min {100 * low:.1f} / median {100 * median:.1f} / max {100 * high:.1f} %)")
    seed = summary.get("seed")
    tools = arms.get("tools") or {}
    asked, recorded, cpu = summary.get("cpu_kernels"), tools.get("cpu_capability"), tools.get("cpu")
    same = [run for run in runs if run.get("seed") == seed and run.get("threads") == threads
            and same_kernel_path(run, asked, recorded, tools.get("onednn_max_cpu_isa"))]
    # The same seed, threads and path measured on this very CPU first, where one was.
    same = [run for run in same if cpu and run.get("cpu") == cpu] or same
    if same and "after_rl" in tools:
        measured = float(same[0]["tools_after_rl"])
        here = float(tools["after_rl"]["acc"])
        # The range stores accuracies to 4 decimals (run_entry), so the run's own is compared at that precision.
        verdict = "the same" if round(here, 4) == round(measured, 4) else "not the same: this machine follows another trajectory"
        lines.append(f"  seed {seed} at {threads} threads, kernels {kernels_label(same[0])}, gave tools after RL {100 * measured:.1f} % "
                     f"on {same[0].get('cpu') or 'the CPU the range was measured on'}; here {100 * here:.1f} %, {verdict}")
    return lines


def cpus_label(stored: dict[str, Any]) -> str:
    """The CPUs a stored range was measured on: those its runs recorded, else the range's own note
    (a range stored before runs carried theirs)."""
    cpus = sorted({str(run["cpu"]) for run in stored.get("runs") or [] if run.get("cpu")})
    if cpus:
        return ("CPU " if len(cpus) == 1 else "CPUs ") + "; ".join(cpus)
    return str(stored.get("cpu") or "CPU not recorded")


def run_entry(root: Path) -> tuple[str, dict[str, Any]]:
    """(task, the stored form of one finished demo run) from its demo.json and summary.json."""
    demo_file, summary_file = root / "demo.json", root / "summary.json"
    for needed in (demo_file, summary_file):
        if not needed.exists():
            raise FileNotFoundError(f"{needed} is missing: {root} is not a finished demo run (make demo writes both at its end)")
    demo, summary = json.loads(demo_file.read_text()), json.loads(summary_file.read_text())
    tools_config = root / "tools.vistool.json"
    if not tools_config.exists():
        raise FileNotFoundError(f"{tools_config} is missing: the demo writes it at its start, and the range is kept per recipe")
    arms = summary.get("arms") or {}

    def accuracy(arm: str, label: str) -> float | None:
        result = (arms.get(arm) or {}).get(label)
        return None if result is None else round(float(result["acc"]), 4)

    tools = arms.get("tools") or {}
    after_rl = tools.get("after_rl") or {}
    entry = {"seed": int(demo["seed"]), "threads": int(demo["threads"]),
             # The kernel path asked for (null: the CPU's own) and the one the tools arm's trainer recorded (null: not recorded).
             "cpu_kernels": demo.get("cpu_kernels"), "cpu_capability": tools.get("cpu_capability"), "cpu": tools.get("cpu"),
             # oneDNN's cap (null: the CPU's own; runs before 2026-12-07 capped ATen's path alone).
             "onednn_max_cpu_isa": tools.get("onednn_max_cpu_isa"),
             "tools_after_sft": accuracy("tools", "after_sft"), "tools_after_rl": accuracy("tools", "after_rl"),
             "tools_after_rl_ci95": [round(float(x), 4) for x in after_rl["acc_ci95"]] if after_rl.get("acc_ci95") else None,
             "tool_call_rate_after_rl": round(float(after_rl["tool_call_rate"]), 4) if "tool_call_rate" in after_rl else None,
             "text_after_rl": accuracy("text", "after_rl"),
             "sft_steps": int((tools.get("budget") or {}).get("sft_steps", 0)),
             "claims_met": sum(1 for claim in summary.get("targets") or [] if claim.get("met")),
             "claims": len(summary.get("targets") or []),
             "time_caps_reached": bool(summary.get("time_caps_reached")),
             "minutes": round(float(summary["minutes"]), 1) if summary.get("minutes") is not None else None}
    if entry["tools_after_rl"] is None:
        raise ValueError(f"{summary_file} has no tools-arm evaluation after RL: the run did not finish its RL stage")
    return str(demo.get("task") or "bars"), entry


def record_runs(roots: list[Path], path: Path = DEMO_RANGE, cpu: str | None = None, date: str | None = None) -> dict[str, Any]:
    """Store each finished run in `path`, replacing the entry of the same task, seed, threads, asked
    kernel path (a stored run without one: the CPU's own) and CPU. `cpu` names the CPU of a run that
    did not record its own. A run of another recipe than the stored runs' replaces them all (and the
    stored notes about them): a range mixes no recipes."""
    ranges = load_ranges(path)
    for root in roots:
        task, entry = run_entry(root)
        if entry["cpu"] is None and cpu:
            entry["cpu"] = cpu
        recipe = recipe_of(json.loads((root / "tools.vistool.json").read_text()))
        stored = ranges.setdefault(task, {})
        if stored_fingerprint(stored) != recipe_fingerprint(recipe):
            stored.clear()
            stored["recipe_config"] = recipe
        stored["runs"] = sorted([run for run in stored.get("runs", []) if run_identity(run) != run_identity(entry)] + [entry],
                                key=lambda run: (run.get("cpu_kernels") or "", run["threads"], run["seed"]))
        if date:
            stored["date"] = date
    path.write_text(json.dumps(ranges, indent=2) + "\n")
    return ranges


def run_identity(run: dict[str, Any]) -> tuple[int, int, str | None, str | None, str | None]:
    """What makes two stored runs the same measurement: seed, threads, the kernel path asked for,
    oneDNN's cap and the CPU."""
    return int(run["seed"]), int(run["threads"]), run.get("cpu_kernels"), run.get("onednn_max_cpu_isa"), run.get("cpu")


def range_table(runs: list[dict[str, Any]]) -> str:
    """The markdown table docs/DEMO.md shows: one row per run, then min / median / max of each number."""
    def pct(value: float | None) -> str:
        return "not run" if value is None else f"{100 * value:.1f} %"

    rows = ["| seed | threads | kernels | CPU | SFT steps | tools after SFT | tools after RL [95 % CI] (calls) | text after RL | claims met |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for run in runs:
        interval = f" [{100 * run['tools_after_rl_ci95'][0]:.1f}, {100 * run['tools_after_rl_ci95'][1]:.1f}]" if run.get("tools_after_rl_ci95") else ""
        calls = f" ({run['tool_call_rate_after_rl']:.2f})" if run.get("tool_call_rate_after_rl") is not None else ""
        claims = f"{run['claims_met']} of {run['claims']}" if run.get("claims") else "not recorded"
        rows.append(f"| {run['seed']} | {run['threads']} | {kernels_label(run)} | {run.get('cpu') or 'not recorded'} | {run['sft_steps']:,} | {pct(run['tools_after_sft'])} | "
                    f"{pct(run['tools_after_rl'])}{interval}{calls} | {pct(run['text_after_rl'])} | {claims} |")
    for key, _, _, name in MEASURES:
        values = [float(run[key]) for run in runs if run.get(key) is not None]
        if values:
            low, median, high = spread(values)
            rows.append(f"| {name}: min / median / max | | | | | | {100 * low:.1f} / {100 * median:.1f} / {100 * high:.1f} % "
                        f"over {len(values)} runs | | |")
    return "\n".join(rows)
