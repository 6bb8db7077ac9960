"""`demo`: one code path for the micro model on CPU and a real Qwen2.5-VL on CUDA — the difference
is the resolved run config, and a checkpoint folder loads through transformers' auto classes."""
import io
import json

import pytest

from vistool_trainer.demo import demo_config
from vistool_trainer.demo_report import write_report
from vistool_trainer.events import EventStream
from vistool_trainer.micro_model import MicroSize, build_micro_policy, save_policy
from vistool_trainer.rollout import load_tasks
from vistool_trainer.run_config import resolve_config
from vistool_trainer.train import generate_tasks, train


def test_the_default_demo_is_the_micro_model_on_cpu_with_the_time_budget_split(tmp_path):
    config = demo_config(str(tmp_path / "demo"), minutes=10)
    assert config["policy"]["model"] == "micro" and config["device"] == "cpu"
    assert config["sft"]["max_seconds"] + config["rl"]["max_seconds"] < 10 * 60
    generate = config["data"]["generate"]
    assert generate["families"] == ["argmax"] and generate["image_size"] == "112x112"
    assert generate["labels"] == ["A", "B", "C"] and generate["min_top_gap"] == 0.2
    assert config["output_dir"] == str((tmp_path / "demo").resolve())


def test_a_hub_model_on_cuda_gets_the_real_models_settings_in_the_same_config():
    config = demo_config("runs/demo", minutes=10, model="Qwen/Qwen2.5-VL-3B-Instruct", device="cuda")
    assert config["policy"]["model"] == "Qwen/Qwen2.5-VL-3B-Instruct" and config["device"] == "cuda"
    assert config["policy"]["dtype"] == "auto"  # bfloat16 on CUDA (policy.pick_dtype)
    assert config["policy"]["system_prompt"] is None  # a pretrained model reads the server's tool list
    assert config["rl"]["lr"] == 1e-6 and config["rl"]["max_new_tokens"] >= 256
    # same stages, same data, same rewards as the micro demo
    micro = demo_config("runs/demo", minutes=10)
    for section in ("data", "env", "rewards", "eval", "checkpoint"):
        if section == "eval":
            assert {k: v for k, v in config[section].items() if k != "max_new_tokens"} == {k: v for k, v in micro[section].items() if k != "max_new_tokens"}
        else:
            assert config[section] == micro[section], section


def test_a_local_checkpoint_folder_trains_through_the_same_path_as_a_hub_id(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    tasks = load_tasks(train_path)
    model, processor = build_micro_policy([t["question"] for t in tasks] * 3 + ["<answer>x</answer>"], MicroSize(vocab_size=400), seed=4)
    save_policy(model, processor, tmp_path / "checkpoint")  # save_pretrained: what a hub snapshot looks like on disk

    config = demo_config(str(tmp_path / "run"), minutes=1, model=str(tmp_path / "checkpoint"), device="cpu")
    assert config["policy"]["model"] == str(tmp_path / "checkpoint")
    config["data"] = {**config["data"], "train": str(train_path), "eval": str(eval_path)}
    config["sft"].update(steps=1, batch_size=2)
    config["rl"].update(steps=1, prompts_per_step=1, group_size=2, max_new_tokens=6, micro_batch_size=2)
    config["eval"].update(before_and_after=False)
    config["policy"]["system_prompt"] = ""  # keeps this CPU test short; the real model keeps the server's
    stdout = io.StringIO()
    assert train(resolve_config(config), events=EventStream(stdout=stdout, stderr=io.StringIO())) == 0
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert events[-1]["event"] == "finished"
    saved = sorted((tmp_path / "run" / "checkpoints").glob("step-*"))[-1] / "policy"
    assert json.loads((saved / "config.json").read_text())["architectures"] == ["Qwen2_5_VLForConditionalGeneration"]
    assert "report.html" not in {p.name for p in (tmp_path / "run").iterdir()}
    summary = write_report(tmp_path / "run")
    assert "accuracy with tools" in summary and "RL" in summary
    assert "<h2>Held-out evaluation (greedy)</h2>" in (tmp_path / "run" / "report.html").read_text()


def test_the_demo_data_options_go_to_the_generator_so_every_task_made_is_an_argmax_over_A_B_C_with_a_clear_lead(tmp_path, cli_bundle):
    generate = {**demo_config(str(tmp_path / "demo"), minutes=10)["data"]["generate"], "n_train": 12}
    path = generate_tasks(tmp_path / "train", generate, seed=3, split="train")
    assert path == tmp_path / "train" / "tasks.jsonl"  # no filtered copy: nothing is thrown away
    tasks = load_tasks(path)
    assert len(tasks) == 12
    for task in tasks:
        assert task["family"] == "argmax" and [row[0] for row in task["table"]["rows"]] == ["A", "B", "C"]
        values = sorted((row[1] for row in task["table"]["rows"]), reverse=True)
        assert values[0] - values[1] >= 0.2 * values[0] - 1e-9
        assert task["answer"] == next(row[0] for row in task["table"]["rows"] if row[1] == values[0])
        assert task["gold"] == [{"name": "focus_on_x_values_with_highlight", "arguments": {"x_values": [task["answer"]]}}]
        assert task["generator"]["labels"] == ["A", "B", "C"] and task["generator"]["min_top_gap"] == 0.2


def test_a_generator_option_the_chart_cannot_meet_fails_the_run_with_the_generators_message(tmp_path, cli_bundle):
    generate = {**demo_config(str(tmp_path / "demo"), minutes=10)["data"]["generate"], "labels": ["A", "B"], "n_train": 2}
    with pytest.raises(RuntimeError, match="--labels gives 2 labels but a difficulty-1 vbar may need 3 categories"):
        generate_tasks(tmp_path / "train", generate, seed=3, split="train")
