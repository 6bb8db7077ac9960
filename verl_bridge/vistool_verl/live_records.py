"""Rollout records written by the agent loop while veRL trains, so the rollout viewer follows a
real `main_ppo` run live (docs/VERL.md, "Live rollout records").

Where: `<run_dir>/rollouts/step-NNNNNN.jsonl` for training rollouts, and
`<run_dir>/rollouts/val-step-NNNNNN.jsonl` for validation rollouts. The viewer lists only
`step-N.jsonl` files (env/runs/rollout-index.ts), so validation rollouts are kept but not mixed
into the training steps. The run directory is the loop's `run_dir` key, else `VISTOOL_RUN_DIR`
(which the exported run.sh sets); without one nothing is written.

What veRL tells the loop (veRL 0.9.1's default V1 trainer, `AgentLoopWorkerTQ._run_prompt`, passes
each prompt's fields to `run(**kwargs)`): `global_steps` (the step being generated), `uid` (one per
prompt and step: the GRPO group) and `session_id` (the rollout's index in its group, 0..n-1). It
does not pass whether it is validating (it pops `validate` from the batch first), so a row says so
itself: `extra_info.split == "val"`, which `vistool-verl data convert --to verl --split val` writes
into the val parquet. The legacy trainer (`trainer.use_v1=false`) passes no step, and then nothing
is written.

One record per episode, in docs/CONTRACTS.md's rollout format, plus `group_uid` (veRL's uid) and
`engine: "verl"`. `group` is the rollout's index in its group (veRL's `session_id`), as the
embedded trainer writes it: the viewer starts a new group where that index stops increasing, and
groups consecutive lines of one prompt. So a group's records are written together, when its last
rollout ends, in session order, with one `write` on a file opened with O_APPEND: a reader sees whole
lines and whole groups, whatever the other episodes and workers append meanwhile. (All rollouts of
one uid run in one agent-loop worker process, so one process sees the whole group.) A group is
complete at `rollout.n` records (`val_kwargs.n` when validating): a per-prompt `__rollout_n__`,
which veRL pops before the loop sees it, or a rollout that raised, leaves its group unwritten. Such
a partial group is forgotten once the loop sees a step `STALE_AFTER_STEPS` past it (a group's
rollouts all carry its step, and veRL does not start them that far apart), with a warning, so a long
run does not keep every failed group's records.

No `advantage` and no `kept`: veRL's trainer computes advantages and filters groups after the
rollouts are handed back, in another process; the records leave both fields out rather than guess
(the viewer then shows no advantage and judges "kept" by the group's reward spread).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vistool_trainer.run.run_directory import append_json_lines

VAL_SPLIT = "val"
# A partial group this many steps older than the newest step seen can no longer complete.
STALE_AFTER_STEPS = 2
log = logging.getLogger(__name__)


def rollout_file(run_dir: Path, step: int, validate: bool) -> Path:
    return run_dir / "rollouts" / f"{'val-' if validate else ''}step-{step:06d}.jsonl"


def is_validation_row(kwargs: dict[str, Any]) -> bool:
    extra = kwargs.get("extra_info")
    return isinstance(extra, dict) and extra.get("split") == VAL_SPLIT


def _plain(value: Any) -> Any:
    """numpy scalars (veRL's batches hold them) as plain Python values."""
    return value.item() if hasattr(value, "item") else value


def live_record(step: int, prompt_id: str, session: int, uid: str, trajectory: dict[str, Any], score: dict[str, Any],
                response_tokens: int) -> dict[str, Any]:
    record = dict(trajectory)
    record.update({"step": step, "prompt_id": prompt_id, "group": session, "group_uid": uid, "reward": float(score["reward"]),
                   "reward_breakdown": dict(score.get("components") or {}), "reward_weights": dict(score.get("weights") or {}),
                   "reward_notes": list(score.get("notes") or []), "correct": bool(score.get("correct")),
                   "response_tokens": int(response_tokens), "engine": "verl"})
    return record


@dataclass
class GroupBuffer:
    """The finished rollouts of groups not yet complete, in this worker process (keyed by file and uid)."""
    pending: dict[tuple[Path, str], dict[int, dict[str, Any]]] = field(default_factory=dict)
    #: The step of each pending group, and the newest step seen.
    steps: dict[tuple[Path, str], int] = field(default_factory=dict)
    newest: int = -1
    #: Partial groups forgotten because they could no longer complete.
    dropped: int = 0

    def add(self, path: Path, uid: str, session: int, size: int, record: dict[str, Any], step: int | None = None
            ) -> list[dict[str, Any]] | None:
        """Keeps the record; when its group has `size` records, returns them in session order (and forgets them).
        With `step`, partial groups STALE_AFTER_STEPS older than it are forgotten first."""
        if step is not None:
            self._forget_stale(step)
            self.steps[(path, uid)] = step
        members = self.pending.setdefault((path, uid), {})
        members[session] = record
        if len(members) < size:
            return None
        del self.pending[(path, uid)]
        self.steps.pop((path, uid), None)
        return [members[s] for s in sorted(members)]

    def _forget_stale(self, step: int) -> None:
        self.newest = max(self.newest, step)
        stale = [(key, at) for key, at in self.steps.items() if at <= self.newest - STALE_AFTER_STEPS]
        for key, at in stale:
            members = self.pending.pop(key, {})
            del self.steps[key]
            self.dropped += 1
            log.warning("vistool_agent: group %s of step %d never completed (%d rollout record(s) of it; a rollout failed or "
                        "veRL changed its size); its records are not written", key[1], at, len(members))


BUFFER = GroupBuffer()


@dataclass(frozen=True)
class EpisodePlace:
    """Where an episode's record goes, from what veRL passed the loop; None from `of` when it cannot go anywhere."""
    path: Path
    step: int
    uid: str
    session: int
    group_size: int

    @classmethod
    def of(cls, run_dir: str | None, kwargs: dict[str, Any], rollout_config: Any) -> "EpisodePlace | None":
        if not run_dir or "global_steps" not in kwargs or "uid" not in kwargs:
            return None
        validate = is_validation_row(kwargs)
        step = int(_plain(kwargs["global_steps"]))
        size = rollout_config.get("val_kwargs", {}).get("n", 1) if validate else rollout_config.get("n", 1)
        return cls(path=rollout_file(Path(run_dir), step, validate), step=step, uid=str(_plain(kwargs["uid"])),
                   session=int(_plain(kwargs.get("session_id", 0))), group_size=max(int(size), 1))

    def record(self, record: dict[str, Any], buffer: GroupBuffer = BUFFER) -> int:
        """Adds the episode's record; writes its group when complete. Returns how many lines were written."""
        complete = buffer.add(self.path, self.uid, self.session, self.group_size, record, self.step)
        if complete is None:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_json_lines(self.path, complete)
        return len(complete)
