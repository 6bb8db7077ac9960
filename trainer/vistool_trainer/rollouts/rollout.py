"""The rollout loop: the policy writes a turn, the env server parses it, runs the tool and returns
the edited image, the policy continues, up to the episode's limits; then the server scores it.

Each turn the policy reads the prompt the server presents (docs/CONTRACTS.md, Presentation), with
its own earlier turns as the exact token ids it sampled, so the training context equals the
rollout context (OpenThinkIMG re-tokenises decoded text instead). This module never parses tool
calls, computes rewards or writes text the policy reads: the server does all three.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..model.conversation import Conversation
from ..model.policy import Policy
from .env_client import EnvClient
from .presentation import EpisodeOptions, continue_conversation, opened_conversation
from .token_view import with_token_text
from .turn_sampler import TurnSampler

__all__ = ["EpisodeOptions", "Rollout", "RolloutTiming", "run_rollouts", "rollout_record", "load_tasks"]


@dataclass
class Rollout:
    prompt_id: str
    group: int
    # What the policy read before each turn (the server's prompts) and what it wrote.
    conversation: Conversation
    reward: float = 0.0
    components: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    # Why the reward is what it is (a judge failure, a disagreement, the no-tool factor), from the server.
    notes: list[str] = field(default_factory=list)
    correct: bool = False
    trajectory: dict[str, Any] = field(default_factory=dict)
    response_tokens: int = 0
    turns: int = 0
    advantage: float = 0.0
    # Whether the step trained this rollout's group; False for a group dynamic sampling dropped (no
    # spread in its metric), one dropped for a failed episode (rl.failed_groups 'drop'), or one
    # drawn after the step already had enough groups.
    kept: bool = False
    # The env server could not take one of this episode's turns or score it (RolloutTiming.env_errors
    # counts each such error): the episode ended there, or scored 0, with the reason in its notes.
    # rl.failed_groups decides whether its group is trained.
    env_failed: bool = False
    # The score response's `metrics` (the server's cumulative judge/* counters), when present.
    score_metrics: dict[str, float] = field(default_factory=dict)
    # Per assistant turn: sampled tokens, log-probs, entropies, loss mask (token_view.py); None when not trained on.
    token_view: list[dict[str, Any]] | None = None
    # Each image of the episode loaded once, by ref (every prompt names them again).
    images: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as its last turn saw it."""
        return self.conversation.messages

    @property
    def tool_calls(self) -> int:
        return int(self.trajectory.get("tool_calls", 0))

    @property
    def tool_errors(self) -> int:
        return int(self.trajectory.get("tool_errors", 0))

    @property
    def format_valid(self) -> bool:
        if self.trajectory.get("answer") is None:
            return False
        return not any(error.get("class") == "E1" for turn in self.trajectory.get("turns", []) for error in turn.get("errors", []) or [])


@dataclass
class RolloutTiming:
    gen_s: float = 0.0
    env_s: float = 0.0
    # Steps and scores the env server could not carry out (it says why): such a rollout ends or
    # scores 0 with the reason in its notes, and the run goes on.
    env_errors: int = 0
    # Episodes ended because the sampler could not continue them (TurnSampler.refusal): scored as
    # they stood, the reason in their notes.
    ended_early: int = 0


def _task_payload(task: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in task.items() if not key.startswith("_")}


