"""A GRPO group with a failed episode in veRL 0.9.1's sync replay buffer, through vistool's sampler
(vistool_verl/failed_groups.py): `drop` evicts the group and draws a fresh prompt, `keep` trains the
survivors as veRL does; both count the failed episodes. And what veRL's padding of a short batch
puts into the update.

veRL's own ReplayBuffer code runs; TransferQueue, the storage service it polls, is replaced by an
in-memory table with its three calls (kv_list, kv_clear, kv_batch_get) — the one mock here, at that
service's boundary. The `make verl-e2e VERL_E2E_FAULTS=0.1` run checks the same inside veRL's trainer.
"""
from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

import verl.trainer.ppo.v1.replay_buffer as replay_buffer
from verl.trainer.ppo.padding_utils import construct_minimal_padding_template

from vistool_verl.failed_groups import (FAILED_EPISODES, FAILED_GROUPS_DROPPED, VistoolReplayBuffer, check_failed_groups,
                                        missing_episodes)


class Store:
    """TransferQueue's key-value table, in memory: prompt keys `{uid}` with a status tag, trajectory keys `{uid}_{session}_0`."""

    def __init__(self):
        self.tags: dict[str, dict] = {}
        self.cleared: list[str] = []

    def group(self, uid: str, status: str, sessions: list[int]) -> None:
        self.tags[uid] = {"is_prompt": True, "status": status, "global_steps": 1}
        for session in sessions:
            self.tags[f"{uid}_{session}_0"] = {"status": "success", "global_steps": 1, "seq_len": 10}

    def kv_list(self):
        return {"train": dict(self.tags)}

    def kv_clear(self, partition_id: str, keys: list[str]) -> None:
        self.cleared += list(keys)
        for key in keys:
            self.tags.pop(key, None)

    def kv_batch_get(self, **_):
        raise AssertionError("not read without DAPO")


@pytest.fixture
def store(monkeypatch) -> Store:
    table = Store()
    monkeypatch.setattr(replay_buffer, "tq", table)
    return table


def sampler(failed_groups: str, refill) -> VistoolReplayBuffer:
    return VistoolReplayBuffer(trainer_mode="sync", trainer_config=OmegaConf.create({}), max_off_policy_threshold=None,
                               max_off_policy_strategy="drop", refill_fn=refill, poll_interval=0.0,
                               sampler_kwargs=OmegaConf.create({"failed_groups": failed_groups, "group_size": 4, "train_batch_size": 2}))


def test_drop_evicts_a_group_with_a_failed_episode_and_draws_a_fresh_prompt(store):
    store.group("a", "finished", [0, 1, 2, 3])
    store.group("b", "failure", [0, 2, 3])  # session 1 failed
    refills = []

    def refill(count: int) -> None:
        refills.append(count)
        store.group("c", "finished", [0, 1, 2, 3])

    batch, metrics = sampler("drop", refill).sample(1, "train", 2)
    assert refills == [1]
    assert sorted({key.split("_")[0] for key in batch.keys}) == ["a", "c"]
    assert len(batch.keys) == 8 and not any(key.startswith("b") for key in batch.keys)
    assert {"b", "b_0_0", "b_2_0", "b_3_0"} <= set(store.cleared)
    assert metrics[FAILED_GROUPS_DROPPED] == 1 and metrics[FAILED_EPISODES] == 1 and metrics["env/failed_groups_kept"] == 0
    assert metrics["training/rollout_failure/evicted_samples"] == 1  # veRL's own count agrees


def test_keep_trains_the_survivors_as_veRL_does_and_counts_the_failure(store):
    store.group("a", "finished", [0, 1, 2, 3])
    store.group("b", "failure", [0, 2, 3])
    batch, metrics = sampler("keep", lambda count: pytest.fail("keep draws no fresh prompt")).sample(1, "train", 2)
    assert sorted(batch.keys) == ["a_0_0", "a_1_0", "a_2_0", "a_3_0", "b_0_0", "b_2_0", "b_3_0"]
    assert metrics[FAILED_GROUPS_DROPPED] == 0 and metrics[FAILED_EPISODES] == 1 and metrics["env/failed_groups_kept"] == 1


def test_a_step_without_failures_logs_zeros(store):
    store.group("a", "finished", [0, 1, 2, 3])
    _, metrics = sampler("drop", lambda count: None).sample(1, "train", 1)
    assert (metrics[FAILED_GROUPS_DROPPED], metrics[FAILED_EPISODES]) == (0, 0)


def test_missing_episodes_counts_sessions_not_outputs():
    keys = ["u_0_0", "u_0_1", "u_2_0", "v_1_0"]
    assert missing_episodes(4, keys, "u") == 2 and missing_episodes(4, keys, "v") == 3 and missing_episodes(4, keys, "w") == 4


def test_settings_are_checked_with_what_to_write():
    with pytest.raises(ValueError, match="failed_groups is 'skip'; it must be one of drop, keep"):
        check_failed_groups("skip")
    with pytest.raises(ValueError, match="group_size must be rollout.n"):
        VistoolReplayBuffer(trainer_mode="sync", trainer_config=OmegaConf.create({}), max_off_policy_threshold=None,
                            max_off_policy_strategy="drop", refill_fn=lambda n: None, sampler_kwargs=OmegaConf.create({}))


def test_veRLs_padding_row_trains_no_token_and_carries_no_reward():
    """What `upsample_batch_to_divisible_size` appends to a short batch (a kept failed group leaves one short):
    one EOS response token under response_mask 0, reward 0, rollout log-prob 0, no images, flagged as padding."""
    source = {"prompts": torch.tensor([5, 6, 7]), "responses": torch.tensor([8, 9]), "input_ids": torch.tensor([5, 6, 7, 8, 9]),
              "attention_mask": torch.ones(5, dtype=torch.int64), "position_ids": torch.zeros(3, 5, dtype=torch.int64),
              "response_mask": torch.tensor([1, 1]), "loss_mask": torch.tensor([1, 1]), "rm_scores": torch.tensor([0.0, 1.0]),
              "rollout_log_probs": torch.tensor([-0.5, -0.2]), "multi_modal_inputs": {"pixel_values": torch.ones(4, 3)}, "uid": "a"}
    row, tag = construct_minimal_padding_template(source, {"seq_len": 5}, eos_token_id=3)
    assert row["response_mask"].tolist() == [0] and row["loss_mask"].tolist() == [0]
    assert row["rm_scores"].tolist() == [0.0] and row["rollout_log_probs"].tolist() == [0.0]
    assert row["responses"].tolist() == [3] and row["multi_modal_inputs"] == {}
    assert row["position_ids"].shape == (3, 128)  # M-RoPE's three rows, text positions
    assert tag["is_padding"] is True and tag["seq_len"] == 128
