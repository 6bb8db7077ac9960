"""`demo`: two arms from one initial model on one task family — the same config but env.tools —
and one code path for the micro model on CPU and a real Qwen2.5-VL on CUDA. The end-to-end test
runs the real thing on tiny budgets: both arms as `train` subprocesses against real env servers,
then summary.json and report.html from their run directories."""
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from vistool_trainer.config import to_dict
from vistool_trainer.run.demo import ARMS, demo_config, parse_overrides, run_demo
from vistool_trainer.run.demo_report import write_report
from vistool_trainer.run.events import EventStream
from vistool_trainer.model.micro_model import MicroSize, build_micro_policy, save_policy
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.run.train import generate_tasks, train


def _without(config, *paths):
    config = to_dict(config)
    for path in paths:
        target = config
        *parents, leaf = path.split(".")
        for parent in parents:
            target = target[parent]
        target.pop(leaf)
    return config


def test_the_two_arms_differ_in_env_tools_alone_and_share_the_data(tmp_path):
    tools = demo_config(str(tmp_path / "demo"), minutes=20, arm="tools")
    text = demo_config(str(tmp_path / "demo"), minutes=20, arm="text")
    assert tools.env.tools is True and text.env.tools is False
    assert tools.output_dir == str((tmp_path / "demo" / "tools").resolve()) and text.output_dir == str((tmp_path / "demo" / "text").resolve())
    assert tools.data.train == text.data.train == str((tmp_path / "demo" / "data" / "train" / "tasks.jsonl").resolve())
    assert _without(tools, "env.tools", "output_dir", "name") == _without(text, "env.tools", "output_dir", "name")
    # The same initial model: the same seed, model settings and training data build it.
    assert tools.seed == text.seed and tools.policy == text.policy
    assert tools.policy.model == "micro" and tools.device == "cpu"
    assert tools.sft.max_seconds + tools.rl.max_seconds <= 20 * 60