def run_rollouts(
    policy: Policy,
    client: EnvClient,
    tasks: list[dict[str, Any]],
    group_size: int,
    options: EpisodeOptions,
    max_new_tokens: int,
    temperature: float,
    greedy: bool = False,
    generation_batch: int = 64,
    timing: RolloutTiming | None = None,
    sampler: TurnSampler | None = None,
    forced: list[list[dict[str, Any]]] | None = None,
) -> list[Rollout]:
    """`group_size` episodes per task; returns rollouts ordered task by task, group by group.
    `sampler` writes the turns (turn_sampler.py); None: the policy's own transformers sampler.
    `forced[k]`: assistant replies episode k takes as its first turns instead of sampling them,
    exactly as given (their text and the token ids they were sampled as): the counterfactual
    replay's prefix (counterfactual.py)."""
    sampler = sampler or policy
    timing = timing or RolloutTiming()
    started = time.perf_counter()
    items = []
    for task in tasks:
        for _ in range(group_size):
            items.append({"task": _task_payload(task), "task_dir": task["_task_dir"], "options": options.request()})
    opened = client.start_episodes(items)
    rollouts: list[Rollout] = []
    episode_ids: list[str] = []
    # Each episode's record as the server's step answers tell it, in case the server cannot give
    # its trajectory at the end (_opened_record, _add_step).
    told: list[dict[str, Any]] = []
    for index, result in enumerate(opened):
        task = tasks[index // group_size]
        images: dict[str, Any] = {}
        rollouts.append(Rollout(prompt_id=str(task["id"]), group=index % group_size,
                                conversation=opened_conversation(result, images), images=images))
        episode_ids.append(result["episode_id"])
        told.append(_opened_record(task, result))
    timing.env_s += time.perf_counter() - started
    active = list(range(len(rollouts)))
    refusal = getattr(sampler, "refusal", None)
    try:
        while active:
            if refusal is not None:
                # A prompt the sampler cannot continue (vLLM: too many images or tokens for the engine)
                # ends its episode here, scored as it stands, instead of stopping the run.
                kept = []
                for i in active:
                    reason = refusal(rollouts[i].conversation.prompt, max_new_tokens)
                    if reason is None:
                        kept.append(i)
                    else:
                        rollouts[i].notes.append(f"episode ended before turn {rollouts[i].turns + 1}: {reason}")
                        timing.ended_early += 1
                active = kept
                if not active:
                    break
            started = time.perf_counter()
            replies = _next_replies(sampler, [rollouts[i] for i in active],
                                    [forced[i] if forced is not None else [] for i in active], max_new_tokens, temperature, greedy, generation_batch)
            timing.gen_s += time.perf_counter() - started
            started = time.perf_counter()
            steps = client.step_episodes([{"episode_id": episode_ids[i], "text": _reply_text(reply)} for i, reply in zip(active, replies)], soft=True)
            still_active = []
            for i, reply, step in zip(active, replies, steps):
                rollout = rollouts[i]
                rollout.response_tokens += len(reply.get("token_ids") or [])
                rollout.turns += 1
                if "error" in step:
                    rollout.conversation.replies.append(reply)
                    timing.env_errors += 1
                    rollout.env_failed = True
                    told[i]["end_reason"] = ENV_ERROR
                    rollout.notes.append(f"the env server could not take this turn (HTTP {step['error'].get('status')}): {step['error'].get('message')}")
                    continue
                _add_step(told[i], reply, step)
                continue_conversation(rollout.conversation, reply, step, rollout.images)
                if not step["done"]:
                    still_active.append(i)
            active = still_active
            timing.env_s += time.perf_counter() - started
        started = time.perf_counter()
        scores = client.score_episodes(episode_ids, soft=True)
        for rollout, episode_id, score, record in zip(rollouts, episode_ids, scores, told):
            if "error" in score:
                timing.env_errors += 1
                rollout.env_failed = True
                rollout.reward, rollout.correct, rollout.components = 0.0, False, {}
                rollout.notes.append(f"the env server could not score this episode (HTTP {score['error'].get('status')}): "
                                     f"{score['error'].get('message')}; reward 0")
                try:
                    rollout.trajectory = client.trajectory(episode_id)
                except Exception as error:
                    rollout.trajectory = record
                    rollout.notes.append(f"the env server could not return the trajectory either ({error}): the record holds "
                                         "the turns its step answers reported")
                continue
            rollout.reward = float(score["reward"])
            rollout.components = {key: float(value) for key, value in (score.get("components") or {}).items()}
            rollout.weights = {key: float(value) for key, value in (score.get("weights") or {}).items()}
            rollout.correct = bool(score.get("correct"))
            rollout.notes.extend(str(note) for note in score.get("notes") or [])
            rollout.score_metrics = {key: float(value) for key, value in (score.get("metrics") or {}).items()}
            rollout.trajectory = client.trajectory(episode_id)
        timing.env_s += time.perf_counter() - started
    finally:
        for episode_id in episode_ids:
            try:
                client.close_episode(episode_id)
            except Exception:
                pass  # an expired episode is already gone
    return rollouts


# The end_reason of a record the trainer wrote itself because the env server could not take one of
# the episode's turns (schemas/rollout-record.schema.json).
ENV_ERROR = "env_error"


def _opened_record(task: dict[str, Any], opened: dict[str, Any]) -> dict[str, Any]:
    """An episode's record as far as its start tells it, begun as the env begins its own
    (env/episodes/episode.ts): the task summary (a kind or difficulty the task left out is what the
    server took it as: the start answer's `kind`, difficulty 0, env/server/task-input.ts), its image
    the first image of the opening prompt (the task image: every view shows the latest image), and
    the opening prompt, images by ref."""
    prompt = opened["observation"]["prompt"]
    opening = [{"role": message["role"], "content": [_opening_part(part) for part in _parts(message)]}
               for message in prompt if message.get("role") in ("system", "user")]
    image = next((part["ref"] for message in prompt for part in _parts(message) if part.get("type") == "image"), None)
    summary = {"question": task.get("question"), "answer": task.get("answer"), "kind": opened.get("kind", task.get("kind", "chart")),
               "difficulty": task.get("difficulty", 0), "image": image}
    return {"prompt_id": str(task["id"]), "task": {key: value for key, value in summary.items() if value is not None},
            "opening": opening, "turns": [], "answer": None, "end_reason": None, "tool_calls": 0, "tool_errors": 0}


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [part for part in content or [] if isinstance(part, dict)]


def _opening_part(part: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image", "ref": part["ref"]} if part.get("type") == "image" else {"type": "text", "text": part.get("text", "")}


def _add_step(record: dict[str, Any], reply: dict[str, Any], step: dict[str, Any]) -> None:
    """The turn the server took, as its answer reports it: the assistant turn (the reply's text and
    the server's `info`: calls, errors, answer) and the observation it added, text and image refs,
    as the policy read it (a view that hides earlier images shows their stand-in text there)."""
    info = step.get("info") or {}
    calls = list(info.get("calls") or [])
    record["turns"].append({"role": "assistant", "text": _reply_text(reply), "calls": calls,
                            "errors": list(info.get("errors") or []), "answer": info.get("answer")})
    record["tool_calls"] += sum(1 for call in calls if call.get("ok"))
    record["tool_errors"] += sum(1 for call in calls if not call.get("ok"))
    for message in (step.get("observation") or {}).get("messages") or []:
        if message.get("role") not in ("tool", "user"):
            continue
        parts = _parts(message)
        record["turns"].append({"role": message["role"],
                                "text": "\n".join(part.get("text", "") for part in parts if part.get("type") == "text"),
                                "images": [part["ref"] for part in parts if part.get("type") == "image"]})
    if step.get("done"):
        record["answer"] = info.get("answer")
        record["end_reason"] = info.get("end_reason")


def _next_replies(sampler: TurnSampler, rollouts: list[Rollout], forced: list[list[dict[str, Any]]], max_new_tokens: int,
                  temperature: float, greedy: bool, generation_batch: int) -> list[dict[str, Any]]:
    """Each episode's next assistant reply: its forced reply for this turn when it has one (a copy,
    as given), else a turn the sampler writes now."""
    replies: list[dict[str, Any] | None] = [dict(f[r.turns]) if r.turns < len(f) else None for r, f in zip(rollouts, forced)]
    wanted = [k for k, reply in enumerate(replies) if reply is None]
    for offset in range(0, len(wanted), generation_batch):
        chunk = wanted[offset:offset + generation_batch]
        for k, turn in zip(chunk, sampler.sample_turns([rollouts[k].conversation.prompt for k in chunk], max_new_tokens, temperature, greedy)):
            replies[k] = {"role": "assistant", "content": [{"type": "text", "text": turn.text}],
                          "token_ids": turn.token_ids, "truncated": turn.truncated,
                          **({"sampler_log_probs": turn.log_probs} if turn.log_probs is not None else {})}
    return [reply for reply in replies if reply is not None]


def _reply_text(reply: dict[str, Any]) -> str:
    content = reply.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict) and part.get("type") == "text")


def rollout_record(rollout: Rollout, step: int, decode: Callable[[int], str] | None = None) -> dict[str, Any]:
    """The rollout-file line (docs/CONTRACTS.md): the server's trajectory plus step/group/advantage,
    `kept` (the viewer's kept/filtered badge reads it rather than guessing from the reward spread)
    and `env_failed` (the viewer says a group was dropped for a failed episode)."""
    record = dict(rollout.trajectory)
    record.update({"step": step, "prompt_id": rollout.prompt_id, "group": rollout.group, "reward": rollout.reward,
                   "reward_breakdown": rollout.components, "reward_weights": rollout.weights, "reward_notes": rollout.notes, "correct": rollout.correct,
                   "advantage": rollout.advantage,
                   "kept": rollout.kept, "env_failed": rollout.env_failed})
    if rollout.token_view is not None and decode is not None:
        record["token_view"] = with_token_text(rollout.token_view, decode)
    return record


def load_tasks(path: Path) -> list[dict[str, Any]]:
    tasks = []
    directory = str(Path(path).resolve().parent)
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number} is not JSON: {error}") from None
        task["_task_dir"] = directory
        tasks.append(task)
    if not tasks:
        raise ValueError(f"{path} holds no tasks")
    return tasks
