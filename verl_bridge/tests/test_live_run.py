"""A veRL run's own files, read by the workbench's TypeScript readers (test/runs/read-run-dir.ts):

- metrics.jsonl as veRL's `file` logger writes it (its real Tracking/FileLogger, pointed at the run
  directory with VERL_FILE_LOGGER_PATH, as the exported run.sh does);
- rollouts/step-N.jsonl as the agent loop writes it during training, called with the fields
  veRL 0.9.1's V1 agent-loop worker passes (`global_steps`, `uid`, `session_id` beside the dataset
  row that veRL's RLHFDataset reads from the converter's parquet).

Generation goes through TransformersServerManager, vistool's implementation of veRL's
server-manager interface on transformers: the one stand-in, because vLLM and SGLang need a GPU.
The env server, the micro Qwen2.5-VL, veRL's agent-loop base class, dataset and logger are real.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path

import jsonschema  # installed with veRL (ray needs it)
import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from transformers import Qwen2_5_VLForConditionalGeneration
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.utils.tracking import Tracking

from vistool_trainer.checkout import repo_root
from vistool_trainer.rollouts.env_client import LocalEnvServer
from vistool_trainer.rollouts.rollout import load_tasks
from vistool_verl.agent_loop import VistoolAgentLoop
from vistool_verl.live_records import EpisodePlace, GroupBuffer
from vistool_verl.parquet_rows import write_verl
from vistool_verl.processor import load_processor
from vistool_verl.smoke import trainer_config
from vistool_verl.transformers_server import TransformersServerManager

READER = repo_root() / "test" / "runs" / "read-run-dir.ts"
ROLLOUT_SCHEMA = json.loads((repo_root() / "schemas" / "rollout-record.schema.json").read_text())


def read_run(run_dir: Path) -> dict:
    """The run directory through the dashboard's and the viewer's own readers."""
    result = subprocess.run(["node", "--import", "tsx", str(READER), str(run_dir)], cwd=repo_root(), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_veRLs_file_logger_writes_metrics_the_dashboard_reads_with_veRLs_names_and_steps(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.setenv("VERL_FILE_LOGGER_PATH", str(run_dir / "metrics.jsonl"))
    logged = {
        0: {"val-core/vistool/vbar/acc/mean@1": np.float64(0.25), "val-aux/num_turns/mean": np.float32(3.0)},
        1: {"critic/score/mean": np.float32(0.5), "actor/pg_clipfrac": 0.125, "timing_s/step": 12.0, "training/global_step": 1},
        2: {"critic/score/mean": np.float32(0.75), "actor/pg_clipfrac": 0.0625, "timing_s/step": 11.0, "training/global_step": 2},
    }
    tracker = Tracking(project_name="vistool", experiment_name="live", default_backend=["file"])
    for step, data in logged.items():
        tracker.log(data=data, step=step)
    tracker.finish()
    seen = read_run(run_dir)
    assert seen["metrics"]["problems"] == []
    table = seen["metrics"]["table"]
    assert table["steps"] == [0, 1, 2]
    assert table["times"] == [None, None, None] and table["stages"] == [None, None, None]
    names = sorted({name for data in logged.values() for name in data})
    assert seen["metrics"]["names"] == names
    for name in names:
        assert table["columns"][name] == [float(logged[s][name]) if name in logged[s] else None for s in (0, 1, 2)], name


def kwargs_as_veRL_passes_them(dataset: RLHFDataset, step: int, group_size: int) -> list[dict]:
    """What veRL 0.9.1's V1 worker hands `run(**kwargs)` for each rollout: the dataset row's fields,
    the batch's global_steps, the prompt's uid (a fresh uuid4 per prompt, as its trainer makes
    them) and the rollout's session_id (0..n-1). agent_name is taken out before the call."""
    calls = []
    for i in range(len(dataset)):
        row = dict(dataset[i])
        row.pop("agent_name")
        uid = str(uuid.uuid4())
        calls.extend({**row, "uid": uid, "global_steps": step, "session_id": session} for session in range(group_size))
    return calls


