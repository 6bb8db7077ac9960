"""`demo`: the main job — one task family, one initial model, two arms trained side by side.

- **tools**: SFT warm-up (phases ended by a probe of each skill, then a mixture of gold
  tool trajectories and direct answers), then GRPO/DAPO with the image tools on;
- **text**: the same initial model, the same SFT budget on direct gold answers, the same RL budget
  with the tools off in the env — the ablation of VTool-R1's figure.

The tasks (`--task`, DEMO_CONFIGS) ask for the level of one named bar among six whose order changes
from chart to chart (bars, the default; docs/DEMO.md says why), whether the line through two points
passes above or below a third (geometry), or how many objects of a named colour and shape a large
scene holds, where the shapes are too small to tell apart without a zoom (search). Both arms train on one generated training split and are evaluated,
greedy, after SFT and after RL on one held-out split that training never sees. The demo leaves
`<out>/tools/` and `<out>/text/` (two ordinary run directories), `<out>/summary.json` and
`<out>/report.html`.

One code path for every model: `--model micro --device cpu` (the default) and
`--model Qwen/Qwen2.5-VL-3B-Instruct --device cuda` differ only in the run config `demo_config`
resolves; every arm runs through `train()` in its own process, the tools arm first and then the
text arm, whose SFT budget is the number of SFT steps the tools arm trained. The demo never
invents a number: the summary and the report show what the runs measured.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..checkout import repo_root
from ..config import PolicyConfig, RunConfig, to_dict
from .cpu_kernels import arm_environment, check_cpu_kernels
from .demo_range import range_lines, recipe_fingerprint
from .demo_report import write_demo_report
from .demo_summary import demo_summary
from .demo_resume import arm_state, disagreements, move_aside, read_json_or_none, read_stored_demo, rename_aside
from .run_config import ConfigError, load_config, resolve_config
from .run_directory import read_json_lines, write_json_atomic
from .train import generate_tasks

DEMO_CONFIG = repo_root() / "examples" / "micro-cpu.vistool.json"
# `--task` (make demo TASK=...): which family the two arms are compared on, by its example config.
DEMO_CONFIGS = {"bars": DEMO_CONFIG, "geometry": repo_root() / "examples" / "micro-geometry.vistool.json",
                "search": repo_root() / "examples" / "micro-search.vistool.json"}
ARMS = ("tools", "text")

# Shares of the time budget each arm's stage may use at most: a safety net a normal run never
# reaches (the budgets are steps and probes; a cap that cuts a stage short is reported loudly).
# SFT gets the most room: a seed that is slow to learn to read runs the longest warm-up, while RL's
# 30 steps took under 2 minutes (docs/DEMO.md). The rest pays for the server start and evaluations.
SFT_SHARE, RL_SHARE = 0.75, 0.2


# What a pretrained Qwen2.5-VL (3B-7B) gets instead of the micro model's settings, each for a reason
# (README.md, "A real model"; docs/DEMO.md). One GPU; both arms take turns on it.
REAL_MODEL_SETTINGS: dict[str, Any] = {
    "policy.dtype": "auto",  # bf16 on CUDA (fp32 on a CPU)
    # The server's system prompt (tool list, call format): a pretrained model reads instructions;
    # the micro model's one-liners exist because it cannot afford 1,000 prompt tokens on a CPU.
    "policy.system_prompt": None,
    # Every image in view, one training sequence per rollout. The micro model's newest-image view
    # makes each turn its own sequence (the prompt re-encoded per turn, 2-3x the tokens per update);
    # Qwen reads several images natively.
    "policy.view.latest_images": None,
    # Checkpointed layers: activations drop to about one hidden state per layer and token.
    "policy.gradient_checkpointing": True,
    # LoRA on every attention and MLP projection, rank 64: one GPU of 24 GB or more holds the bf16
    # base (7.5 GB for 3B) with fp32 adapters and their AdamW state, where a full fine-tune with
    # fp32 masters needs 18 bytes per parameter (68 GB for 3B) before activations.
    "policy.lora.enabled": True, "policy.lora.r": 64, "policy.lora.alpha": 128,
    "policy.lora.target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "threads": 0,
    # LoRA learns best at about ten times full fine-tuning's learning rate: 1e-4 SFT, 1e-5 RL
    # (full fine-tunes of 3B use 1e-5 and 1e-6: VTool-R1, DeepEyes, OpenThinkIMG).
    "sft.lr": 1e-4, "sft.batch_size": 16, "sft.steps": 300,
    # Micro-batches of at most 16k padded tokens (veRL's default ppo_max_token_len_per_gpu).
    "sft.use_dynamic_bsz": True, "sft.max_token_len_per_gpu": 16384,
    # The one-skill-at-a-time phases are for the micro model's plateaus (docs/DEMO.md); a pretrained
    # model reads, copies and calls from its first steps: whole trajectories and the mixture from the start.
    "sft.after_tool_turns_first": 0, "sft.calls_without_images_steps": 0, "sft.tool_trajectories_steps": 0,
    "sft.calls_alongside_answers": False,
    # 16 prompts x 8 rollouts, two optimizer steps per RL step (mini-batches of 8 prompts, one pass:
    # veRL's default; the micro demo's second pass is for its tiny updates, docs/DEMO.md).
    "rl.lr": 1e-5, "rl.prompts_per_step": 16, "rl.group_size": 8, "rl.ppo_mini_batch_size": 8, "rl.ppo_epochs": 1,
    "rl.use_dynamic_bsz": True, "rl.ppo_max_token_len_per_gpu": 16384,
    "rl.max_new_tokens": 256, "eval.max_new_tokens": 256,
    # Decoding with unmerged LoRA runs the base matmul plus peft's A, B, dropout and scaling in each of
    # the 7 adapted projections per token: the sampler folds the adapters into the weights instead and
    # gives the trained tensors back after each call (model/folded_adapters.py). In bf16 it samples
    # the folded policy, as a vLLM engine would; training/lora_delta_lost_in_engine says how far.
    "rl.fold_lora_for_sampling": True,
    # PyTorch's and veRL's AdamW (the micro demo's shorter second-moment memory is for its phases).
    "sft.betas": [0.9, 0.999], "rl.betas": [0.9, 0.999],
    # 200 held-out tasks (a Wilson interval of about +-7 points at 50 %) every 20 RL steps: the
    # micro recipe's 300 every 10 would cost a 3B model as much generation as the RL steps between.
    "eval.n": 200, "eval.every_steps": 20,
}


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`--set KEY=JSON` pairs as dotted overrides (the value is JSON, or a plain string)."""
    overrides: dict[str, Any] = {}
    for item in items:
        key, equals, text = item.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"--set takes KEY=VALUE with a dotted run-config key, e.g. sft.steps=400; got {item!r}")
        try:
            overrides[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            overrides[key.strip()] = text
    return overrides


def demo_config(out: str, minutes: float, model: str = PolicyConfig.model, device: str = "cpu", arm: str = "tools",
                overrides: dict[str, Any] | None = None, task: str = "bars") -> RunConfig:
    """The resolved run config of one arm: examples/micro-cpu.vistool.json with the time caps, the
    arm's tool setting and — for a real model — the settings a 3B model needs instead of the micro
    model's. The text arm differs from the tools arm in `env.tools` alone: with the tools off every
    gold trajectory is a direct answer and every rollout answers without tools."""
    if arm not in ARMS:
        raise ValueError(f"demo arm {arm!r} is not one of {', '.join(ARMS)}")
    if task not in DEMO_CONFIGS:
        raise ValueError(f"demo task {task!r} is not one of {', '.join(DEMO_CONFIGS)}")
    root = Path(out).resolve()
    settings: dict[str, Any] = {"output_dir": str(root / arm), "device": device, "name": f"demo-{arm}",
                                 "sft.max_seconds": minutes * 60 * SFT_SHARE, "rl.max_seconds": minutes * 60 * RL_SHARE,
                                 "data.train": str(root / "data" / "train" / "tasks.jsonl"),
                                 "data.eval": str(root / "data" / "eval" / "tasks.jsonl")}
    if arm == "text":
        settings["env.tools"] = False
    if model != "micro":
        settings.update(REAL_MODEL_SETTINGS)
        settings.update({"name": f"demo-{arm}-" + Path(model.rstrip("/")).name.lower(), "policy.model": model})
    settings.update(overrides or {})
    return load_config(DEMO_CONFIGS[task], settings)


def keep_previous_demo(root: Path) -> Path | None:
    """A second `make demo` must neither mix its records into the first one's runs nor delete them:
    move a non-empty <out> aside to <out>-<time it was last written>, and return where it went."""
    if not root.is_dir() or not any(root.iterdir()):
        return None
    return rename_aside(root)


def generate_demo_data(root: Path, config: RunConfig) -> tuple[Path, Path]:
    """The training split and the held-out split, generated once into `<out>/data/` for both arms."""
    generate, seed = config.data.generate, config.seed
    return (generate_tasks(root / "data" / "train", generate, seed, "train"),
            generate_tasks(root / "data" / "eval", generate, seed, "test"))


@dataclass
class ArmProcess:
    """One arm's `python -m vistool_trainer train` child and what its event stream said last."""

    arm: str
    process: subprocess.Popen[str]
    stage: str = "starting"
    step: str = ""
    status: str | None = None
    error: str | None = None
    evaluations: dict[str, dict[str, Any]] = field(default_factory=dict)
    reader: threading.Thread | None = None


def _follow(arm: ArmProcess, say: Any) -> None:
    """Read the child's JSON events (docs/ARCHITECTURE.md, contract 3) and keep the latest of each kind."""
    assert arm.process.stdout is not None
    for line in arm.process.stdout:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = event.get("event")
        if kind == "stage":
            arm.stage = str(event.get("stage"))
        elif kind == "step":
            if event.get("stage") == "sft":
                arm.step = f"sft {event.get('sft/step')} loss {event.get('sft/loss', float('nan')):.3f}"
            elif event.get("stage") == "rl":
                arm.step = f"rl {event.get('rl/step')} reward {event.get('reward/mean', float('nan')):.2f}"
        elif kind == "progress":
            arm.step = f"{event.get('stage')}: {event.get('what')} {event.get('done')}/{event.get('total')}"
        elif kind == "eval":
            arm.evaluations[str(event.get("label"))] = event
            say(f"{arm.arm} eval {event.get('label')}: " + _eval_line(event))
        elif kind == "warning":
            say(f"{arm.arm} warning: {event.get('message')}")
        elif kind in ("finished", "failed"):
            arm.status = str(event.get("status", kind))
            arm.error = event.get("error")


def _eval_line(event: dict[str, Any]) -> str:
    parts = []
    for key, name in (("eval/acc_tools", "acc with tools"), ("eval/acc_no_tools", "acc without tools"), ("eval/tool_call_rate", "tool calls")):
        if key in event:
            parts.append(f"{name} {event[key]:.2f}")
    return ", ".join(parts) + f" (n={int(event.get('eval/n', 0))})"


def _start_arm(arm: str, config_path: Path, logs: Path, threads: int, resume: bool = False,
               cpu_kernels: str | None = None) -> subprocess.Popen[str]:
    environment = arm_environment(os.environ, threads, cpu_kernels)
    stderr = open(logs / f"{arm}.stderr.log", "a")
    return subprocess.Popen([sys.executable, "-m", "vistool_trainer", "train", "--config", str(config_path)] + (["--resume"] if resume else []),
                            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=repo_root(), env=environment,
                            preexec_fn=_die_with_parent if sys.platform == "linux" else None)


def _die_with_parent() -> None:
    from ..rollouts.env_client import _die_with_parent as die

    die()


def demo_threads(requested: int | None, device: str) -> int:
    """The trainer threads of each arm: `requested` (DEMO_THREADS) when given, else every core on a CPU;
    0 (the trainer's default) on an accelerator."""
    if requested is not None:
        if requested < 1:
            raise ValueError(f"demo threads must be at least 1, got {requested}")
        return requested
    return max(1, os.cpu_count() or 1) if device == "cpu" else 0


def sft_steps_trained(run_dir: Path) -> int | None:
    """How many SFT steps an arm's run trained (its metrics.jsonl), or None when it wrote none."""
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return None
    steps = [int(line["sft/step"]) for line in read_json_lines(path) if line.get("stage") == "sft" and "sft/step" in line]
    return max(steps) if steps else None


def run_demo(out: str, minutes: float, model: str = PolicyConfig.model, device: str = "cpu",
             stderr: TextIO | None = None, overrides: dict[str, Any] | None = None, task: str = "bars",
             threads: int | None = None, resume: bool = False, cpu_kernels: str | None = None) -> int:
    stderr = stderr or sys.stderr
    started = time.time()
    root = Path(out).resolve()

    def say(message: str) -> None:
        stderr.write(f"[demo {time.strftime('%H:%M:%S')}] {message}\n")
        stderr.flush()

    fixed = sorted(set(overrides or {}) & {"env.tools", "output_dir", "data.train", "data.eval"})
    if fixed:
        stderr.write(f"demo: --set {', '.join(fixed)}: the demo sets these itself (the arms differ in env.tools alone, and share "
                     f"{root}/data); use `python -m vistool_trainer train` for a run of your own\n")
        return 2
    if resume:
        return _resume_demo(root, stderr, say, overrides, {"task": task, "model": model, "device": device, "threads": threads,
                                                           "cpu_kernels": cpu_kernels})
    # Both arms' configs before anything on disk moves: a config the demo cannot run (an unknown
    # task, a search budget the model is not shown images at, a kernel path this CPU lacks) is said
    # in one line, and the previous demo stays where it is.
    try:
        check_cpu_kernels(cpu_kernels, device)
        configs = {arm: demo_config(out, minutes, model, device, arm, overrides, task) for arm in ARMS}
    except ValueError as error:  # a ConfigError is one
        stderr.write(f"demo: {error}\n")
        return 2
    kept = keep_previous_demo(root)
    if kept is not None:
        say(f"the previous demo in {root} is kept as {kept}")
    (root / "logs").mkdir(parents=True, exist_ok=True)
    say(f"generating the tasks once for both arms into {root / 'data'}")
    generate_demo_data(root, configs["tools"])
    # The arms run one after the other, each alone on the machine with every core, so neither arm's
    # steps slow the other's and each stage's time cap stays a safety net (docs/DEMO.md "Budgets and
    # time"). `threads` (make demo DEMO_THREADS=N) sets each arm's trainer threads; at the demo's
    # shapes another count did not change a rounding on the machine the range was measured on
    # (docs/DEMO.md), so it is no stand-in for another CPU. `cpu_kernels` (DEMO_KERNELS) is: another
    # ATen kernel path, as another CPU's instruction set takes (cpu_kernels.py).
    threads = demo_threads(threads, device)
    for arm, config in configs.items():
        if config.threads and threads:
            config.threads = threads
        write_json_atomic(root / f"{arm}.vistool.json", to_dict(config))
    write_json_atomic(root / "demo.json", {"model": model, "device": device, "minutes_cap": minutes, "seed": configs["tools"].seed,
                                           "threads": threads, "cpu_kernels": cpu_kernels,
                                           "order": list(ARMS), "arms": list(ARMS), "started_at": started, "task": task})
    say(f"arms {', '.join(ARMS)} one after the other; configs in {root}/<arm>.vistool.json, logs in {root / 'logs'}")
    return _run_arms(root, configs, {arm: "new" for arm in ARMS}, ArmSettings(threads, cpu_kernels), started, minutes, model, task,
                     say, stderr)


def _resume_demo(root: Path, stderr: TextIO, say: Any, overrides: dict[str, Any] | None, asked: dict[str, Any]) -> int:
    """`--resume`: the demo in `root` continued with the settings it started with (demo_resume.py)."""
    overrides = dict(overrides or {})
    asked = {**asked, "seed": overrides.pop("seed", None)}  # --seed arrives as an override
    try:
        if overrides:
            raise ConfigError(f"--set {', '.join(sorted(overrides))}: a resumed demo runs the recipe it started with "
                              f"({root}/<arm>.vistool.json); drop --set, or start a new demo in another folder")
        stored = read_stored_demo(root, ARMS)
        differ = disagreements(stored.demo, asked)
        if differ:
            raise ConfigError("a resumed demo runs with the settings it started with; these differ: " + "; ".join(differ)
                              + " (make demo RESUME=1 passes TASK, SEED's default, DEMO_THREADS and DEMO_KERNELS: give the demo's own)")
        # The kernel path it started with, checked again: a demo may be resumed on another machine.
        check_cpu_kernels(stored.demo.get("cpu_kernels"), str(stored.demo.get("device", "cpu")))
    except ConfigError as error:
        stderr.write(f"demo: {error}\n")
        return 2
    demo, configs = stored.demo, stored.configs
    states = {arm: arm_state(root / arm) for arm in ARMS}
    say(f"resuming the demo in {root}: " + ", ".join(f"{arm} {DEMO_ARM_STATES[state]}" for arm, state in states.items()))
    for arm, state in states.items():
        if state == "restart":
            say(f"{arm}: no complete checkpoint to continue from; its folder is kept as {move_aside(root / arm)} and it starts over")
    (root / "logs").mkdir(parents=True, exist_ok=True)
    write_json_atomic(root / "demo.json", {**demo, "resumed_at": [*demo.get("resumed_at", []), time.time()]})
    # The summary's minutes are the demo's working time: the earlier invocations' (their summary) plus this one's.
    earlier = read_json_or_none(root / "summary.json") or {}
    started = time.time() - 60 * float(earlier.get("minutes") or 0)
    settings = ArmSettings(int(demo.get("threads") or 0), demo.get("cpu_kernels"))
    return _run_arms(root, configs, states, settings, started, float(demo.get("minutes_cap") or 0),
                     str(demo.get("model", PolicyConfig.model)), str(demo.get("task", "bars")), say, stderr)


DEMO_ARM_STATES = {"new": "not started", "finished": "finished (kept)", "resume": "continues from its newest checkpoint",
                   "restart": "starts over"}


@dataclass(frozen=True)
class ArmSettings:
    """What each arm's trainer process is started with besides its config: its OpenMP threads (0: the
    trainer's default) and its ATen kernel path (None: the CPU's own)."""

    threads: int
    cpu_kernels: str | None = None


def _run_arms(root: Path, configs: dict[str, RunConfig], states: dict[str, str], settings: ArmSettings, started: float,
              minutes: float, model: str, task: str, say: Any, stderr: TextIO) -> int:
    """Each arm that has not finished, one after the other, then the summary and the report."""
    threads = settings.threads
    arms: list[ArmProcess] = []
    interrupted = {"flag": False}

    def forward_interrupt(signum: int, _frame: Any) -> None:
        interrupted["flag"] = True
        for arm in arms:
            if arm.process.poll() is None:
                arm.process.send_signal(signal.SIGINT)  # each arm checkpoints and stops

    previous = signal.signal(signal.SIGINT, forward_interrupt)
    try:
        for name in ARMS:
            if interrupted["flag"]:
                break
            if states[name] == "finished":
                continue
            if name == "text" and states[name] != "resume":
                # The ablation's SFT budget is the tools arm's: as many steps as its warm-up took
                # (its phases end on the probe, so that number is only known now).
                trained = sft_steps_trained(root / "tools")
                if trained is not None and trained != configs["text"].sft.steps:
                    configs["text"].sft.steps = trained
                    write_json_atomic(root / "text.vistool.json", to_dict(configs["text"]))
                    say(f"text arm: sft.steps {trained}, the SFT steps the tools arm trained")
            process = _start_arm(name, root / f"{name}.vistool.json", root / "logs", threads, resume=states[name] == "resume",
                                 cpu_kernels=settings.cpu_kernels)
            arm = ArmProcess(name, process)
            arm.reader = threading.Thread(target=_follow, args=(arm, say), daemon=True)
            arm.reader.start()
            arms.append(arm)
            last = 0.0
            while arm.process.poll() is None:
                time.sleep(1.0)
                if time.time() - last >= 20:
                    last = time.time()
                    say(f"{arm.arm}: {arm.step or arm.stage} — {(time.time() - started) / 60:.1f} min")
            if arm.reader is not None:
                arm.reader.join(timeout=10)
            if arm.process.returncode != 0 or arm.status not in (None, "finished"):
                say(f"{arm.arm} ended with status {arm.status or 'exit ' + str(arm.process.returncode)}"
                    + (f": {arm.error}" if arm.error else "") + f" (log: {root / arm.arm / 'logs' / 'trainer.log'})")
    finally:
        signal.signal(signal.SIGINT, previous)

    summary = demo_summary(root, minutes=(time.time() - started) / 60)
    # Where this run's numbers fall in the range measured over seeds, threads and kernel paths (demo_range.py).
    recipe = recipe_fingerprint(json.loads((root / "tools.vistool.json").read_text()))
    summary["range"] = range_lines(summary, task, threads, recipe=recipe) if model == "micro" else []
    write_json_atomic(root / "summary.json", summary)
    table = write_demo_report(root, summary)
    stderr.write(table + "\n")
    if summary["time_caps_reached"]:  # said last as well, where nobody scrolls past it
        say("TIME CAP REACHED — " + "; ".join(summary["time_caps_reached"]) + f". See {root / 'report.html'}.")
    for line in summary["range"]:
        say(line)
    say(f"summary: {root / 'summary.json'}; report: {root / 'report.html'}; dashboard: npx vistool view {root}")
    failed = [arm.arm for arm in arms if arm.process.returncode != 0]
    if failed or interrupted["flag"]:
        say(f"to continue this demo where it stopped: make demo RESUME=1 DEMO_DIR={root} SEED={configs['tools'].seed}"
            + (f" TASK={task}" if task != "bars" else "") + (f" DEMO_THREADS={threads}" if threads else "")
            + (f" DEMO_KERNELS={settings.cpu_kernels}" if settings.cpu_kernels else ""))
    finished = len(arms) + sum(state == "finished" for state in states.values())
    return 1 if failed or finished < len(ARMS) else 0


def resolved_arm_config(path: Path) -> RunConfig:
    """An arm's config as the demo wrote it (`<out>/<arm>.vistool.json`), validated again."""
    return resolve_config(json.loads(path.read_text()))
