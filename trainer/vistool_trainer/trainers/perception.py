"""The perception stage of a curriculum (`curriculum.perception_first`): V-Thinker's first stage,
before the interactive ones. The policy is warmed up on point-localisation tasks ("where is point
C?", answered with pixel coordinates; env/tasks/geometry) by SFT on their gold answers, then
evaluated greedily on held-out ones, scored by the env server's distance reward
(env/rewards/point.ts). Its metrics are named perception/*, apart from the interactive stages'.

What this stage never does: write any text itself (the gold answers come from the env server) or
score anything (the server does).
"""
from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

from ..config import RunConfig, SftConfig
from ..model.policy import Policy
from ..rollouts.env_client import EnvClient
from ..rollouts.rollout import EpisodeOptions, Rollout, run_rollouts


def perception_sft_config(config: RunConfig) -> SftConfig:
    """The SFT settings of the perception stage: the run's SFT section with the stage's own budget,
    and none of the tool-trajectory phases (perception gold has no tool turns)."""
    stage = config.curriculum.perception
    return replace(config.sft, enabled=True, steps=stage.steps, max_seconds=stage.max_seconds, batch_size=stage.batch_size, lr=stage.lr,
                   calls_alongside_answers=False, calls_without_images_steps=0, calls_without_images_until_acc=None,
                   after_tool_turns_first=0, no_tool_fraction=0.0, direct_answer_fraction=0.0, tool_trajectories_steps=0,
                   after_tool_until_acc=None, tool_trajectories_until_acc=None, probe_tasks=0)


def perception_metrics(rollouts: list[Rollout]) -> dict[str, float | None]:
    """perception/acc (within the task's tolerance), perception/point_distance_px (mean distance of
    the answers a point could be read from; null when none, as metrics lines write a step with nothing to average), perception/answered (share with a
    readable point), perception/reward and perception/n."""
    distances = [r.components["point_distance_px"] for r in rollouts if "point_distance_px" in r.components]
    n = len(rollouts)
    return {
        "perception/acc": statistics.fmean(float(r.correct) for r in rollouts) if n else None,
        "perception/point_distance_px": statistics.fmean(distances) if distances else None,
        "perception/answered": len(distances) / n if n else None,
        "perception/reward": statistics.fmean(r.reward for r in rollouts) if n else None,
        "perception/n": float(n),
    }


def evaluate_perception(policy: Policy, client: EnvClient, tasks: list[dict[str, Any]], options: EpisodeOptions,
                        max_new_tokens: int) -> dict[str, float | None]:
    """Greedy episodes on held-out perception tasks, in the run's own setting (tools as env.tools says)."""
    rollouts = run_rollouts(policy, client, tasks, 1, options, max_new_tokens, 1.0, greedy=True)
    return perception_metrics(rollouts)
