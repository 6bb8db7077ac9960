"""Command line: `python -m vistool_trainer {check-env,train,eval,demo,demo-range,serve-policy,fixture}`.

Commands print JSON events on stdout (one object per line) and human logs on stderr, so the
VS Code extension and scripts can follow a run without parsing prose.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def _check_env(args: argparse.Namespace) -> int:
    from .run.environment_check import check_environment, format_report, report_as_dict

    report = check_environment()
    if args.json:
        print(json.dumps(report_as_dict(report)))
    else:
        print(format_report(report))
    return 0 if report.ok else 1


def _train(args: argparse.Namespace) -> int:
    from .run.events import EventStream
    from .run.run_config import ConfigError, load_config
    from .run.run_directory import RunDirectoryInUse, refuse_to_mix_runs
    from .run.train import train

    try:
        config = load_config(args.config, {"output_dir": args.output_dir} if args.output_dir else None)
        if config.engine != "vistool":
            raise ConfigError(f"run config {args.config} asks for engine {config.engine!r}, which this trainer is not: export its recipe "
                              f"(node bin/vistool.js config export --to verl {args.config} --out DIR) and run DIR/run.sh, "
                              "or set \"engine\": \"vistool\"")
        if not args.resume and os.environ.get("RANK", "0") == "0":  # rank 0 checks before any rank writes
            refuse_to_mix_runs(Path(config.output_dir))
    except (ConfigError, RunDirectoryInUse) as error:
        EventStream().emit("failed", error=str(error))
        print(str(error), file=sys.stderr)
        return 2
    return train(config, max_steps=args.max_steps, resume=args.resume)


def _eval(args: argparse.Namespace) -> int:
    from .run.evaluate_command import evaluate_checkpoint

    return evaluate_checkpoint(args.config, args.checkpoint, args.n)


# `demo --task`: the keys of run/demo.py's DEMO_CONFIGS (a test holds them equal), named here so that
# building the parser imports no trainer module.
DEMO_TASKS = ("bars", "geometry", "search")
# `demo --cpu-kernels`: run/cpu_kernels.py's CPU_KERNELS (a test holds them equal), for the same reason.
DEMO_CPU_KERNELS = ("default", "avx2", "avx512")


def _demo_range(args: argparse.Namespace) -> int:
    from .run.demo_range import DEMO_RANGE, range_table, record_runs

    try:
        ranges = record_runs([Path(run) for run in args.runs], cpu=args.cpu, date=args.date)
    except (FileNotFoundError, ValueError, KeyError) as error:
        print(f"demo-range: {error}", file=sys.stderr)
        return 2
    if args.runs:
        print(f"demo-range: stored {len(args.runs)} run(s) in {DEMO_RANGE}", file=sys.stderr)
    print(range_table((ranges.get(args.task) or {}).get("runs") or []))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .run.demo import parse_overrides, run_demo

    try:
        overrides = parse_overrides(args.set or [])
    except ValueError as error:
        print(f"demo: {error}", file=sys.stderr)
        return 2
    if args.seed is not None:
        if "seed" in overrides and overrides["seed"] != args.seed:
            print(f"demo: --seed {args.seed} and --set seed={overrides['seed']} disagree; give one", file=sys.stderr)
            return 2
        overrides["seed"] = args.seed
    return run_demo(args.out, args.minutes, args.model, args.device, overrides=overrides, task=args.task,
                    threads=args.threads, resume=args.resume, cpu_kernels=args.cpu_kernels)


def _serve_policy(args: argparse.Namespace) -> int:
    from .run.serve_policy import serve_policy

    return serve_policy(args.checkpoint, args.port, args.device, args.config, args.token_env)


def _fixture(args: argparse.Namespace) -> int:
    from .model.qwen_fixture import write_qwen_fixture

    summary = write_qwen_fixture(Path(args.out), seed=args.seed)
    print(json.dumps({"event": "fixture", "fixture": args.name, **summary}), flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vistool_trainer", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check-env", help="report versions, CUDA devices and what is missing")
    check.add_argument("--json", action="store_true", help="one JSON object instead of text")
    check.set_defaults(handler=_check_env)
    train = commands.add_parser("train", help="SFT warm-up then GRPO/DAPO, as the run config says")
    train.add_argument("--config", required=True, help="run config JSON (schemas/run-config.schema.json)")
    train.add_argument("--max-steps", type=int, default=None, help="stop (with a checkpoint) after this many optimizer steps in this invocation")
    train.add_argument("--resume", action="store_true", help="continue from the newest complete checkpoint in output_dir")
    train.add_argument("--output-dir", default=None, help="override output_dir")
    train.set_defaults(handler=_train)
    evaluation = commands.add_parser("eval", help="held-out accuracy with and without tools, tool-call rate, format validity")
    evaluation.add_argument("--config", required=True)
    evaluation.add_argument("--checkpoint", default=None, help="checkpoint folder (default: the newest in output_dir)")
    evaluation.add_argument("--n", type=int, default=None, help="held-out tasks (default: eval.n)")
    evaluation.set_defaults(handler=_eval)
    demo = commands.add_parser("demo", help="the main job: a tools arm and a text-only arm from one model, SFT then GRPO/DAPO, "
                                            "evaluated on held-out tasks; writes summary.json and report.html")
    demo.add_argument("--out", default="runs/demo", help="folder for both arms' run directories, summary.json and report.html")
    demo.add_argument("--minutes", type=float, default=20.0, help="a cap on each stage's time (the budgets are in steps; a stage the cap "
                                                                   "cuts short is reported)")
    demo.add_argument("--set", action="append", metavar="KEY=JSON", help="override a run-config key for both arms, e.g. "
                                                                             "--set sft.steps=400 --set eval.n=100 (repeatable)")
    demo.add_argument("--seed", type=int, default=None, help="the run's seed for both arms: the training and held-out tasks, the "
                      "initial weights, the SFT batches and RL's sampling (default: the demo config's, 1)")
    demo.add_argument("--model", default="micro", help="'micro' (the embedded micro Qwen2.5-VL), a Hugging Face id such as Qwen/Qwen2.5-VL-3B-Instruct, or a local checkpoint folder")
    demo.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"], help="cpu, cuda (bf16) or auto")
    demo.add_argument("--task", default="bars", choices=DEMO_TASKS,
                      help="bars: the level of one bar among six (examples/micro-cpu.vistool.json); geometry: whether the line through two "
                           "points passes above or below a third (examples/micro-geometry.vistool.json); search: how many objects of a "
                           "named colour and shape a scene holds, read through a zoom (examples/micro-search.vistool.json)")
    demo.add_argument("--threads", type=int, default=None, help="trainer threads of each arm (make demo DEMO_THREADS=N; default: "
                      "every core on a CPU). On the machine the range was measured on, another count did not change the numbers "
                      "(docs/DEMO.md): it is no stand-in for another CPU; --cpu-kernels default stands in for another CPU's kernels")
    demo.add_argument("--cpu-kernels", default=None, choices=DEMO_CPU_KERNELS,
                      help="the ATen CPU kernel path of each arm's trainer, with oneDNN capped at the same instruction set "
                           "(make demo DEMO_KERNELS=...; sets ATEN_CPU_CAPABILITY and ONEDNN_MAX_CPU_ISA; default: the CPU's own, "
                           "and either variable in the environment is not passed on). It stands in for another CPU: 'default' "
                           "for one without AVX2, 'avx2' for one without AVX-512; a path this CPU lacks is refused. --device cpu "
                           "only; each arm records the path it ran (run.json cpu_capability, onednn_max_cpu_isa, cpu)")
    demo.add_argument("--resume", action="store_true", help="continue the interrupted demo in --out with the settings it started "
                      "with (make demo RESUME=1): finished arms are kept, a stopped one continues from its newest checkpoint")
    demo.set_defaults(handler=_demo)
    serve = commands.add_parser("serve-policy", help="a checkpoint behind an OpenAI-compatible chat-completions endpoint on 127.0.0.1")
    serve.add_argument("--checkpoint", required=True, help="checkpoint folder (<run>/checkpoints/step-NNNNNN) or a save_pretrained folder")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port; the 'listening' event names it)")
    serve.add_argument("--device", default="auto", choices=["cpu", "cuda", "auto"])
    serve.add_argument("--config", default=None, help="the run config it was trained with (default: <checkpoint>/../../config.json, when present)")
    serve.add_argument("--token-env", default="VISTOOL_POLICY_API_KEY", help="environment variable holding the bearer token; unset or empty: no auth")
    serve.set_defaults(handler=_serve_policy)
    demo_range = commands.add_parser("demo-range", help="store finished demo runs in examples/demo-range.json (the range make demo "
                                                        "compares itself with) and print docs/DEMO.md's table of it")
    demo_range.add_argument("runs", nargs="*", help="finished demo run folders (each with demo.json and summary.json)")
    demo_range.add_argument("--cpu", default=None, help="the CPU of runs that did not record theirs (runs record it since 2026-12-07: "
                            "model name, family and model, as /proc/cpuinfo gives them)")
    demo_range.add_argument("--date", default=None, help="the date of the measurement")
    demo_range.add_argument("--task", default="bars", choices=DEMO_TASKS, help="the task whose table to print")
    demo_range.set_defaults(handler=_demo_range)
    fixture = commands.add_parser("fixture", help="write a test fixture: qwen-micro, a tiny Qwen2.5-VL with Qwen2.5's real tokenizer "
                                                  "and padded vocabulary (docs/QWEN_FIXTURE.md)")
    fixture.add_argument("name", choices=["qwen-micro"])
    fixture.add_argument("--out", required=True, help="folder to save_pretrained into")
    fixture.add_argument("--seed", type=int, default=0, help="the weights' seed")
    fixture.set_defaults(handler=_fixture)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("check-env", "fixture"):  # these speak the JSON event protocol on stdout
        from .run.events import reserve_stdout_for_events

        reserve_stdout_for_events()
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
