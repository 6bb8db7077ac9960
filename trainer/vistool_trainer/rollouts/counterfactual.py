"""The counterfactual replay of the held-out evaluation's tools arm: did the tool's result change
the answer? (docs/CONTRACTS.md, Counterfactual replay; `vistool eval --counterfactual` does the same
in env/eval/counterfactual.ts.)

Each tools-arm episode with a successful call is played again on the same task with the env
server's `withhold_results` (calls run as usual, the observation keeps its text but shows the
unedited image). Its original replies are forced up to and including the turn of the first
successful call — exactly as written, their text and the token ids they were sampled as — and the
policy then continues greedily. Later turns are regenerated: after the call the policy reads
another image than it did, and its original later turns answered what it no longer sees.
The replay is scored by the env server, as the real episode was.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..model.policy import Policy
from .answer_text import answer_text, grid_answer
from .env_client import EnvClient
from .presentation import EpisodeOptions
from .rollout import Rollout, run_rollouts


def forced_turns(trajectory: dict[str, Any]) -> int | None:
    """How many assistant turns a replay forces: up to and including the first with a successful
    call; None when no call succeeded (nothing to withhold)."""
    assistants = [turn for turn in trajectory.get("turns", []) if turn.get("role") == "assistant"]
    for index, turn in enumerate(assistants):
        if any(call.get("ok") for call in turn.get("calls") or []):
            return index + 1
    return None


def replay_withheld(policy: Policy, client: EnvClient, tasks: list[dict[str, Any]], rollouts: list[Rollout], options: EpisodeOptions,
                    max_new_tokens: int) -> list[dict[str, Any] | None]:
    """Per tools-arm rollout (one per task, in `tasks` order): its counterfactual
    {answer, correct, changed}, or None when it was not replayed."""
    chosen = [(k, count) for k, rollout in enumerate(rollouts) if (count := forced_turns(rollout.trajectory)) is not None]
    replays = run_rollouts(policy, client, [tasks[k] for k, _ in chosen], 1, replace(options, tools=True, withhold_results=True),
                           max_new_tokens, 1.0, greedy=True, forced=[rollouts[k].conversation.replies[:count] for k, count in chosen])
    results: list[dict[str, Any] | None] = [None] * len(rollouts)
    for (k, _), replay in zip(chosen, replays):
        answer = replay.trajectory.get("answer")
        results[k] = {"answer": answer_text(answer), "correct": bool(replay.correct),
                      "changed": grid_answer(rollouts[k].trajectory.get("answer")) != grid_answer(answer)}
    return results
