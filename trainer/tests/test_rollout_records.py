"""Rollout records say whether the step trained their group (`kept`), and the groups dynamic sampling
or rl.failed_groups dropped are written too, so the viewer's kept/filtered badge reads what the
trainer did. Real env server, real generated tasks, the micro policy."""
from dataclasses import replace

import torch
from record_schemas import assert_valid_rollout_records, schema_problems

from vistool_trainer.config import PolicyConfig, from_dict
from vistool_trainer.rollouts.env_client import EnvClient
from vistool_trainer.algorithms.dynamic_sampling import has_spread
from vistool_trainer.trainers.grpo import grpo_step
from vistool_trainer.model.policy import Policy
from vistool_trainer.rollouts.rollout import EpisodeOptions, load_tasks, rollout_record
from vistool_trainer.run.run_config import resolve_config


def _step(env_server, vbar_data, client=None, max_turns=1, **rl_overrides):
    client = client or env_server[0]
    tasks = load_tasks(vbar_data[0])
    policy = Policy.create(from_dict(PolicyConfig, {"model": "micro", "micro": {"vocab_size": 400}}), [t["question"] for t in tasks] * 5, 2, "cpu")
    rl = replace(resolve_config({}).rl, prompts_per_step=2, group_size=2, max_new_tokens=6, temperature=1.0, **rl_overrides)
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=rl.lr)
    return grpo_step(policy, optimizer, client, tasks, rl, EpisodeOptions(max_turns=max_turns, presentation={"system_prompt": ""}), seed=4, step=0), rl


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


class ClosesEachBatchsFirstEpisodeBeforeScoring(EnvClient):
    """A real failure: the server answers 404 when asked to score the first episode of every batch."""

    def score_episodes(self, episode_ids, soft=False):
        self.close_episode(episode_ids[0])
        return super().score_episodes(episode_ids, soft)


def test_with_failed_groups_drop_a_group_with_an_unscored_episode_is_replaced_from_another_batch(env_server, vbar_data):
    failing = ClosesEachBatchsFirstEpisodeBeforeScoring(env_server[0].url, env_server[0].token)
    result, rl = _step(env_server, vbar_data, client=failing, dynamic_sampling=False, failed_groups="drop", max_num_gen_batches=2)
    # Two batches of 2 groups × 2 episodes; in each, group 0 holds the unscored episode and is dropped.
    assert result.metrics["sampling/gen_batches"] == 2 and len(result.generated) == 8
    assert [rollout.env_failed for rollout in result.generated] == [True, False, False, False] * 2
    assert [rollout.prompt_id for rollout in result.rollouts] == [result.generated[i].prompt_id for i in (2, 3, 6, 7)]
    assert (result.metrics["env/failed_episodes"], result.metrics["env/failed_groups_dropped"], result.metrics["env/failed_groups_kept"]) == (2, 2, 0)
    assert result.metrics["sampling/kept_groups"] == rl.prompts_per_step and result.metrics["env/item_errors"] == 2
    assert not any("trains" in warning for warning in result.warnings), result.warnings
    # The dropped groups are written too, marked as not trained, with the reason in the failed episode's notes.
    records = [rollout_record(rollout, 1) for rollout in result.generated]
    assert [record["kept"] for record in records] == [False, False, True, True] * 2
    assert any("could not score this episode (HTTP 404)" in note for note in records[4]["reward_notes"])
    # The record says which episode failed (the viewer's "dropped" badge reads it), and the failed
    # episode's record, which the trainer wrote itself (the server had closed it), is a valid one.
    assert [record["env_failed"] for record in records] == [True, False, False, False] * 2
    assert_valid_rollout_records(records)


class ClosesEachBatchsFirstEpisodeBeforeScoringAfterReadingIt(ClosesEachBatchsFirstEpisodeBeforeScoring):
    """As above, keeping the trajectory the server held for that episode just before closing it."""

    def __init__(self, *args):
        super().__init__(*args)
        self.held = []

    def score_episodes(self, episode_ids, soft=False):
        self.held.append(self.trajectory(episode_ids[0]))
        return super().score_episodes(episode_ids, soft)


