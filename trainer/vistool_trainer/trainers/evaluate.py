"""Held-out evaluation: greedy episodes with tools and without, through the env server.

Reports accuracy with tools, accuracy without tools, tool-call rate and format validity
(an answer was given and no turn was malformed), as arXiv 2602.01334 asks for every checkpoint;
for the tools arm, how often a call was on target and which scanners fired (target_metrics); and
with `counterfactual`, the tool effect: the tools arm replayed with its tool results withheld
(rollouts/counterfactual.py), each replayed record gaining `counterfactual`.
"""
from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any, Callable

from ..algorithms.tool_effect import ToolEffectPair, tool_effect, tool_effect_metrics
from ..config import EvalConfig
from ..model.policy import Policy
from ..rollouts.counterfactual import replay_withheld
from ..rollouts.env_client import EnvClient
from ..rollouts.rollout import EpisodeOptions, Rollout, run_rollouts
from ..rollouts.target_metrics import call_on_target_rate, call_target_counts, scan_counts
from ..rollouts.turn_metrics import eval_turn_metrics


def evaluation_options(options: EpisodeOptions, max_turns: int | None = EvalConfig.max_turns) -> EpisodeOptions:
    """The episode options a held-out evaluation runs with: the run's, with `eval.max_turns`
    assistant turns when it is set (more than training's: test-time turn scaling, as Mini-o3
    evaluates), env.max_turns when it is null."""
    return options if max_turns is None else replace(options, max_turns=max_turns)


def evaluation_rollouts(policy: Policy, client: EnvClient, tasks: list[dict[str, Any]], options: EpisodeOptions, max_new_tokens: int,
                        own_setting_only: bool = False) -> dict[str, list[Rollout]]:
    """Greedy episodes on `tasks`, one per task and arm: with tools and without when the run has
    tools (only with them when `own_setting_only`, the periodic evaluations during RL), without
    tools otherwise. Both arms read the run's presentation; only the tools switch differs."""
    arms = [("tools", replace(options, tools=True)), ("no_tools", replace(options, tools=False))] if options.tools else [("no_tools", options)]
    if own_setting_only:
        arms = arms[:1]
    return {name: run_rollouts(policy, client, tasks, 1, arm, max_new_tokens, 1.0, greedy=True) for name, arm in arms}


def tools_arm_target_metrics(trajectories: list[dict[str, Any]]) -> dict[str, float]:
    """The tools arm's `eval/call_on_target_rate` (left out when no call had a known target) and
    `eval/scan/<name>` (tasks each scanner fired on), named as `vistool eval` names them."""
    rate = call_on_target_rate(call_target_counts(trajectories))
    out = {f"eval/{key}": value for key, value in scan_counts(trajectories).items()}
    if rate is not None:
        out["eval/call_on_target_rate"] = rate
    return out


def evaluate(policy: Policy, client: EnvClient, tasks: list[dict[str, Any]], options: EpisodeOptions, max_new_tokens: int,
             own_setting_only: bool = False, keep: Callable[[dict[str, list[Rollout]]], None] | None = None,
             counterfactual: bool = EvalConfig.counterfactual) -> dict[str, float]:
    """The evaluation's metrics (evaluation_rollouts' episodes). `keep` receives each arm's
    rollouts, task by task, when every arm has run (the per-task records), the tools arm's with
    their counterfactual replay when `counterfactual`."""
    results: dict[str, float] = {"eval/n": float(len(tasks))}
    by_arm = evaluation_rollouts(policy, client, tasks, options, max_new_tokens, own_setting_only)
    for name, rollouts in by_arm.items():
        results[f"eval/acc_{name}"] = statistics.fmean(float(r.correct) for r in rollouts)
        results[f"eval/correct_{name}"] = float(sum(r.correct for r in rollouts))
        results[f"eval/reward_{name}"] = statistics.fmean(r.reward for r in rollouts)
        results[f"eval/format_valid_{name}"] = statistics.fmean(float(r.format_valid) for r in rollouts)
        if name == "tools":
            results["eval/tool_call_rate"] = statistics.fmean(float(r.tool_calls > 0) for r in rollouts)
            results["eval/tool_error_rate"] = sum(r.tool_errors for r in rollouts) / max(1, sum(r.tool_calls + r.tool_errors for r in rollouts))
            results.update(eval_turn_metrics([r.trajectory for r in rollouts], [r.correct for r in rollouts]))
    if counterfactual and "tools" in by_arm:
        results.update(counterfactual_metrics(policy, client, tasks, by_arm["tools"], options, max_new_tokens))
    if "tools" in by_arm:
        # After the replay: `answered_without_looking` reads the counterfactual the env never sees.
        results.update(tools_arm_target_metrics([r.trajectory for r in by_arm["tools"]]))
    if keep is not None:
        keep(by_arm)
    return results


def counterfactual_metrics(policy: Policy, client: EnvClient, tasks: list[dict[str, Any]], rollouts: list[Rollout], options: EpisodeOptions,
                           max_new_tokens: int) -> dict[str, float]:
    """Replays the tools arm with its results withheld, records each replay on its rollout's
    trajectory, and returns the tool effect's metrics. `correct` is the server's verdict both ways,
    as eval/acc_tools counts it; a rollout not replayed counts as unchanged."""
    pairs = []
    for rollout, replay in zip(rollouts, replay_withheld(policy, client, tasks, rollouts, options, max_new_tokens)):
        if replay is None:
            pairs.append(ToolEffectPair(real=bool(rollout.correct), withheld=bool(rollout.correct), replayed=False, changed=False))
            continue
        rollout.trajectory["counterfactual"] = replay
        if not replay["changed"]:  # the env's scanner of that name (env/episodes/scanners), which scored the record before the replay
            rollout.trajectory["findings"] = [*(rollout.trajectory.get("findings") or []), "answered_without_looking"]
        pairs.append(ToolEffectPair(real=bool(rollout.correct), withheld=replay["correct"], replayed=True, changed=replay["changed"]))
    return tool_effect_metrics(tool_effect(pairs))
