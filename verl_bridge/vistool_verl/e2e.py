"""`python -m vistool_verl e2e`: veRL's own trainer (`verl.trainer.main_ppo`) end to end on CPU with
vistool's agent loop, reward and env server, writing a run directory the workbench reads.

Real: veRL 0.9.1's v1 trainer (Ray, TransferQueue, the FSDP2 actor with its optimizer, the
agent-loop and reward-loop workers, GRPO advantages, the `file` metrics logger), vistool's agent
loop, reward function and sampler (`failed_groups`), the env server (a `vistool serve` child),
generated tasks and a Qwen2.5-VL policy: by default the Qwen-faithful fixture (`--policy
qwen-micro --fixture DIR`: Qwen2.5's real tokenizer, the padded 151,936-row vocabulary, the
Instruct generation config; docs/QWEN_FIXTURE.md), else the embedded micro model (`--policy
micro`). The stand-in: the rollout engine is transformers' `generate` behind veRL's
rollout-replica interface (`vistool_verl.cpu_stand_in`), sampling as veRL configures vLLM, where a
real run uses vLLM or SGLang.

The policy is warmed up on gold tool trajectories (`tool_warm_up`): it calls the gold tool, reads
the edited image and answers with a random level, so most episodes carry a second image through
veRL's trainer and rewards vary within groups. Nothing here measures learning: two steps on 2
cores are a test. `--faults RATE` (tests only) makes that share of tool calls fail at the env
(`fault_injection`), for the checks of what a failed episode's group does.

It writes OUT/: data/ (tasks and parquet), model/, agent_loop.yaml, images/ (the env server's),
metrics.jsonl (veRL's file logger, veRL's names), rollouts/step-N.jsonl (the agent loop's live
records), trained/step-N.jsonl (every row veRL trained: `cpu_stand_in.trained_batches`), run.json,
logs/ (veRL's output, the env server's log), e2e.json (what the driver measured). `vistool view
OUT` shows it; verl_bridge/e2e_tests/ checks it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from vistool_trainer.checkout import repo_root
from vistool_trainer.model.micro_model import MicroSize, build_micro_policy, save_policy
from vistool_trainer.rollouts.env_client import LocalEnvServer
from vistool_trainer.rollouts.presentation import policy_corpus
from vistool_trainer.rollouts.rollout import load_tasks

from .cpu_stand_in import launch
from .env_messages import to_verl_messages
from .failed_groups import DEFAULT_FAILED_GROUPS, FAILED_EPISODES, FAILED_GROUPS, FAILED_GROUPS_DROPPED, FAILED_GROUPS_KEPT
from .fault_injection import RATE_VARIABLE, SEED_VARIABLE
from .tool_warm_up import gold_examples, warm_up
from .parquet_rows import write_verl
from .processor import load_processor
from .run_records import start_run

# The micro config's prompt (examples/micro-cpu.vistool.json): the env server's default system
# prompt lists every tool and is ~3,000 tokens for the micro tokenizer, which would make each step
# minutes long on 2 cores.
SYSTEM_PROMPT = "Answer the question about the chart. You may call an image tool first."
# The run's presentation block (docs/CONTRACTS.md): the env server renders every prompt from it.
PRESENTATION: dict[str, Any] = {"system_prompt": SYSTEM_PROMPT}


# Every chart's bars are A, B and C: a call that masks any one of them is a call the env runs, so a
# warmed-up policy that has the call's shape, and not yet the copying of the asked label, still gets
# an edited image back (a label the chart lacks is a tool error with no image).
LABELS = "A,B,C"


def generate_tasks(out: Path, n: int, seed: int) -> Path:
    """Level questions ("is B low, medium or high?") on three bars: a random guess is right one time in three."""
    command = ["node", str(repo_root() / "bin" / "vistool.js"), "data", "gen", "--kind", "vbar", "--family", "level", "--n", str(n),
               "--seed", str(seed), "--difficulty", "1", "--image-size", "112x112", "--labels", LABELS, "--categories", "3",
               "--out", str(out)]
    result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed: {result.stderr[-1000:]}")
    return out / "tasks.jsonl"


def fresh_policy(args: argparse.Namespace, client: Any, tasks: list[dict[str, Any]], folder: Path) -> Any:
    """The untrained policy, saved in `folder` with its tokenizer and processor files: the Qwen-faithful
    fixture (copied from --fixture, its Instruct generation config included), or a fresh micro model."""
    if args.policy == "micro":
        model, trainer_processor = build_micro_policy(policy_corpus(client, tasks, PRESENTATION), MicroSize(), args.seed)
        save_policy(model, trainer_processor, folder)
        return model
    from transformers import AutoModelForImageTextToText

    shutil.copytree(args.fixture, folder)
    return AutoModelForImageTextToText.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa")


def probe_calls(client: Any, model: Any, processor: Any, tasks: list[dict[str, Any]], options: dict[str, Any], seed: int) -> dict[str, Any]:
    """The warmed-up policy's first turn on each task, sampled at temperature 1 by the stand-in's
    generator and stepped on the env server: how many made a tool call the env ran (an edited image)."""
    from .transformers_server import TransformersGenerator

    generator = TransformersGenerator(model, processor, default_max_tokens=48, seed=seed)
    opened = client.start_episodes([{"task": {k: v for k, v in t.items() if not k.startswith("_")}, "task_dir": t["_task_dir"],
                                     "options": {**options, "presentation": PRESENTATION}} for t in tasks])
    ran = 0
    try:
        for episode in opened:
            messages, images = to_verl_messages(episode["observation"]["prompt"])
            text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = processor(text=[text], images=images or None)["input_ids"][0]
            out = generator.generate(list(ids), {"temperature": 1.0, "top_p": 1.0, "top_k": -1}, images or None)
            turn = processor.tokenizer.decode([t for t in out.token_ids if t not in generator.stop_ids], skip_special_tokens=False)
            step = client.step_episodes([{"episode_id": episode["episode_id"], "text": turn}])[0]
            ran += int(any(m.get("type") == "image" for message in (step["observation"].get("messages") or [])
                           for m in (message.get("content") if isinstance(message.get("content"), list) else [])))
    finally:
        for episode in opened:
            client.close_episode(episode["episode_id"])
    return {"episodes": len(opened), "first_turn_tool_images": ran}


def opening_prompts(client: Any, tasks: list[dict[str, Any]], options: dict[str, Any]) -> list[tuple[list[dict[str, Any]], list[Any]]]:
    """Each task's opening prompt as the env server presents it and the agent loop renders it (loaded
    images), from the run's own env server."""
    opened = client.start_episodes([{"task": {k: v for k, v in t.items() if not k.startswith("_")}, "task_dir": t["_task_dir"],
                                     "options": {**options, "presentation": PRESENTATION}} for t in tasks])
    try:
        return [to_verl_messages(o["observation"]["prompt"]) for o in opened]
    finally:
        for o in opened:
            client.close_episode(o["episode_id"])