def test_the_demo_task_family_is_level_questions_about_six_shuffled_bars(tmp_path, cli_bundle):
    generate = replace(demo_config(str(tmp_path / "demo"), minutes=20).data.generate, n_train=9)
    assert generate.families == ["level"] and generate.labels == list("ABCDEF")
    assert generate.shuffle_labels is True and generate.categories == [6, 6]
    tasks = load_tasks(generate_tasks(tmp_path / "train", generate, seed=3, split="train"))
    assert len(tasks) == 9
    for task in tasks:
        assert task["family"] == "level" and task["answer"] in ("low", "medium", "high")
        assert sorted(task["meta"]["x_values_bbox"]) == list("ABCDEF")
        assert task["gold"] == [{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": task["query"]["rows"]}}]
        assert task["generator"]["shuffle_labels"] is True and task["generator"]["categories"] == [6, 6]
    assert len({"".join(task["meta"]["x_values_bbox"]) for task in tasks}) > 1


def test_the_geometry_variant_asks_above_below_about_three_points_with_the_same_budgets(tmp_path, cli_bundle):
    bars = demo_config(str(tmp_path / "demo"), minutes=20)
    tools = demo_config(str(tmp_path / "demo"), minutes=20, task="geometry")
    text = demo_config(str(tmp_path / "demo"), minutes=20, arm="text", task="geometry")
    assert tools.env.tools is True and text.env.tools is False
    assert _without(tools, "env.tools", "output_dir", "name") == _without(text, "env.tools", "output_dir", "name")
    # The same budgets as the bars demo: only the task and the prompts' wording differ.
    assert (tools.sft, tools.rl, tools.eval) == (bars.sft, bars.rl, bars.eval)
    generate = replace(tools.data.generate, n_train=6)
    assert (generate.kind, generate.families, generate.labels) == ("geometry", ["above_below"], ["A", "B", "C"])
    tasks = load_tasks(generate_tasks(tmp_path / "train", generate, seed=3, split="train"))
    assert len(tasks) == 6
    for task in tasks:
        assert task["kind"] == "geometry" and task["answer"] in ("above", "below")
        assert sorted(task["meta"]["points"]) == ["A", "B", "C"]
        assert task["gold"] == [{"name": "draw_line", "arguments": {"through": task["query"]["points"][:2]}}]
    with pytest.raises(ValueError, match="demo task 'maps' is not one of bars, geometry, search"):
        demo_config(str(tmp_path / "demo"), minutes=20, task="maps")


def _data_check(tasks: Path, max_pixels: int) -> dict:
    import subprocess

    from vistool_trainer.checkout import repo_root

    result = subprocess.run(["node", str(repo_root() / "bin" / "vistool.js"), "data", "check", str(tasks), "--json", "--max-pixels", str(max_pixels)],
                            capture_output=True, text=True, timeout=300)
    return json.loads(result.stdout)


def test_the_search_variant_counts_shapes_that_only_a_zoom_shows_at_the_policys_budget(tmp_path, cli_bundle):
    bars = demo_config(str(tmp_path / "demo"), minutes=20)
    tools = demo_config(str(tmp_path / "demo"), minutes=20, task="search")
    text = demo_config(str(tmp_path / "demo"), minutes=20, arm="text", task="search")
    assert tools.env.tools is True and text.env.tools is False
    assert _without(tools, "env.tools", "output_dir", "name") == _without(text, "env.tools", "output_dir", "name")
    # The bars demo's budgets; a turn to spare for a second zoom, as there.
    assert (tools.sft, tools.rl, tools.eval) == (bars.sft, bars.rl, bars.eval)
    assert (tools.env.max_turns, tools.env.max_tool_calls) == (3, 2)
    generate = replace(tools.data.generate, n_train=6)
    assert (generate.kind, generate.families, generate.image_size) == ("search", ["how_many"], "768x576")
    # The tasks are generated for the budget the policy is shown images at.
    assert generate.max_pixels == tools.policy.micro.max_pixels == 25088
    path = generate_tasks(tmp_path / "train", generate, seed=3, split="train")
    tasks = load_tasks(path)
    assert len(tasks) == 6
    for task in tasks:
        assert task["kind"] == "search" and task["family"] == "how_many" and task["answer"] in ("2", "3", "4", "5")
        assert task["generator"]["max_pixels"] == 25088 and task["generator"]["image_size"] == [768, 576]
        # The answer is the count of the named colour and shape in the scene's description.
        query = task["query"]
        named = [o for o in task["meta"]["objects"] if (o["colour"], o["shape"]) == (query["colour"], query["shape"])]
        assert task["answer"] == str(len(named))
        [gold] = task["gold"]
        x1, y1, x2, y2 = gold["arguments"]["bbox"]
        assert gold["name"] == "zoom_in" and all(x1 <= o["bbox"]["x1"] and o["bbox"]["x2"] <= x2 and y1 <= o["bbox"]["y1"]
                                                 and o["bbox"]["y2"] <= y2 for o in named)
    # The checker proves every task needs the zoom at the policy's budget and is readable in it; at the
    # micro model's default budget (twice the pixels) the same shapes are legible without one.
    assert _data_check(path, 25088)["failed"] == 0
    assert _data_check(path, 50176)["failed"] == 6


def test_a_search_config_whose_policy_sees_another_budget_than_its_tasks_is_refused(tmp_path):
    from vistool_trainer.run.run_config import ConfigError

    with pytest.raises(ConfigError, match=r"data.generate.max_pixels \(25088\) .* shown images at 50176 pixels \(policy.micro.max_pixels\)"):
        demo_config(str(tmp_path / "demo"), minutes=20, task="search", overrides={"policy.micro.max_pixels": 50176})
    with pytest.raises(ConfigError, match=r"\(50176, the generator default\) .* 25088 pixels"):
        demo_config(str(tmp_path / "demo"), minutes=20, task="search", overrides={"data.generate.max_pixels": None})
    # A real model is shown images at its own budget: the search demo says what to set instead of generating unusable tasks.
    stderr = io.StringIO()
    assert run_demo(str(tmp_path / "qwen"), 1, model="Qwen/Qwen2.5-VL-3B-Instruct", device="cuda", task="search", stderr=stderr) == 2
    assert "12845056 pixels (policy.max_pixels)" in stderr.getvalue() and not (tmp_path / "qwen").exists()


def test_the_cli_offers_every_demo_task_and_names_them_when_one_is_unknown(tmp_path, capsys):
    from vistool_trainer.__main__ import DEMO_TASKS, build_parser
    from vistool_trainer.run.demo import DEMO_CONFIGS

    assert tuple(DEMO_CONFIGS) == DEMO_TASKS
    assert build_parser().parse_args(["demo", "--task", "search"]).task == "search"
    with pytest.raises(SystemExit) as refused:
        build_parser().parse_args(["demo", "--task", "maps"])
    assert refused.value.code == 2
    assert "invalid choice: 'maps' (choose from bars, geometry, search)" in capsys.readouterr().err.replace("'bars', 'geometry', 'search'", "bars, geometry, search")


def test_a_hub_model_on_cuda_gets_the_real_models_settings_in_the_same_config():
    config = demo_config("runs/demo", minutes=20, model="Qwen/Qwen2.5-VL-3B-Instruct", device="cuda")
    assert config.policy.model == "Qwen/Qwen2.5-VL-3B-Instruct" and config.device == "cuda"
    assert config.policy.dtype == "auto"  # bfloat16 on CUDA (policy.pick_dtype)
    assert config.policy.system_prompt is None  # a pretrained model reads the server's tool list
    assert config.rl.max_new_tokens >= 256
    # One GPU: LoRA (adapters in fp32) at ten times full fine-tuning's learning rates, checkpointed
    # layers, micro-batches by token budget, every image in view (one sequence per rollout).
    assert config.policy.lora.enabled and config.policy.lora.r == 64 and "down_proj" in config.policy.lora.target_modules
    assert (config.sft.lr, config.rl.lr) == (1e-4, 1e-5)
    assert config.policy.gradient_checkpointing is True and config.policy.view.latest_images is None
    assert config.rl.use_dynamic_bsz and config.rl.ppo_max_token_len_per_gpu == 16384 and config.sft.use_dynamic_bsz
    assert (config.eval.n, config.eval.every_steps) == (200, 20)
    # The micro model's one-skill-at-a-time phases are off: whole trajectories and the mixture from the start.
    assert [getattr(config.sft, key) for key in ("after_tool_turns_first", "calls_without_images_steps", "tool_trajectories_steps")] == [0, 0, 0]
    micro = demo_config("runs/demo", minutes=20)
    assert micro.sft.calls_alongside_answers is True and micro.policy.view.latest_images == 1
    for section in ("data", "env", "rewards", "checkpoint"):
        assert getattr(config, section) == getattr(micro, section), section


def test_the_one_gpu_example_is_the_demos_real_model_recipe():
    """examples/grpo-qwen2.5-vl-3b-1gpu-lora.vistool.json is the real-model demo's tools arm as a run
    config of its own: the two must not drift apart."""
    from vistool_trainer.checkout import repo_root
    from vistool_trainer.run.demo import REAL_MODEL_SETTINGS
    from vistool_trainer.run.run_config import load_config

    example = to_dict(load_config(repo_root() / "examples" / "grpo-qwen2.5-vl-3b-1gpu-lora.vistool.json"))
    demo = to_dict(demo_config("runs/demo", minutes=20, model="Qwen/Qwen2.5-VL-3B-Instruct", device="cuda"))
    for dotted in REAL_MODEL_SETTINGS:
        if dotted in ("policy.dtype", "threads"):
            continue  # the example names bfloat16 and leaves threads to torch; the demo says auto (bfloat16 on CUDA)
        keys = dotted.split(".")
        a, b = example, demo
        for key in keys:
            a, b = a[key], b[key]
        assert a == b, dotted


def test_overrides_reach_both_arms_and_bad_ones_are_refused(tmp_path):
    overrides = parse_overrides(["sft.steps=7", "eval.n=12", "name=x"])
    assert overrides == {"sft.steps": 7, "eval.n": 12, "name": "x"}
    for arm in ARMS:
        assert demo_config(str(tmp_path), 20, arm=arm, overrides=overrides).sft.steps == 7
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_overrides(["sft.steps"])
    stderr = io.StringIO()
    assert run_demo(str(tmp_path / "refused"), 1, overrides={"env.tools": True}, stderr=stderr) == 2
    assert "the arms differ in env.tools alone" in stderr.getvalue()


def test_the_seed_flag_reaches_both_arms_and_a_conflicting_one_is_refused(tmp_path):
    """`make demo SEED=2` runs `demo --seed 2`: one seed for both arms (tasks, weights, batches, sampling)."""
    import subprocess
    import sys

    for arm in ARMS:
        assert demo_config(str(tmp_path), 20, arm=arm, overrides={"seed": 2}).seed == 2
    assert demo_config(str(tmp_path), 20).seed == 1  # the demo config's own
    refused = subprocess.run([sys.executable, "-m", "vistool_trainer", "demo", "--out", str(tmp_path / "never"), "--seed", "2",
                              "--set", "seed=3"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--seed 2 and --set seed=3 disagree" in refused.stderr
    assert not (tmp_path / "never").exists()
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "--seed $(SEED)" in makefile and "SEED ?= 1" in makefile
    assert "$(if $(DEMO_THREADS),--threads $(DEMO_THREADS))" in makefile


def test_a_local_checkpoint_folder_trains_through_the_same_path_as_a_hub_id(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    tasks = load_tasks(train_path)
    model, processor = build_micro_policy([t["question"] for t in tasks] * 3 + ["<answer>x</answer>"], MicroSize(vocab_size=400), seed=4)
    save_policy(model, processor, tmp_path / "checkpoint")  # save_pretrained: what a hub snapshot looks like on disk

    config = demo_config(str(tmp_path / "run"), minutes=1, model=str(tmp_path / "checkpoint"), device="cpu")
    assert config.policy.model == str(tmp_path / "checkpoint")
    config.output_dir = str(tmp_path / "run")
    config.data.train, config.data.eval = str(train_path), str(eval_path)
    config.sft = replace(config.sft, steps=1, batch_size=2, probe_tasks=2)
    config.rl = replace(config.rl, steps=1, prompts_per_step=1, group_size=2, max_new_tokens=6, micro_batch_size=2, ppo_mini_batch_size=None,
                        fresh_tasks=4)
    config.eval = replace(config.eval, before_and_after=False, every_steps=0)
    config.policy.system_prompt = ""  # keeps this CPU test short; the real model keeps the server's
    stdout = io.StringIO()
    assert train(resolve_config(to_dict(config)), events=EventStream(stdout=stdout, stderr=io.StringIO())) == 0
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert events[-1]["event"] == "finished"
    saved = sorted((tmp_path / "run" / "checkpoints").glob("step-*"))[-1] / "policy"
    assert json.loads((saved / "config.json").read_text())["architectures"] == ["Qwen2_5_VLForConditionalGeneration"]
    summary = write_report(tmp_path / "run")
    assert "accuracy with tools" in summary and "RL" in summary


def test_the_demo_runs_both_arms_and_leaves_summary_json_and_a_report(tmp_path, cli_bundle):
    """Both arms as real `train` subprocesses on tiny budgets (the numbers mean nothing here; the
    shape, the provenance and the plumbing do)."""
    overrides = {"data.generate.n_train": 12, "rl.fresh_tasks": 4, "data.generate.n_eval": 6, "eval.n": 6, "eval.every_steps": 1,
                 "sft.steps": 2, "sft.batch_size": 4, "rl.steps": 2, "rl.prompts_per_step": 2, "rl.group_size": 2,
                 "rl.micro_batch_size": 4, "rl.max_new_tokens": 8, "eval.max_new_tokens": 8, "policy.micro.vocab_size": 400,
                 "checkpoint.every_steps": 0, "logging.rollouts_per_step": 4, "sft.probe_tasks": 2, "sft.probe_every": 1,
                 # The mixture from the first step, ended by the first probe (a target of 0 is always met): the
                 # tools arm trains 1 of its 2 SFT steps, and the text arm then gets that budget.
                 "sft.after_tool_turns_first": 0, "sft.calls_without_images_steps": 0, "sft.tool_trajectories_steps": 0,
                 "sft.mixture_until_direct_rate": 0.0}
    stderr = io.StringIO()
    code = run_demo(str(tmp_path / "demo"), minutes=5, overrides={**overrides, "seed": 2}, stderr=stderr, threads=1)
    assert code == 0, stderr.getvalue()[-3000:]
    root = tmp_path / "demo"
    # make demo DEMO_THREADS=1: every arm's trainer runs the thread count asked for, and demo.json says so.
    assert all(json.loads((root / f"{arm}.vistool.json").read_text())["threads"] == 1 for arm in ARMS)
    assert json.loads((root / "demo.json").read_text())["threads"] == 1
    summary = json.loads((root / "summary.json").read_text())
    # No --cpu-kernels: each arm ran, and recorded, the CPU's own kernel path (run/cpu_kernels.py).
    from vistool_trainer.run.cpu_kernels import native_capability
    assert summary["threads"] == 1 and summary["cpu_kernels"] is None
    assert {summary["arms"][arm]["cpu_capability"] for arm in ARMS} == {native_capability()}
    for arm in ARMS:
        run = json.loads((root / arm / "run.json").read_text())
        assert run["status"] == "finished"
        for label in ("after_sft", "after_rl"):
            numbers = summary["arms"][arm][label]
            assert numbers["n"] == 6 and 0 <= numbers["acc_ci95"][0] <= numbers["acc"] <= numbers["acc_ci95"][1] <= 1
            assert numbers["acc"] == run["evaluations"][label]["eval/acc_" + ("tools" if arm == "tools" else "no_tools")]
        assert summary["arms"][arm]["budget"]["sft_steps"] == 1 and summary["arms"][arm]["budget"]["rl_steps"] == 2
    # One initial model for both arms.
    assert summary["arms"]["tools"]["initial_weights_checksum"] == summary["arms"]["text"]["initial_weights_checksum"]
    assert json.loads((root / "text.vistool.json").read_text())["env"]["tools"] is False
    assert json.loads((root / "text.vistool.json").read_text())["sft"]["steps"] == 1 and "text arm: sft.steps 1" in stderr.getvalue()
    # One after the other: the text arm starts once the tools arm has finished.
    runs = {arm: json.loads((root / arm / "run.json").read_text()) for arm in ARMS}
    assert runs["text"]["started_at"] >= runs["tools"]["ended_at"]
    split = summary["eval_split"]
    assert split["split"] == "test" and split["n"] == 6 and split["families"] == ["level"] and "--seed 2" in split["command"]
    assert summary["seed"] == 2 and summary["minutes_cap"] == 5 and summary["time_caps_reached"] == []
    assert summary["minutes"] > 0 and len(summary["targets"]) == 3
    page = (root / "report.html").read_text()
    assert "text-only arm" in page and "Wilson" in page and page.count("<svg") >= 3
    periodic = [json.loads(line) for line in (root / "tools" / "metrics.jsonl").read_text().splitlines() if '"rl_step_1"' in line]
    assert periodic and "eval/acc_tools" in periodic[0] and "eval/acc_no_tools" not in periodic[0]  # its own setting only
    assert "tools eval after_rl" in stderr.getvalue() and "text eval after_rl" in stderr.getvalue()


def test_the_search_demo_runs_end_to_end_on_tiny_budgets(tmp_path, cli_bundle):
    """`demo --task search` through the real path: tasks generated for the policy's budget, gold zooms
    replayed in SFT, RL rollouts whose calls reach the env, both arms evaluated, and the report's
    search sections (the numbers mean nothing here)."""
    overrides = {"data.generate.n_train": 8, "rl.fresh_tasks": 3, "data.generate.n_eval": 4, "eval.n": 4, "eval.every_steps": 0,
                 "sft.steps": 2, "sft.batch_size": 4, "rl.steps": 1, "rl.prompts_per_step": 2, "rl.group_size": 2,
                 "rl.micro_batch_size": 4, "rl.max_new_tokens": 8, "eval.max_new_tokens": 8, "policy.micro.vocab_size": 400,
                 "checkpoint.every_steps": 0, "logging.rollouts_per_step": 4, "sft.probe_tasks": 2, "sft.probe_every": 1,
                 "sft.after_tool_turns_first": 0, "sft.calls_without_images_steps": 0, "sft.tool_trajectories_steps": 0,
                 "sft.mixture_until_direct_rate": 0.0}
    stderr = io.StringIO()
    code = run_demo(str(tmp_path / "demo"), minutes=5, overrides=overrides, stderr=stderr, task="search", threads=1)
    assert code == 0, stderr.getvalue()[-3000:]
    root = tmp_path / "demo"
    assert json.loads((root / "demo.json").read_text())["task"] == "search"
    tasks = load_tasks(root / "data" / "eval" / "tasks.jsonl")
    assert len(tasks) == 4 and {task["kind"] for task in tasks} == {"search"}
    summary = json.loads((root / "summary.json").read_text())
    assert summary["eval_split"]["families"] == ["how_many"] and "--max-pixels 25088" in summary["eval_split"]["command"]
    for arm in ARMS:
        assert json.loads((root / arm / "run.json").read_text())["status"] == "finished"
        assert summary["arms"][arm]["after_rl"]["n"] == 4
    # No zoom fits in 8 new tokens (one is about 30), so no crop was measured: the summary says not
    # measured rather than 0.
    assert summary["arms"]["tools"]["after_rl"]["crop_iou"] is None
    # Tiny budgets are another recipe than the stored search range's: told so, and not placed in it.
    assert len(summary["range"]) == 1
    assert summary["range"][0].startswith("the stored range of the search demo (examples/demo-range.json) was measured with another recipe")
    page = (root / "report.html").read_text()
    assert "how many such objects there are" in page and "25,088 pixels" in page
    assert "It does not show search in the sense of deep multi-turn exploration" in page


def test_a_second_demo_keeps_the_first_one_aside_instead_of_mixing_into_it(tmp_path):
    from vistool_trainer.run.demo import keep_previous_demo

    assert keep_previous_demo(tmp_path / "demo") is None  # nothing there yet
    (tmp_path / "demo").mkdir()
    assert keep_previous_demo(tmp_path / "demo") is None  # an empty folder is reused
    (tmp_path / "demo" / "tools").mkdir()
    (tmp_path / "demo" / "summary.json").write_text('{"minutes": 1}')
    kept = keep_previous_demo(tmp_path / "demo")
    assert kept is not None and kept.parent == tmp_path and kept.name.startswith("demo-")
    assert (kept / "summary.json").read_text() == '{"minutes": 1}' and (kept / "tools").is_dir()
    assert not (tmp_path / "demo").exists()
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "summary.json").write_text("{}")
    second = keep_previous_demo(tmp_path / "demo")
    assert second != kept and second.exists() and kept.exists()
