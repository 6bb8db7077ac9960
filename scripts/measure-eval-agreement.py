"""Does `vistool eval` of a demo-style tools checkpoint score what the trainer's own evaluation
scores, on fresh held-out tasks? (issue 30's done-when measurement; the numbers go into its note.)

1. the demo's data (run/demo.py: 4,000 training and 300 held-out tasks, seed 1) and the demo's
   tools arm alone, trained as `make demo` trains it (its resolved run config, `train()`);
2. fresh held-out tasks of the same kind from another seed (OUT/fresh), which neither training nor
   the demo's evaluations saw;
3. the trainer's evaluation of the final checkpoint on them (trainers/evaluate.py: greedy, both
   arms, the run's presentation), and `vistool eval --policy checkpoint:` (node, the real CLI and
   serve-policy) on the same tasks;
4. both accuracies per arm with 95 % Wilson intervals, the tool-call rates, and how many tasks the
   two wrote the same turns for.

Heavy (about 20 minutes and 13 GB on 2 CPU cores): run it under `flock /tmp/vistool-heavy.lock`.
    .venv/bin/python scripts/measure-eval-agreement.py --out runs/eval-agreement [--fresh-seed 2] [--fresh-n 300]
A second call with the same --out keeps the trained arm and the fresh tasks.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "trainer"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=20.0, help="the demo's time budget (its stage caps are shares of it)")
    parser.add_argument("--fresh-seed", type=int, default=2)
    parser.add_argument("--fresh-n", type=int, default=300)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                        help="a run-config override for the arm, as `demo --set` takes it (e.g. data.generate.n_train=64 with rl.fresh_tasks=16 to try the script quickly)")
    args = parser.parse_args()

    from vistool_trainer.algorithms.intervals import wilson_interval
    from vistool_trainer.config import to_dict
    from vistool_trainer.model.policy import Policy
    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.rollouts.rollout import load_tasks
    from vistool_trainer.run.demo import demo_config, generate_demo_data, parse_overrides
    from vistool_trainer.run.run_config import load_config
    from vistool_trainer.run.train import generate_tasks, train
    from vistool_trainer.trainers.evaluate import evaluation_rollouts

    root = args.out.resolve()
    root.mkdir(parents=True, exist_ok=True)
    started = time.time()
    config = demo_config(str(root), args.minutes, arm="tools", overrides=parse_overrides(args.set))
    config_path = root / "tools.vistool.json"
    config_path.write_text(json.dumps(to_dict(config), indent=2))
    generate_demo_data(root, config)
    run = Path(config.output_dir)
    if not (run / "run.json").exists() or json.loads((run / "run.json").read_text()).get("status") != "finished":
        print(f"[measure] training the demo's tools arm into {run}", file=sys.stderr, flush=True)
        if train(load_config(config_path)) != 0:
            print(f"[measure] training failed: {run / 'logs' / 'trainer.log'}", file=sys.stderr)
            return 1
    checkpoint = sorted((run / "checkpoints").glob("step-*"))[-1]
    train_minutes = (time.time() - started) / 60
    fresh = generate_tasks(root / "fresh", replace(config.data.generate, n_eval=args.fresh_n), args.fresh_seed, "test")
    tasks = load_tasks(fresh)

    print(f"[measure] the trainer's evaluation of {checkpoint.name} on {len(tasks)} fresh tasks", file=sys.stderr, flush=True)
    eval_started = time.time()
    policy = Policy.load(checkpoint / "policy", "cpu", config.policy.dtype)
    scratch = root / "trainer-eval"
    scratch.mkdir(exist_ok=True)
    with LocalEnvServer(fresh.parent, scratch / "images", scratch / "token", scratch / "server.log") as client:
        arms = evaluation_rollouts(policy, client, tasks, episode_options(config), config.eval.max_new_tokens)
    trainer_s = time.time() - eval_started
    trainer = {arm: {r.prompt_id: r for r in rollouts} for arm, rollouts in arms.items()}

    print("[measure] vistool eval --policy checkpoint: on the same tasks", file=sys.stderr, flush=True)
    out = root / "vistool-eval"
    eval_started = time.time()
    result = subprocess.run(["node", str(REPO / "bin" / "vistool.js"), "eval", "--policy", f"checkpoint:{checkpoint}", "--tasks", str(fresh),
                             "--out", str(out)], cwd=REPO, env={**os.environ, "VISTOOL_PYTHON": sys.executable}, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr[-3000:], file=sys.stderr)
        return 1
    cli_s = time.time() - eval_started
    cli: dict[str, dict[str, dict]] = {"tools": {}, "no_tools": {}}
    for line in (out / "rollouts" / "step-000000.jsonl").read_text().splitlines():
        record = json.loads(line)
        cli[record["arm"]][record["prompt_id"]] = record
    cli_metrics = next(iter(json.loads((out / "results.json").read_text())["evaluations"].values()))["metrics"]

    report: dict = {"checkpoint": str(checkpoint), "fresh_tasks": str(fresh), "fresh_seed": args.fresh_seed, "n": len(tasks),
                    "train_minutes": round(train_minutes, 1), "trainer_eval_s": round(trainer_s, 1), "vistool_eval_s": round(cli_s, 1),
                    "load_after": os.getloadavg(), "arms": {}}
    for arm in ("tools", "no_tools"):
        ours = trainer[arm]
        correct = sum(r.correct for r in ours.values())
        same_turns = sum(1 for task_id, r in ours.items()
                         if [t["text"] for t in r.trajectory["turns"] if t["role"] == "assistant"]
                         == [t["text"] for t in cli[arm][task_id]["turns"] if t["role"] == "assistant"])
        cli_correct = round(cli_metrics[f"eval/acc_{arm}"] * len(tasks))
        report["arms"][arm] = {
            "trainer_acc": correct / len(tasks), "trainer_ci95": wilson_interval(correct, len(tasks)),
            "vistool_eval_acc": cli_metrics[f"eval/acc_{arm}"], "vistool_eval_ci95": wilson_interval(cli_correct, len(tasks)),
            "difference_points": round(100 * (cli_metrics[f"eval/acc_{arm}"] - correct / len(tasks)), 2),
            "same_turns": same_turns,
        }
        if arm == "tools":
            report["arms"][arm]["trainer_tool_call_rate"] = sum(r.tool_calls > 0 for r in ours.values()) / len(tasks)
            report["arms"][arm]["vistool_eval_tool_call_rate"] = cli_metrics["eval/tool_call_rate"]
    (root / "agreement.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
