"""The reward function veRL loads by path (`custom_reward_function.path` = this file,
`name` = compute_score).

The env server scored the episode when the agent loop ended it; the loop put that score into the
extra fields, which veRL's reward managers merge into `extra_info`. So the reward is the
server's, with its breakdown, and nothing is scored twice. The returned dict's other keys are
veRL's reward extra info: logged per rollout and averaged into the step's metrics.
"""
from __future__ import annotations

from typing import Any


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                  **_: Any) -> dict[str, float]:
    score = (extra_info or {}).get("vistool_score")
    if not isinstance(score, dict):
        raise ValueError(f"a {data_source!r} rollout reached vistool's reward function without the env server's score: "
                         "its row must run through the vistool_agent loop (agent_name: vistool_agent in the data, or "
                         "rollout.agent.default_agent_loop=vistool_agent)")
    result = {"score": float(score["reward"]), "acc": 1.0 if score.get("correct") else 0.0}
    for name, value in (score.get("components") or {}).items():
        result[f"vistool/{name}"] = float(value)
    trajectory = (extra_info or {}).get("vistool_trajectory") or {}
    result["vistool/tool_calls"] = float(trajectory.get("tool_calls", 0))
    result["vistool/tool_errors"] = float(trajectory.get("tool_errors", 0))
    return result
