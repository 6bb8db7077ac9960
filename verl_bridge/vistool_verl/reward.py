"""The reward function veRL loads by path (`custom_reward_function.path` = this file,
`name` = compute_score).

The env server scored the episode when the agent loop ended it; the loop put that score into the
extra fields, which veRL 0.9.1's `naive` reward manager (the default, which the export keeps) merges
into `extra_info` (`tool_extra_fields`). Its `dapo` and `gdpo` managers do not merge them, so under
those the score cannot reach this function: it refuses with that reason rather than score 0. So the reward is the
server's, with its breakdown, and nothing is scored twice. The returned dict's other keys are
veRL's reward extra info: logged per rollout and averaged into the step's metrics.
"""
from __future__ import annotations

from typing import Any


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                  **_: Any) -> dict[str, float]:
    score = (extra_info or {}).get("vistool_score")
    if not isinstance(score, dict):
        raise ValueError(f"a {data_source!r} rollout reached vistool's reward function without the env server's score. Either its "
                         "row did not run through the vistool_agent loop (agent_name: vistool_agent in the data, or "
                         "rollout.agent.default_agent_loop=vistool_agent), or the reward manager does not hand the loop's fields "
                         "over: veRL 0.9.1's 'dapo' and 'gdpo' managers leave them out; use reward.reward_manager.name=naive "
                         "(veRL's default, what the export writes)")
    result = {"score": float(score["reward"]), "acc": 1.0 if score.get("correct") else 0.0}
    for name, value in (score.get("components") or {}).items():
        result[f"vistool/{name}"] = float(value)
    trajectory = (extra_info or {}).get("vistool_trajectory") or {}
    result["vistool/tool_calls"] = float(trajectory.get("tool_calls", 0))
    result["vistool/tool_errors"] = float(trajectory.get("tool_errors", 0))
    return result
