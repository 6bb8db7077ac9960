"""Mini-o3's over-turn masking (`rl.mask_truncated_turns`): an episode that hit the turn cap
without an answer contributes no loss, instead of the zero reward pushing its turns down.

What is followed, from Mini-o3 (Lai et al., arXiv 2509.07969, "over-turn masking"; the abstract:
it "prevents penalization of over-turn responses (those that hit the maximum number of turns)
during reinforcement learning"): the group's advantages are computed as in vanilla GRPO, over
every response of the group, the truncated ones with the reward the env gave them; then a
per-response mask leaves the truncated responses out of the policy objective, so their tokens
carry no gradient and do not count in the token (or sequence) totals the loss is averaged over.
The advantages of the episodes that answered are therefore the ones GRPO would have given them
unmasked: masking changes which losses are summed, never the group's mean or spread.

In vistool a trajectory hit the cap when the env server ended it with `end_reason` 'max_turns'
(env/episodes/episode.ts finishes an episode that way only when its last allowed turn gave no
answer: an answer on that turn ends it with 'answer'). Other ends are not over-turn and are
trained as before: 'max_tool_calls' and 'max_images' (other caps, which Mini-o3 does not
name), 'env_error' (rl.failed_groups decides), null (the trainer stopped the episode itself,
e.g. the sampler's context limit). Pure: no torch, no I/O.
"""
from __future__ import annotations

from collections.abc import Sequence

# The record's end_reason of an episode that used every turn without answering
# (schemas/rollout-record.schema.json).
OVER_TURN_END_REASON = "max_turns"
# Kept episodes whose loss the step masked (a count: ranks add it up; 0 when the option is off).
TRUNCATED_MASKED = "rollout/truncated_masked"


def over_turn_mask(end_reasons: Sequence[str | None], enabled: bool) -> list[bool]:
    """Per episode, True when its loss is masked: `enabled` and it ended on the turn cap."""
    return [enabled and reason == OVER_TURN_END_REASON for reason in end_reasons]


def masked_loss_mask(loss_mask: Sequence[int], masked: bool) -> list[int]:
    """A training sequence's loss mask with the episode's over-turn mask applied: all zeros when
    masked (no token of it is in the loss or in the totals), unchanged otherwise."""
    return [0] * len(loss_mask) if masked else list(loss_mask)