def agent_loop_yaml(max_turns: int, max_tool_calls: int, max_new_tokens: int) -> str:
    return "\n".join([
        "# The vistool_agent loop as the e2e test runs it (the exported recipe writes the same keys).",
        "- name: vistool_agent",
        "  _target_: vistool_verl.agent_loop.VistoolAgentLoop",
        f"  max_turns: {max_turns}",
        f"  max_tool_calls: {max_tool_calls}",
        "  use_tools: true",
        f"  max_new_tokens: {max_new_tokens}",
        f"  presentation: {json.dumps(PRESENTATION)}",
        "",
    ])


def sampler_overrides(args: argparse.Namespace) -> list[str]:
    """vistool's sampler (failed_groups.py) in its e2e form, which also records every trained row. veRL
    tells a custom sampler neither rollout.n nor algorithm.filter_groups: they go in its kwargs. With
    `drop`, veRL's sync_refill_failed_groups switch makes its dataloader fetch single prompts, which
    an exact refill needs."""
    kwargs = [f"+trainer.v1.sampler.sampler_kwargs.failed_groups={args.failed_groups}",
              f"+trainer.v1.sampler.sampler_kwargs.group_size={args.group}",
              f"+trainer.v1.sampler.sampler_kwargs.train_batch_size={args.prompts}"]
    if args.dynamic_sampling:
        kwargs.append("+trainer.v1.sampler.sampler_kwargs.filter_groups_metric=reward")
    return [
        "trainer.v1.sampler.custom_sampler.path=pkg://vistool_verl.cpu_stand_in.recording_sampler",
        "trainer.v1.sampler.custom_sampler.name=RecordingReplayBuffer",
        f"trainer.v1.sampler.sync_refill_failed_groups={str(args.failed_groups == 'drop').lower()}",
        *kwargs,
    ]


