"""What a GRPO group does when one of its episodes failed at the env server (`rl.failed_groups`), and
the names its counts are logged under.

Both engines import these names: vistool's trainer (trainers/grpo.py) and vistool's sampler for veRL
(verl_bridge/vistool_verl/failed_groups.py), so a dashboard reads the same three metrics whichever
engine ran. Pure, with no torch: the bridge imports it inside veRL's workers.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ..config import schema_default, schema_node

Episode = TypeVar("Episode")

FAILED_GROUPS: tuple[str, ...] = tuple(schema_node("rl.failed_groups")["enum"])
DEFAULT_FAILED_GROUPS: str = schema_default("rl.failed_groups")
# Episodes of the step's failed groups that were dropped or trained.
FAILED_EPISODES = "env/failed_episodes"
# Groups left out of the update because an episode failed (0 with `keep`).
FAILED_GROUPS_DROPPED = "env/failed_groups_dropped"
# Groups trained although an episode failed (0 with `drop`).
FAILED_GROUPS_KEPT = "env/failed_groups_kept"


def has_failed_episode(group: Sequence[Episode], failed: Callable[[Episode], bool]) -> bool:
    return any(failed(episode) for episode in group)


def failed_group_metrics(dropped: Sequence[Sequence[Episode]], trained: Sequence[Sequence[Episode]],
                         failed: Callable[[Episode], bool]) -> dict[str, float]:
    """The step's three counts from the groups dropped for a failed episode and the groups trained.
    A failed group dynamic sampling dropped for its flat rewards under `keep` is in neither, as veRL's
    sampler counts only the groups it evicted for a failure and the ones it trained."""
    kept_failed = [group for group in trained if has_failed_episode(group, failed)]
    return {
        FAILED_EPISODES: float(sum(failed(episode) for group in [*dropped, *kept_failed] for episode in group)),
        FAILED_GROUPS_DROPPED: float(len(dropped)),
        FAILED_GROUPS_KEPT: float(len(kept_failed)),
    }
