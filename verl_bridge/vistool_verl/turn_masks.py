"""Which of an episode's turns the update trains (run config `rl.train_turns`, agent_loop.yaml
`train_turns`).

'all' trains every assistant turn; the loop already gives observations mask 0. 'final' is
VTool-R1 v2's rule (recipe/vtool/vtool.py in VTool-R1/training-v2: a first turn its parser reads
as a tool attempt gets mask 0 and log-prob 0, the observation mask 0, and only the answer after it
is trained): a turn after which the env server went on — a tool call, accepted or refused, answered
with an observation — is masked like an observation, and the turn that ends the episode keeps its
mask. A tool turn whose observation did not fit the response budget is the last one in the
sequence and stays masked, as in the source (it breaks out with the tool turn already masked).
"""
from __future__ import annotations

TRAIN_TURNS = ("all", "final")


def check_train_turns(value: object) -> str:
    """agent_loop.yaml's `train_turns`, refused by name when it is not one the loop knows."""
    text = str(value)
    if text not in TRAIN_TURNS:
        raise ValueError(f"agent_loop.yaml train_turns is {value!r}; it must be one of {', '.join(TRAIN_TURNS)} (run config "
                         "rl.train_turns; export the recipe again with `vistool config export --to verl`)")
    return text


def masked_turns(mask: list[int], spans: list[tuple[int, int]], continued: list[bool], train_turns: str) -> list[int]:
    """The response mask with the turns `train_turns` leaves out set to 0. `spans[i]` is turn i's
    [start, end) in the response, `continued[i]` whether the env went on after it (a turn the loop
    ended at its own limits counts as ended)."""
    if train_turns == "all":
        return mask
    if len(spans) < len(continued):
        raise ValueError(f"{len(continued)} turns were played but only {len(spans)} lie in the response")
    out = list(mask)
    for (start, end), went_on in zip(spans, continued):
        if went_on:
            out[start:end] = [0] * (end - start)
    return out