def micro_batch(args: argparse.Namespace) -> int:
    """Sequences per forward in veRL's actor: the whole batch for the micro model; two on the fixture, whose
    logits over 151,936 rows are ~0.35 MB a token (16 sequences of ~550 tokens would be ~3 GB of logits)."""
    return args.prompts * args.group if getattr(args, "policy", "micro") == "micro" else 2


def trainer_overrides(out: Path, args: argparse.Namespace, prompt_length: int, response_length: int) -> list[str]:
    """The run's own settings: GRPO on the e2e's data, model and loop (the CPU settings come from launch.overrides)."""
    return [
        "algorithm.adv_estimator=grpo",
        "algorithm.use_kl_in_reward=false",
        f"algorithm.filter_groups.enable={str(args.dynamic_sampling).lower()}",
        *(["algorithm.filter_groups.metric=reward"] if args.dynamic_sampling else []),
        *sampler_overrides(args),
        f"data.train_files={out / 'data' / 'train.parquet'}",
        f"data.val_files={out / 'data' / 'train.parquet'}",
        "data.image_key=images",
        "data.return_raw_chat=true",
        f"data.train_batch_size={args.prompts}",
        f"data.max_prompt_length={prompt_length}",
        f"data.max_response_length={response_length}",
        f"data.seed={args.seed}",
        f"actor_rollout_ref.model.path={out / 'model'}",
        f"actor_rollout_ref.actor.optim.lr={args.lr}",
        "actor_rollout_ref.actor.optim.weight_decay=0.0",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={args.prompts}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro_batch(args)}",
        "actor_rollout_ref.actor.use_kl_loss=false",
        "actor_rollout_ref.actor.loss_agg_mode=token-mean",
        "actor_rollout_ref.actor.clip_ratio_low=0.2",
        "actor_rollout_ref.actor.clip_ratio_high=0.28",
        f"actor_rollout_ref.rollout.n={args.group}",
        "actor_rollout_ref.rollout.temperature=1.0",
        f"actor_rollout_ref.rollout.seed={args.seed}",
        f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={micro_batch(args)}",
        "actor_rollout_ref.rollout.multi_turn.enable=true",
        f"actor_rollout_ref.rollout.multi_turn.max_assistant_turns={args.max_turns}",
        "actor_rollout_ref.rollout.agent.default_agent_loop=vistool_agent",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={out / 'agent_loop.yaml'}",
        f"+actor_rollout_ref.rollout.limit_images={1 + args.max_tool_calls}",
        f"reward.custom_reward_function.path={Path(__file__).with_name('reward.py')}",
        "reward.custom_reward_function.name=compute_score",
        f"trainer.total_training_steps={args.steps}",
        f"trainer.total_epochs={args.steps}",
        "trainer.save_freq=-1",
        "trainer.test_freq=-1",
        "trainer.val_before_train=false",
        "trainer.logger=[console,file]",
        "trainer.project_name=vistool",
        "trainer.experiment_name=verl-e2e",
        f"trainer.default_local_dir={out / 'checkpoints'}",
        f"hydra.run.dir={out / 'logs' / 'hydra'}",
    ]


