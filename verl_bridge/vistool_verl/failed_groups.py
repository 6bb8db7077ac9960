"""What a GRPO group with a failed episode does in veRL 0.9.1's v1 trainer, and the counts per step.

An episode fails when the env server cannot take a turn or score it (`EnvServerError` in the agent
loop: an expired episode, a lost server, a tool that broke). veRL's agent-loop worker
(`AgentLoopWorkerTQ._run_prompt`) then tags the prompt's group `failure` once every session has
settled; the failed session put nothing into TransferQueue, its siblings did. What veRL 0.9.1's
sync replay buffer (`verl/trainer/ppo/v1/replay_buffer.py`) does with such a group:

- by default the group stays sampleable: its surviving rollouts are trained, with GRPO advantages
  over fewer members, and only a group with no rollout at all is refilled, and only with
  `trainer.v1.sampler.sync_refill_failed_groups`;
- the batch is then short of `train_batch_size × n` rows, and `_balance_batch` pads it to a multiple
  of the mini-batch (`padding_utils.upsample_batch_to_divisible_size`): each padding row is 127 EOS
  prompt tokens and one EOS response token with `response_mask` 0, `rm_scores` 0 and rollout
  log-prob 0, in a uid of its own (`pad…`), tagged `is_padding`. With a response mask of 0 it adds
  no token to the policy loss, and a group of one gets advantage 0; it does count as a row (in a
  sequence-mean loss mode, a row with no tokens; and in the micro-batch split).

`VistoolReplayBuffer` (the run's `trainer.v1.sampler.custom_sampler`) makes the choice a setting,
`failed_groups` in `trainer.v1.sampler.sampler_kwargs`:
- `drop` (the default): a group with any failed episode is evicted whole and a fresh prompt is
  drawn in its place (veRL's own refill path). Failures are not independent of what the policy
  did — only an episode that calls a tool can fail in the tool, one that spends its turns can
  expire — so the survivors are a biased sample of the group, and their advantages would be
  measured against a baseline that left out exactly the failing behaviour. The cost is one more
  prompt's rollouts.
- `keep`: veRL's own behaviour (survivors trained, batch padded).

The run config's `rl.failed_groups` chooses it (the export writes it here). Both log, per step,
`env/failed_episodes` (episodes of this step's failed groups, evicted or trained, that left no
rollout), `env/failed_groups_dropped` (groups evicted for a failure; always 0 with `keep`) and
`env/failed_groups_kept` (failed groups trained; 0 with `drop`): the names vistool's own trainer
logs, from vistool_trainer/algorithms/failed_groups.py.
`group_size` (rollout.n) must be in sampler_kwargs: veRL tells a sampler neither `n` nor
`algorithm.filter_groups`, so DAPO's group filter is passed as `filter_groups_metric` there too.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer

from vistool_trainer.algorithms.failed_groups import (DEFAULT_FAILED_GROUPS, FAILED_EPISODES, FAILED_GROUPS, FAILED_GROUPS_DROPPED,
                                                      FAILED_GROUPS_KEPT)

from .verl_internals import check as check_verl_internals

__all__ = ["DEFAULT_FAILED_GROUPS", "FAILED_EPISODES", "FAILED_GROUPS", "FAILED_GROUPS_DROPPED", "FAILED_GROUPS_KEPT",
           "VistoolReplayBuffer", "check_failed_groups", "missing_episodes"]

# The private ReplayBuffer methods this sampler overrides exist, or the import stops naming them.
check_verl_internals("sampler")


def check_failed_groups(value: Any) -> str:
    if value not in FAILED_GROUPS:
        raise ValueError(f"trainer.v1.sampler.sampler_kwargs.failed_groups is {value!r}; it must be one of {', '.join(FAILED_GROUPS)} "
                         "(drop: a group with a failed episode is replaced by a fresh prompt; keep: veRL's default, its "
                         "surviving rollouts are trained). The export writes it from the run config's rl.failed_groups")
    return str(value)


def missing_episodes(group_size: int, trajectory_keys: list[str], uid: str) -> int:
    """Episodes of group `uid` that left no rollout: `group_size` less the sessions that did (keys
    are `{uid}_{session}_{output}`, one or more outputs per session)."""
    sessions = {key.split("_")[1] for key in trajectory_keys if key.split("_")[0] == uid}
    return max(int(group_size) - len(sessions), 0)


def _plain(value: Any) -> dict[str, Any]:
    try:
        from omegaconf import DictConfig, OmegaConf

        if isinstance(value, DictConfig):
            return dict(OmegaConf.to_container(value, resolve=True))
    except ImportError:  # omegaconf comes with veRL
        pass
    return dict(value or {})


class VistoolReplayBuffer(ReplayBuffer):
    """veRL 0.9.1's sync replay buffer with a setting for groups with a failed episode (module doc)."""

    def __init__(self, *args: Any, sampler_kwargs: Any = None, train_batch_size: int | None = None, **kwargs: Any):
        options = _plain(sampler_kwargs)
        self.failed_groups = check_failed_groups(options.get("failed_groups", DEFAULT_FAILED_GROUPS))
        if not isinstance(options.get("group_size"), int) or options["group_size"] < 1:
            raise ValueError("trainer.v1.sampler.sampler_kwargs.group_size must be rollout.n (veRL does not tell a sampler n); "
                             f"it is {options.get('group_size')!r}")
        self.group_size = int(options["group_size"])
        metric = options.get("filter_groups_metric") or None
        drop = self.failed_groups == "drop"
        if kwargs.get("trainer_mode", args[0] if args else "sync") != "sync":
            raise ValueError("VistoolReplayBuffer is veRL's sync sampler (trainer.v1.trainer_mode=sync); the async trainers "
                             "already evict every failed group")
        # veRL refills an exact prompt count only with single-prompt dataloader fetches, which it sets
        # (data.gen_batch_size=1) when trainer.v1.sampler.sync_refill_failed_groups is on or DAPO is.
        kwargs.update(filter_groups_metric=metric, train_batch_size=train_batch_size or options.get("train_batch_size"),
                      gen_batch_size=1 if (metric or drop) else options.get("train_batch_size"),
                      max_inflight_gen_batches=int(options.get("max_inflight_gen_batches", 1)),
                      sync_refill_failed_groups=drop)
        super().__init__(*args, sampler_kwargs=sampler_kwargs, **kwargs)

    def _terminal_eviction_reasons(self, global_steps: int, partition_id: str) -> tuple[set[str], set[str], set[str], Counter]:
        stale, dapo, failed, counts = super()._terminal_eviction_reasons(global_steps, partition_id)
        if partition_id != "val" and self.failed_groups == "drop":
            failed = set(self.failure_keys[partition_id])  # veRL's own takes only those with no rollout at all
        return stale, dapo, failed, counts

    def _evict_terminal_groups(self, global_steps: int, partition_id: str,
                               eviction_reasons: tuple[set[str], set[str], set[str], Counter]) -> tuple[set[str], int, int, dict]:
        failed = eviction_reasons[2]
        keys = list(self.partitions[partition_id])
        missing = sum(missing_episodes(self.group_size, keys, uid) for uid in failed)
        evicted, stale, dapo, metrics = super()._evict_terminal_groups(global_steps, partition_id, eviction_reasons)
        if partition_id != "val" and failed:
            metrics = {**metrics, FAILED_GROUPS_DROPPED: len(failed), FAILED_EPISODES: missing}
        return evicted, stale, dapo, metrics

    def sample(self, global_steps: int, partition_id: str, batch_size: int) -> tuple[Any, dict]:
        batch, metrics = super().sample(global_steps, partition_id, batch_size)
        if partition_id == "val":
            return batch, metrics
        metrics = dict(metrics)
        dropped = int(metrics.get(FAILED_GROUPS_DROPPED, 0))
        # Failed groups that were kept: in the batch, short of their failed sessions.
        uids = {key.split("_")[0] for key in batch.keys}
        kept_failed = [uid for uid in uids if missing_episodes(self.group_size, list(batch.keys), uid) > 0]
        kept_missing = sum(missing_episodes(self.group_size, list(batch.keys), uid) for uid in kept_failed)
        metrics[FAILED_GROUPS_DROPPED] = dropped
        metrics[FAILED_EPISODES] = int(metrics.get(FAILED_EPISODES, 0)) + kept_missing
        metrics[FAILED_GROUPS_KEPT] = len(kept_failed)
        return batch, metrics