def run_episodes(model_dir: Path, client, token_file: Path, run_dir: Path, calls: list[dict], n: int, val_n: int) -> list:
    processor = load_processor(model_dir)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32)
    manager = TransformersServerManager(model, processor, max_new_tokens=32, seed=0)
    cfg = trainer_config(response_length=768, prompt_length=3328, max_turns=2)
    OmegaConf.update(cfg, "actor_rollout_ref.rollout.n", n)
    OmegaConf.update(cfg, "actor_rollout_ref.rollout.val_kwargs", {"n": val_n})

    async def run_all():
        loops = [VistoolAgentLoop(DictConfigWrap(cfg), manager, processor.tokenizer, processor, RLHFDataset, DictConfigWrap(cfg.data),
                                  hf_model_type="qwen2_5_vl", max_turns=2, env_url=client.url, env_token_file=str(token_file),
                                  run_dir=str(run_dir)) for _ in calls]
        return await asyncio.gather(*(loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True}, **call)
                                      for loop, call in zip(loops, calls)))
    return asyncio.run(run_all())


def parquet_dataset(tasks_path: Path, out: Path, split: str) -> RLHFDataset:
    write_verl(tasks_path, out, split=split)
    # The images column is not decoded here: veRL's image step needs qwen_vl_utils, which needs
    # torchvision (not installable beside this CPU torch); the loop reads the task's image itself.
    return RLHFDataset([str(out)], tokenizer=None, processor=None,
                       config=OmegaConf.create({"image_key": "no_images_here", "max_prompt_length": 100000,
                                                "filter_overlong_prompts": False, "return_raw_chat": True}))


def test_the_agent_loop_writes_each_groups_rollouts_live_where_the_viewer_reads_them_and_validation_apart(tasks_path, micro_dir, tmp_path):
    run_dir = tmp_path / "run"
    tasks = load_tasks(tasks_path)
    train = parquet_dataset(tasks_path, tmp_path / "train.parquet", "train")
    train.dataframe = train.dataframe.select(range(2))
    val = parquet_dataset(tasks_path, tmp_path / "val.parquet", "val")
    val.dataframe = val.dataframe.select(range(1))
    n, val_n, step = 2, 1, 3
    calls = kwargs_as_veRL_passes_them(train, step, n) + kwargs_as_veRL_passes_them(val, step, val_n)
    # The env server as run.sh starts it: its images go into the run directory.
    with LocalEnvServer(tasks_path.parent, run_dir / "images", tmp_path / "token", tmp_path / "server.log") as client:
        outputs = run_episodes(micro_dir, client, tmp_path / "token", run_dir, calls, n, val_n)

    seen = read_run(run_dir)
    # The viewer lists the training step only; validation rollouts are kept beside it.
    assert [f["file"] for f in seen["stepFiles"]] == ["rollouts/step-000003.jsonl"]
    assert sorted(p.name for p in (run_dir / "rollouts").iterdir()) == ["step-000003.jsonl", "val-step-000003.jsonl"]
    (listed,) = seen["steps"]
    assert listed["skipped"] == []
    # The viewer's groups: one per prompt, each with its n rollouts, whatever order the episodes ended in.
    assert sorted((g["promptId"], g["size"]) for g in listed["groups"]) == sorted((t["id"], n) for t in tasks[:2])
    records = [json.loads(line) for line in (run_dir / "rollouts" / "step-000003.jsonl").read_text().splitlines()]
    by_call = {(c["uid"], c["session_id"]): o for c, o in zip(calls, outputs)}
    for record in records:
        jsonschema.validate(record, ROLLOUT_SCHEMA)  # the contract (docs/CONTRACTS.md) the viewer's types come from
        assert record["step"] == step and record["engine"] == "verl"
        assert "advantage" not in record and "kept" not in record  # veRL's trainer computes those later, elsewhere
        output = by_call[(record["group_uid"], record["group"])]
        assert record["turns"] == output.extra_fields["vistool_trajectory"]["turns"]
        assert record["reward"] == output.extra_fields["vistool_score"]["reward"]
        assert record["reward_breakdown"] == output.extra_fields["vistool_score"]["components"]
        assert record["response_tokens"] == sum(output.response_mask)
        refs = [record["task"]["image"]] + [ref for turn in record["turns"] for ref in turn.get("images") or []]
        assert all((run_dir / "images" / f"{ref}.png").is_file() for ref in refs)
    # Within a group, session order: the group index the viewer reads restarts only at the next group.
    for group in listed["groups"]:
        assert [records[line]["group"] for line in group["lines"]] == list(range(n))
        assert len({records[line]["group_uid"] for line in group["lines"]}) == 1
    (val_record,) = [json.loads(line) for line in (run_dir / "rollouts" / "val-step-000003.jsonl").read_text().splitlines()]
    jsonschema.validate(val_record, ROLLOUT_SCHEMA)
    assert val_record["prompt_id"] == tasks[0]["id"] and val_record["group"] == 0