def run_trainer(command: list[str], env: dict[str, str], log_path: Path, timeout_s: float) -> int:
    """veRL's trainer as a child, its output to the log and, one line per step, to stdout."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        child = subprocess.Popen(command, cwd=repo_root(), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 start_new_session=True)
        started = time.monotonic()
        assert child.stdout is not None
        for line in child.stdout:
            log.write(line)
            if "step:" in line and "training/global_step" in line:
                print(json.dumps({"event": "verl-step", "seconds": round(time.monotonic() - started, 1)}), flush=True)
            if time.monotonic() - started > timeout_s:
                child.kill()
                raise TimeoutError(f"veRL's trainer ran past {timeout_s:.0f} s; see {log_path}")
        return child.wait()


def summarize(out: Path) -> list[dict[str, Any]]:
    """Per step, from what veRL's logger and the agent loop wrote: the numbers a reader of the run wants first."""
    logged = {}
    if (out / "metrics.jsonl").exists():
        for line in (out / "metrics.jsonl").read_text().splitlines():
            row = json.loads(line)
            logged[row["step"]] = row["data"]
    steps = []
    for path in sorted((out / "rollouts").glob("step-*.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        groups: dict[str, list[float]] = {}
        for record in records:
            groups.setdefault(record["group_uid"], []).append(record["reward"])
        step = records[0]["step"] if records else int(path.stem.split("-")[1])
        data = logged.get(step, {})
        with_image = sum(any(turn.get("images") for turn in r.get("turns") or []) for r in records)
        steps.append({
            "step": step, "rollouts": len(records), "groups_with_reward_spread": sum(len(set(g)) > 1 for g in groups.values()),
            "groups": len(groups), "reward_mean": round(sum(r["reward"] for r in records) / max(len(records), 1), 4),
            "tool_calls": sum(int(r.get("tool_calls", 0)) for r in records),
            "rollouts_with_an_edited_image": with_image, "edited_image_share": round(with_image / max(len(records), 1), 3),
            **{name: data.get(name) for name in ("actor/grad_norm", "critic/advantages/max", "critic/advantages/min",
                                                 "training/rollout_probs_diff_max", "training/rollout_probs_diff_mean", "timing_s/step",
                                                 FAILED_EPISODES, FAILED_GROUPS_DROPPED, FAILED_GROUPS_KEPT)},
        })
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vistool_verl e2e", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=repo_root() / "runs" / "verl-e2e")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=4, help="prompts per step (data.train_batch_size)")
    parser.add_argument("--group", type=int, default=4, help="rollouts per prompt (rollout.n)")
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--max-tool-calls", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=48, help="each turn's token cap (the loop's max_new_tokens)")
    # Small enough that one update leaves the warmed-up policy calling tools in step 2 (1e-3 halved the share).
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--warm-up-steps", type=int, default=1600,
                        help="the warm-up's cap; it ends earlier, at the first probe that meets --warm-up-target")
    parser.add_argument("--warm-up-probe-tasks", type=int, default=16,
                        help="tasks of their own (neither trained nor in the run) on which the warm-up's probe samples a first turn")
    parser.add_argument("--warm-up-probe-every", type=int, default=100, help="warm-up steps between probes")
    parser.add_argument("--warm-up-target", type=float, default=0.875,
                        help="the share of probe episodes whose sampled first turn is a tool call the env ran that ends the warm-up")
    parser.add_argument("--warm-up-lr", type=float, default=5e-3)
    parser.add_argument("--warm-up-tasks", type=int, default=48)
    parser.add_argument("--dynamic-sampling", action="store_true", help="DAPO's group filter (algorithm.filter_groups, metric reward)")
    parser.add_argument("--policy", choices=("qwen-micro", "micro"), default="qwen-micro",
                        help="qwen-micro: the Qwen-faithful fixture in --fixture; micro: the embedded micro model")
    parser.add_argument("--fixture", type=Path, help="a folder `python -m vistool_trainer fixture qwen-micro --out DIR` wrote")
    parser.add_argument("--faults", type=float, default=0.0,
                        help="TESTS ONLY: the share of tool calls the agent loop fails as an env server error (VISTOOL_TEST_ENV_FAULTS)")
    parser.add_argument("--failed-groups", choices=FAILED_GROUPS, default=DEFAULT_FAILED_GROUPS,
                        help="what a group with a failed episode does (trainer.v1.sampler.sampler_kwargs.failed_groups)")
    parser.add_argument("--warm-up-embeddings", choices=("train", "freeze"), default="train",
                        help="whether the warm-up trains the token embeddings (freeze: the fixture's 151,936 rows stay as they are)")
    parser.add_argument("--warm-up-direct-share", type=float, default=0.05, help="warm-up examples that answer without a tool call")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1200, help="seconds veRL's trainer may run")
    parser.add_argument("--prepare-only", action="store_true", help="write the data, model and command, and stop before veRL's trainer")
    args = parser.parse_args(argv)
    if args.policy == "qwen-micro" and (args.fixture is None or not (args.fixture / "config.json").is_file()):
        parser.error(f"--policy qwen-micro needs --fixture DIR, a folder `python -m vistool_trainer fixture qwen-micro --out DIR` wrote "
                     f"(it was {args.fixture}); `make verl-e2e` writes one, or pass --policy micro")
    if not 0.0 <= args.faults <= 1.0:
        parser.error(f"--faults is {args.faults}; it is the share of tool calls that fail, from 0 to 1")
    out: Path = args.out.resolve()
    if (out / "run.json").exists():
        raise SystemExit(f"{out} already holds a run; remove it or pass another --out")
    started = time.time()
    # One thread: the warm-up's ops are small, and two threads on a machine whose other core is busy
    # spend most of a step waiting for each other (measured: 0.04 s a micro step on one, ~1 s on two).
    torch.set_num_threads(1)
    # Three steps' worth of prompts a step: veRL draws a fresh prompt for each group it drops (failed_groups.py).
    tasks_path = generate_tasks(out / "data" / "train", args.prompts * args.steps * 3, args.seed)
    tasks = load_tasks(tasks_path)
    # The warm-up's own tasks (another seed): the format is learnt on charts the run never sees, and
    # probed on a third set, so the warm-up's end is decided on neither its examples nor the run's tasks.
    warm_tasks = load_tasks(generate_tasks(out / "data" / "warm-up", args.warm_up_tasks, args.seed + 1000))
    probe_tasks = load_tasks(generate_tasks(out / "data" / "warm-up-probe", args.warm_up_probe_tasks, args.seed + 2000))
    config = {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()}
    run = start_run(out, "verl-e2e", {"engine": "verl", "rollout_engine": "transformers stand-in (CPU)", **config})
    print(json.dumps({"event": "run", "dir": str(out)}), flush=True)
    measured: dict[str, Any] = {}
    try:
        with LocalEnvServer([tasks_path.parent, out / "data" / "warm-up", out / "data" / "warm-up-probe"], run.images, out / "env-token",
                            run.root / "logs" / "env-server.log") as client:
            # The policy, warmed up on gold tool trajectories and saved where veRL loads it from.
            model = fresh_policy(args, client, tasks, out / "model")
            processor = load_processor(out / "model")
            options = {"tools": True, "max_turns": args.max_turns, "max_tool_calls": args.max_tool_calls, "images": "path"}
            warm_examples = gold_examples(client, warm_tasks, {**options, "presentation": PRESENTATION}, args.seed, args.warm_up_direct_share)
            warm_started = time.perf_counter()
            probes: list[dict[str, Any]] = []

            def learned(step: int) -> bool:
                probe = {"step": step, **probe_calls(client, model, processor, probe_tasks, options, args.seed + step)}
                probes.append(probe)
                print(json.dumps({"event": "warm-up-probe", **probe}), flush=True)
                return probe["first_turn_tool_images"] >= args.warm_up_target * probe["episodes"]

            losses = warm_up(model, processor, warm_examples, args.warm_up_steps, args.warm_up_lr, args.seed,
                             train_embeddings=args.warm_up_embeddings == "train", check_every=args.warm_up_probe_every, learned=learned)
            reached = bool(probes) and probes[-1]["first_turn_tool_images"] >= args.warm_up_target * probes[-1]["episodes"]
            measured["warm_up"] = {"policy": args.policy, "steps": len(losses), "cap": args.warm_up_steps, "target": args.warm_up_target,
                                   "reached": reached, "probes": probes, "seconds": round(time.perf_counter() - warm_started, 1),
                                   "loss_first": round(losses[0], 3), "loss_last_10": round(sum(losses[-10:]) / 10, 3)}
            if not reached:
                # The checks then say what this means (too few tool calls for veRL's multi-image path); the run goes on so they can.
                print(json.dumps({"event": "warning", "message": f"the warm-up ran its cap of {args.warm_up_steps} steps without "
                                  f"{args.warm_up_target:.0%} of its probe episodes calling a tool the env ran"}), flush=True)
            model.save_pretrained(out / "model")
            openings = opening_prompts(client, tasks, options)
            longest_prompt = max(len(processor(text=[processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True)],
                                               images=images or None)["input_ids"][0]) for m, images in openings)
            prompt_length = longest_prompt + 64
            image_tokens = longest_prompt  # an edited image is never larger than the task's; a generous bound
            response_length = args.max_turns * args.max_new_tokens + (args.max_turns - 1) * (64 + image_tokens)
            measured.update({"prompt_length": prompt_length, "response_length": response_length})
            write_verl(tasks_path.parent, out / "data" / "train.parquet", presentation=PRESENTATION)
            (out / "agent_loop.yaml").write_text(agent_loop_yaml(args.max_turns, args.max_tool_calls, args.max_new_tokens))
            env = launch.environment(os.environ)
            env.update({"VISTOOL_ENV_URL": client.url, "VISTOOL_ENV_TOKEN_FILE": str(out / "env-token"), "VISTOOL_RUN_DIR": str(out),
                        "VERL_FILE_LOGGER_PATH": str(out / "metrics.jsonl")})
            env.pop(RATE_VARIABLE, None)
            if args.faults > 0:
                env.update({RATE_VARIABLE: str(args.faults), SEED_VARIABLE: str(args.seed)})
            command = [sys.executable, "-m", "verl.trainer.main_ppo", *launch.overrides(),
                       *trainer_overrides(out, args, prompt_length, response_length)]
            (out / "logs").mkdir(parents=True, exist_ok=True)
            (out / "logs" / "verl-command.txt").write_text(" ".join(command) + "\n")
            if args.prepare_only:
                print(json.dumps({"event": "prepared", "command": str(out / "logs" / "verl-command.txt"), **measured}), flush=True)
                run.update_run(status="prepared", ended_at=time.time())
                return 0
            trainer_started = time.perf_counter()
            code = run_trainer(command, env, out / "logs" / "verl.log", args.timeout)
            measured["trainer_seconds"] = round(time.perf_counter() - trainer_started, 1)
            if code != 0:
                tail = (out / "logs" / "verl.log").read_text(errors="replace").splitlines()[-40:]
                raise RuntimeError(f"veRL's trainer exited {code}; the end of {out / 'logs' / 'verl.log'}:\n" + "\n".join(tail))
    except BaseException as error:
        run.update_run(status="failed", error=f"{type(error).__name__}: {str(error)[-2000:]}", ended_at=time.time())
        (out / "e2e.json").write_text(json.dumps(measured, indent=2) + "\n")
        raise
    measured["steps"] = summarize(out)
    measured["minutes"] = round((time.time() - started) / 60, 2)
    (out / "e2e.json").write_text(json.dumps(measured, indent=2) + "\n")
    run.update_run(status="finished", ended_at=time.time())
    print(json.dumps({"event": "done", "dir": str(out), **measured}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