def test_the_record_of_an_episode_the_server_lost_is_the_one_the_server_held(env_server, vbar_data):
    failing = ClosesEachBatchsFirstEpisodeBeforeScoringAfterReadingIt(env_server[0].url, env_server[0].token)
    result, _ = _step(env_server, vbar_data, client=failing, max_turns=2, dynamic_sampling=False, failed_groups="keep")
    failed = result.generated[0]
    assert failed.env_failed and len(failing.held) == 1
    held = failing.held[0]
    # Two turns of the untrained policy, each answered by the server (its observations are turns too).
    assert held["turns"][0]["role"] == "assistant" and len(held["turns"]) >= 3, held["turns"]
    assert set(failed.trajectory) == set(held) and failed.trajectory == held
    record = rollout_record(failed, 1)
    assert record["env_failed"] is True and record["reward"] == 0.0
    assert any("could not return the trajectory either" in note for note in record["reward_notes"]), record["reward_notes"]
    assert_valid_rollout_records([rollout_record(rollout, 1) for rollout in result.generated])


class ClosesEachBatchsFirstEpisodeBeforeItsFirstTurn(EnvClient):
    """A real failure at a turn: the server answers 404 to the first episode's first step, and then to its score and trajectory."""

    def step_episodes(self, items, soft=False):
        if not getattr(self, "closed", False):
            self.close_episode(items[0]["episode_id"])
            self.closed = True
        return super().step_episodes(items, soft)


def test_the_record_of_an_episode_the_server_could_not_step_ends_in_env_error_and_is_valid(env_server, vbar_data):
    failing = ClosesEachBatchsFirstEpisodeBeforeItsFirstTurn(env_server[0].url, env_server[0].token)
    result, _ = _step(env_server, vbar_data, client=failing, dynamic_sampling=False, failed_groups="drop", max_num_gen_batches=1)
    records = [rollout_record(rollout, 1) for rollout in result.generated]
    assert [record["env_failed"] for record in records] == [True, False, False, False]
    failed = records[0]
    assert failed["end_reason"] == "env_error" and failed["turns"] == [] and failed["answer"] is None
    assert (failed["tool_calls"], failed["tool_errors"], failed["kept"]) == (0, 0, False)
    task = {t["id"]: t for t in load_tasks(vbar_data[0])}[failed["prompt_id"]]
    assert {key: failed["task"][key] for key in ("question", "answer", "kind", "difficulty")} == {key: task[key] for key in ("question", "answer", "kind", "difficulty")}
    assert any("could not take this turn (HTTP 404)" in note for note in failed["reward_notes"]), failed["reward_notes"]
    assert_valid_rollout_records(records)


def test_with_failed_groups_drop_a_step_short_of_groups_warns_and_names_the_failures(env_server, vbar_data):
    failing = ClosesEachBatchsFirstEpisodeBeforeScoring(env_server[0].url, env_server[0].token)
    result, _ = _step(env_server, vbar_data, client=failing, dynamic_sampling=False, failed_groups="drop", max_num_gen_batches=1)
    assert result.metrics["sampling/kept_groups"] == 1 and result.metrics["env/failed_groups_dropped"] == 1
    assert any(warning.startswith("the step trains 1 of 2 groups after 1 generation batches") and "1 dropped for an episode the env server" in warning
               for warning in result.warnings), result.warnings


def test_with_failed_groups_keep_the_unscored_episode_is_trained_at_reward_0_in_its_group(env_server, vbar_data):
    failing = ClosesEachBatchsFirstEpisodeBeforeScoring(env_server[0].url, env_server[0].token)
    result, rl = _step(env_server, vbar_data, client=failing, dynamic_sampling=False, failed_groups="keep", max_num_gen_batches=2)
    assert result.metrics["sampling/gen_batches"] == 1 and len(result.rollouts) == rl.prompts_per_step * rl.group_size
    failed = result.rollouts[0]
    assert failed.env_failed and failed.kept and failed.reward == 0.0
    assert any("could not score this episode (HTTP 404)" in note for note in failed.notes), failed.notes
    assert (result.metrics["env/failed_episodes"], result.metrics["env/failed_groups_dropped"], result.metrics["env/failed_groups_kept"]) == (1, 0, 1)
    assert result.warnings == []
