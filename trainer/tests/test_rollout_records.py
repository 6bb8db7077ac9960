"""Rollout records say whether dynamic sampling kept their group (`kept`), and the dropped groups
are written too, so the viewer's kept/filtered badge reads what the trainer did. Real env server,
real generated tasks, the micro policy."""
from dataclasses import replace

import torch
from record_schemas import assert_valid_rollout_records, schema_problems

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.algorithms.dynamic_sampling import has_spread
from vistool_trainer.trainers.grpo import grpo_step
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.rollout import EpisodeOptions, load_tasks, rollout_record
from vistool_trainer.run.run_config import resolve_config


def _step(env_server, vbar_data, **rl_overrides):
    client, _ = env_server
    tasks = load_tasks(vbar_data[0])
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), [t["question"] for t in tasks] * 5, 2, "cpu")
    rl = replace(resolve_config({}).rl, prompts_per_step=2, group_size=2, max_new_tokens=6, temperature=1.0, **rl_overrides)
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=rl.lr)
    return grpo_step(policy, optimizer, client, tasks, rl, EpisodeOptions(max_turns=1, presentation={"system_prompt": ""}), seed=4, step=0), rl


def _groups(records, size):
    return [records[i:i + size] for i in range(0, len(records), size)]


def test_groups_dynamic_sampling_dropped_are_written_too_with_kept_false(env_server, vbar_data):
    result, rl = _step(env_server, vbar_data, dynamic_sampling=True, dynamic_sampling_metric="reward", max_num_gen_batches=2)
    records = [rollout_record(rollout, 1) for rollout in result.generated]
    # An untrained micro policy writes no valid answer, so every rollout scores the same and
    # dynamic sampling drops every group, drawing both generation batches.
    assert result.metrics["sampling/gen_batches"] == 2 and result.rollouts == []
    assert len(records) == rl.group_size * rl.prompts_per_step * 2
    groups = _groups(records, rl.group_size)
    assert all(not has_spread([record["reward"] for record in group]) for group in groups)
    assert len(groups) == result.metrics["sampling/dropped_groups"]
    assert [record["kept"] for record in records] == [False] * len(records)
    assert_valid_rollout_records(records)


def test_the_record_schema_rejects_what_breaks_the_contract(env_server, vbar_data):
    result, _ = _step(env_server, vbar_data, dynamic_sampling=False)
    record = rollout_record(result.generated[0], 1)
    assert schema_problems("rollout-record.schema.json", record) == []
    assert any("kept" in problem for problem in schema_problems("rollout-record.schema.json", {**record, "kept": "yes"}))
    assert any("'advantages'" in problem for problem in schema_problems("rollout-record.schema.json", {**record, "advantages": 1.0}))


def test_without_dynamic_sampling_every_group_is_kept(env_server, vbar_data):
    result, rl = _step(env_server, vbar_data, dynamic_sampling=False)
    records = [rollout_record(rollout, 1) for rollout in result.generated]
    assert len(records) == rl.group_size * rl.prompts_per_step
    assert all(record["kept"] is True for record in records)
