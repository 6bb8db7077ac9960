"""The reward function as veRL loads it by path and calls it through its own reward manager, on
real episodes; the smoke run's directory in vistool's run contract; tasks ↔ parquet."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pyarrow.parquet as pq
import torch
from omegaconf import OmegaConf
from tensordict import TensorDict
from verl import DataProto
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
from verl.trainer.ppo.reward import get_custom_reward_fn
from verl.utils.dataset.rl_dataset import RLHFDataset

import vistool_verl
from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.parquet_rows import read_verl, write_verl

from test_agent_loop import rows_for, run_loops

REWARD_FILE = Path(vistool_verl.__file__).parent / "reward.py"


def replayed_score(client, task: dict, assistant_texts: list[str]) -> dict:
    """The env server's score for the same texts in a new episode: independent of the loop's bookkeeping."""
    opened = client.start_episodes([{"task": {k: v for k, v in task.items() if not k.startswith("_")}, "task_dir": task["_task_dir"],
                                     "options": {"tools": True, "max_turns": 3, "max_tool_calls": 3, "images": "path"}}])[0]
    for text in assistant_texts:
        client.step_episodes([{"episode_id": opened["episode_id"], "text": text}])
    score = client.score_episodes([opened["episode_id"]])[0]
    client.close_episode(opened["episode_id"])
    return score


def test_veRL_loads_the_reward_by_path_and_its_reward_manager_gives_the_env_servers_score(tasks_path, micro_dir, env_server):
    tasks = load_tasks(tasks_path)[:2]
    outputs, processor = run_loops(micro_dir, env_server, rows_for(tasks))
    config = OmegaConf.create({"reward": {"custom_reward_function": {"path": str(REWARD_FILE), "name": "compute_score"}}})
    compute_score = get_custom_reward_fn(config)

    async def through_the_manager(data: DataProto) -> dict:
        # The manager keeps the event loop it is made on, as veRL's reward-loop workers do.
        return await NaiveRewardManager(config, processor.tokenizer, compute_score).run_single(data)

    for task, output in zip(tasks, outputs):
        prompts, responses = torch.tensor([output.prompt_ids]), torch.tensor([output.response_ids])
        data = DataProto(
            batch=TensorDict({"prompts": prompts, "responses": responses,
                              "attention_mask": torch.ones(1, prompts.shape[1] + responses.shape[1], dtype=torch.long)}, batch_size=1),
            non_tensor_batch={"data_source": np.array(["vistool/vbar"], dtype=object),
                              "reward_model": np.array([{"ground_truth": json.dumps(task["answer"])}], dtype=object),
                              "extra_info": np.array([{"index": 0}], dtype=object),
                              "tool_extra_fields": np.array([output.extra_fields], dtype=object),
                              "__num_turns__": np.array([output.num_turns])})
        result = asyncio.run(through_the_manager(data))
        texts = [t["text"] for t in output.extra_fields["vistool_trajectory"]["turns"] if t["role"] == "assistant"]
        expected = replayed_score(env_server[0], task, texts)
        assert result["reward_score"] == expected["reward"]
        assert result["reward_extra_info"]["acc"] == (1.0 if expected["correct"] else 0.0)
        for name, value in expected["components"].items():
            assert result["reward_extra_info"][f"vistool/{name}"] == value


def test_the_smoke_run_writes_a_run_directory_with_grpo_advantages_and_images_that_resolve(tmp_path):
    out = tmp_path / "verl-smoke"
    result = subprocess.run([sys.executable, "-m", "vistool_verl", "smoke", "--out", str(out), "--prompts", "2", "--group", "3",
                             "--max-new-tokens", "24"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "finished" and run["engine"] == "verl" and run["verl_version"] == "0.9.1"
    records = [json.loads(line) for line in (out / "rollouts" / "step-000001.jsonl").read_text().splitlines()]
    assert len(records) == 6
    for group in ({r["prompt_id"] for r in records}):
        members = [r for r in records if r["prompt_id"] == group]
        rewards = np.array([r["reward"] for r in members])
        # GRPO's outcome advantage, computed here on its own: (r - mean) / (std + 1e-6), unbiased std.
        expected = (rewards - rewards.mean()) / (rewards.std(ddof=1) + 1e-6)
        assert np.allclose([r["advantage"] for r in members], expected, atol=1e-4)
    schema = jsonschema.Draft7Validator(json.loads((repo_root() / "schemas" / "rollout-record.schema.json").read_text()))
    for record in records:
        refs = [record["task"]["image"]] + [ref for turn in record["turns"] for ref in turn.get("images") or []]
        assert all((out / "images" / f"{ref}.png").is_file() for ref in refs)
        # The records are the contract the viewer reads (an untrained policy's E1 errors carry offsets).
        assert [error.message for error in schema.iter_errors(record)] == [], record["prompt_id"]
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert metrics[0]["step"] == 1 and "time" in metrics[0]
    assert metrics[0]["critic/score/mean"] == np.mean([r["reward"] for r in records])
    # The per-class error counts, as the embedded trainer logs them, add up to the records' errors.
    errors = [e["class"] for r in records for turn in r["turns"] if turn["role"] == "assistant" for e in turn["errors"]]
    assert {cls: metrics[0][f"errors/{cls}"] for cls in ("E1", "E2", "E3", "E4", "E5", "E6")} == {cls: float(errors.count(cls)) for cls in ("E1", "E2", "E3", "E4", "E5", "E6")}


def test_tasks_go_to_veRL_parquet_and_back_unchanged_and_veRLs_dataset_reads_the_rows(tasks_path, micro_dir, tmp_path):
    parquet = tmp_path / "train.parquet"
    assert write_verl(tasks_path, parquet) == 4
    rows = pq.read_table(parquet).to_pylist()
    originals = load_tasks(tasks_path)
    for row, task in zip(rows, originals):
        assert row["agent_name"] == "vistool_agent"
        assert row["prompt"][-1]["role"] == "user" and "<image>" in row["prompt"][-1]["content"]
        assert task["question"] in row["prompt"][-1]["content"]
        assert row["images"][0]["bytes"] == (Path(task["_task_dir"]) / task["image"]).read_bytes()
    back = tmp_path / "back"
    assert read_verl(parquet, back) == 4
    for restored, task in zip(load_tasks(back / "tasks.jsonl"), originals):
        assert (back / restored["image"]).read_bytes() == (Path(task["_task_dir"]) / task["image"]).read_bytes()
        strip = lambda t: {k: v for k, v in t.items() if not k.startswith("_") and k != "image"}  # noqa: E731
        assert strip(restored) == strip(task)
    # veRL's own dataset class reads the file. Its image step needs qwen_vl_utils, which needs
    # torchvision (not installable beside this CPU torch), so the images column is read without it here.
    dataset = RLHFDataset([str(parquet)], tokenizer=None, processor=None,
                          config=OmegaConf.create({"image_key": "no_images_here", "max_prompt_length": 100000, "filter_overlong_prompts": False,
                                                   "return_raw_chat": True}))
    item = dataset[0]
    assert item["agent_name"] == "vistool_agent"
    assert json.loads(item["extra_info"]["task_json"])["id"] == originals[0]["id"]


def test_a_foreign_veRL_parquet_goes_through_the_engines_loader(tmp_path, tasks_path):
    import pyarrow as pa
    task = load_tasks(tasks_path)[0]
    image = (Path(task["_task_dir"]) / task["image"]).read_bytes()
    rows = [{"data_source": "elsewhere", "prompt": [{"role": "user", "content": "<image>How many bars are there?"}],
             "images": [{"bytes": image}], "reward_model": {"ground_truth": "6"}, "extra_info": {"index": 0}}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "foreign.parquet")
    assert read_verl(tmp_path / "foreign.parquet", tmp_path / "out") == 1
    converted = load_tasks(tmp_path / "out" / "tasks.jsonl")[0]
    assert converted["question"] == "How many bars are there?" and converted["answer"] == "6"
    assert (tmp_path / "out" / converted["image"]).read_bytes() == image


def test_under_veRLs_dapo_manager_the_score_cannot_arrive_and_the_reward_function_says_why(micro_dir):
    """veRL 0.9.1's naive manager merges the agent loop's fields (tool_extra_fields) into extra_info;
    its dapo manager does not, so the env server's score never reaches compute_score (issue 41,
    "reward.py breaks under the dapo/gdpo reward managers": it holds). The function refuses, naming the fix."""
    import pytest
    from verl.experimental.reward_loop.reward_manager.dapo import DAPORewardManager

    from vistool_verl.processor import load_processor

    tokenizer = load_processor(micro_dir).tokenizer
    config = OmegaConf.create({"reward": {"custom_reward_function": {"path": str(REWARD_FILE), "name": "compute_score"}}})
    compute_score = get_custom_reward_fn(config)
    fields = {"vistool_score": {"reward": 0.75, "correct": True, "components": {"accuracy": 1.0}, "notes": []},
              "vistool_trajectory": {"tool_calls": 1, "tool_errors": 0}}

    def data() -> DataProto:  # a fresh batch each time: the naive manager updates the row's extra_info in place
        return DataProto(
            batch=TensorDict({"prompts": torch.tensor([[1, 2]]), "responses": torch.tensor([[3, 4]]),
                              "attention_mask": torch.ones(1, 4, dtype=torch.long)}, batch_size=1),
            non_tensor_batch={"data_source": np.array(["vistool/vbar"], dtype=object),
                              "reward_model": np.array([{"ground_truth": "low"}], dtype=object),
                              "extra_info": np.array([{"index": 0}], dtype=object),
                              "tool_extra_fields": np.array([dict(fields)], dtype=object)})

    async def with_manager(manager_class) -> dict:
        return await manager_class(config, tokenizer, compute_score).run_single(data())

    assert asyncio.run(with_manager(NaiveRewardManager))["reward_score"] == 0.75
    with pytest.raises(ValueError, match=r"'dapo' and 'gdpo' managers leave them out; use reward.reward_manager.name=naive"):
        asyncio.run(with_manager(DAPORewardManager))