def test_a_groups_records_are_written_together_when_its_last_rollout_ends_so_interleaved_episodes_make_whole_groups(tmp_path):
    run_dir = tmp_path / "run"
    config = OmegaConf.create({"n": 2, "val_kwargs": {"n": 1}})
    buffer = GroupBuffer()
    record = lambda prompt, uid, session: {"step": 1, "prompt_id": prompt, "group": session, "group_uid": uid, "reward": 0.0,  # noqa: E731
                                           "turns": [{"role": "assistant", "text": f"{prompt}/{session}", "calls": [], "errors": []}]}
    written = []
    # Episodes end in the order a busy step ends them: a1 first, then both of b, then a0.
    for prompt, uid, session in [("a", "uid-a", 1), ("b", "uid-b", 0), ("b", "uid-b", 1), ("a", "uid-a", 0)]:
        place = EpisodePlace.of(str(run_dir), {"global_steps": 1, "uid": uid, "session_id": session, "extra_info": {"split": "train"}}, config)
        written.append(place.record(record(prompt, uid, session), buffer))
    assert written == [0, 0, 2, 2]
    lines = [json.loads(line)["turns"][0]["text"] for line in (run_dir / "rollouts" / "step-000001.jsonl").read_text().splitlines()]
    assert lines == ["b/0", "b/1", "a/0", "a/1"]
    groups = read_run(run_dir)["steps"][0]["groups"]
    assert [(g["promptId"], g["lines"]) for g in groups] == [("b", [0, 1]), ("a", [2, 3])]
    assert buffer.pending == {}


def test_a_group_that_can_no_longer_complete_is_forgotten_two_steps_later(tmp_path):
    """A group with a failed rollout never reaches rollout.n records; its partial records are dropped
    (not kept for the life of the run) once the loop sees a step STALE_AFTER_STEPS past it."""
    buffer = GroupBuffer()
    config = OmegaConf.create({"n": 2, "val_kwargs": {"n": 1}})
    place = lambda step, uid, session: EpisodePlace.of(str(tmp_path), {"global_steps": step, "uid": uid, "session_id": session}, config)  # noqa: E731
    assert place(1, "failed-group", 0).record({"turns": []}, buffer) == 0  # its other rollout raised
    assert place(2, "next", 0).record({"turns": []}, buffer) == 0  # one step on: the step-1 group may still finish
    assert len(buffer.pending) == 2 and buffer.dropped == 0
    assert place(3, "later", 0).record({"turns": []}, buffer) == 0
    assert {uid for _, uid in buffer.pending} == {"next", "later"} and buffer.dropped == 1
    assert not (tmp_path / "rollouts" / "step-000001.jsonl").exists()


@pytest.mark.parametrize("kwargs", [{"uid": "u", "session_id": 0}, {"global_steps": 1, "session_id": 0}])
def test_without_veRLs_step_or_group_nothing_is_recorded(tmp_path, kwargs):
    # veRL's legacy trainer (trainer.use_v1=false) passes no global_steps to the loop.
    assert EpisodePlace.of(str(tmp_path), kwargs, OmegaConf.create({"n": 2})) is None
    assert EpisodePlace.of(None, {"global_steps": 1, "uid": "u"}, OmegaConf.create({"n": 2})) is None
