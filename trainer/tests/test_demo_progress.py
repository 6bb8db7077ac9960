"""What the demo shows of an arm while it runs (run/demo.py `_follow`): its newest SFT or RL
step, and before the first step how far the warm-up's gold replay has got."""
import io
import json
from types import SimpleNamespace

from vistool_trainer.run.demo import ArmProcess, _follow


def _followed(*events):
    arm = ArmProcess(arm="tools", process=SimpleNamespace(stdout=io.StringIO("".join(json.dumps(e) + "\n" for e in events))))
    said: list[str] = []
    _follow(arm, said.append)
    return arm, said


def test_the_gold_replay_shows_its_count_until_the_first_step_replaces_it():
    arm, _ = _followed({"event": "stage", "stage": "sft"},
                       {"event": "progress", "stage": "sft", "what": "gold conversations", "done": 640, "total": 4000})
    assert (arm.stage, arm.step) == ("sft", "sft: gold conversations 640/4000")
    arm, _ = _followed({"event": "progress", "stage": "sft", "what": "gold conversations", "done": 4000, "total": 4000},
                       {"event": "step", "stage": "sft", "sft/step": 1, "sft/loss": 2.5})
    assert arm.step == "sft 1 loss 2.500"


def test_lines_that_are_not_events_are_skipped_and_a_failure_is_kept():
    arm = ArmProcess(arm="text", process=SimpleNamespace(stdout=io.StringIO('not json\n{"event": "failed", "error": "boom"}\n')))
    _follow(arm, lambda _: None)
    assert (arm.status, arm.error) == ("failed", "boom")
