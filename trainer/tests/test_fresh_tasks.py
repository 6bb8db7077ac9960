"""rl.fresh_tasks: the last training tasks are RL's alone. SFT (its batches and its probe) never sees
them, and RL draws every prompt from them, so RL's reward is earned on tasks the warm-up could not
learn by heart."""
import io
import json

import pytest

from test_end_to_end import small_config
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.run_config import ConfigError, resolve_config
from vistool_trainer.run.run_directory import read_json_lines
from vistool_trainer.run.stage_context import TaskSets
from vistool_trainer.run.train import train


def task_ids(path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]


def test_rl_samples_only_the_fresh_tasks_and_sft_trains_on_none_of_them(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    ids = task_ids(train_path)
    fresh, probe = 6, 2
    config = small_config(tmp_path, train_path, eval_path, "fresh", sft={"steps": 2, "batch_size": 4, "probe_tasks": probe, "probe_every": 2},
                          rl={"steps": 3, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False,
                              "fresh_tasks": fresh},
                          logging={"rollouts_per_step": 4})
    stdout, stderr = io.StringIO(), io.StringIO()
    code = train(config, events=EventStream(stdout=stdout, stderr=stderr))
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert code == 0, [e for e in events if e["event"] == "failed"]
    # SFT replays gold turns of what is left after RL's last 6 and the probe's 2 before them.
    gold = [e for e in events if e["event"] == "progress" and e["what"] == "gold conversations"]
    assert gold[-1]["total"] == len(ids) - fresh - probe
    # Every prompt RL sampled in its 3 steps is one of the last 6 training tasks.
    rollout_files = sorted((tmp_path / "fresh" / "rollouts").glob("step-*.jsonl"))
    sampled = {record["prompt_id"] for path in rollout_files for record in read_json_lines(path)}
    assert len(rollout_files) == 3 and sampled, rollout_files
    assert sampled <= set(ids[-fresh:]), sorted(sampled - set(ids[-fresh:]))
    assert f"RL draws its prompts from the last {fresh} training tasks only" in stderr.getvalue()


def test_the_split_is_the_training_list_cut_before_its_last_n():
    tasks = [{"id": str(index)} for index in range(10)]
    both = TaskSets(tasks, [], fresh_tasks=3)
    assert [t["id"] for t in both.sft_train] == [str(index) for index in range(7)]
    assert [t["id"] for t in both.rl_train] == ["7", "8", "9"]
    everything = TaskSets(tasks, [], fresh_tasks=0)
    assert everything.sft_train == everything.rl_train == tasks
    with pytest.raises(ValueError, match=r"rl\.fresh_tasks \(10\) keeps every one of the 10 training tasks.*\[rl/fresh-tasks-too-many\]"):
        TaskSets(tasks, [], fresh_tasks=10)


def test_a_generated_split_too_small_for_the_fresh_tasks_and_the_probe_is_refused_before_anything_runs(tmp_path):
    def config(n_train: int, fresh: int, **sft) -> dict:
        return {"output_dir": str(tmp_path / "run"), "data": {"generate": {"kind": "vbar", "n_train": n_train}},
                "sft": {"probe_tasks": 10, **sft}, "rl": {"fresh_tasks": fresh}}

    with pytest.raises(ConfigError, match=r"needs at least 11 .*n_train to 106 .*\[rl/fresh-tasks-too-many\]"):
        resolve_config(config(100, 95))
    assert resolve_config(config(100, 89)).rl.fresh_tasks == 89
    assert resolve_config(config(100, 99, enabled=False)).rl.fresh_tasks == 99  # no SFT: only one task must be left
    assert resolve_config(config(100, 0)).rl.fresh_tasks == 0
