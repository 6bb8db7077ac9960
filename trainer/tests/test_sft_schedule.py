"""sft_schedule.py: the warm-up's phases (answers after the tool, tool trajectories, the mixture)
and their early ends on the SFT probe, through a real training run against the real env server."""
import io
import json

import pytest

from test_end_to_end import small_config
from vistool_trainer.events import EventStream
from vistool_trainer.run_config import ConfigError, resolve_config
from vistool_trainer.run_directory import read_json_lines
from vistool_trainer.sft_schedule import SftSchedule
from vistool_trainer.train import train


def test_fixed_phases_follow_the_step_caps():
    schedule = SftSchedule.from_config({"after_tool_turns_first": 3, "tool_trajectories_steps": 2, "direct_answer_fraction": 0.6})
    assert [schedule.phase(step) for step in range(7)] == ["answers_after_tool"] * 3 + ["tool_trajectories"] * 2 + ["mixture"] * 2
    assert [schedule.direct_share(step) for step in range(7)] == [0.0] * 5 + [0.6, 0.6]
    assert [schedule.after_tool(step) for step in range(4)] == [True, True, True, False]


def test_a_probe_that_reaches_its_target_ends_the_phase_and_shifts_the_next_one():
    schedule = SftSchedule.from_config({"after_tool_turns_first": 100, "tool_trajectories_steps": 30, "direct_answer_fraction": 0.5,
                                        "after_tool_until_acc": 0.9, "tool_trajectories_until_acc": 0.8})
    assert schedule.wants_probe_decision(40)
    assert not schedule.reached(40, {"sft/probe_answer_after_tool_acc": 0.89})
    assert schedule.reached(40, {"sft/probe_answer_after_tool_acc": 0.9})
    assert schedule.end_phase(40) == "answers_after_tool"
    # The tool-trajectory phase starts at once and keeps its length.
    assert (schedule.phase(39), schedule.phase(40), schedule.phase(69), schedule.phase(70)) == (
        "answers_after_tool", "tool_trajectories", "tool_trajectories", "mixture")
    # The call probe, not the answer probe, decides the second phase.
    assert not schedule.reached(50, {"sft/probe_answer_after_tool_acc": 1.0, "sft/probe_call_acc": 0.5})
    assert schedule.reached(50, {"sft/probe_call_acc": 0.8})
    assert schedule.end_phase(50) == "tool_trajectories"
    assert schedule.phase(50) == "mixture" and schedule.direct_share(50) == 0.5
    assert not schedule.wants_probe_decision(60)  # the mixture runs to sft.steps
    # The state survives a resume as it was.
    assert SftSchedule.from_config({}, json.loads(json.dumps(schedule.state()))) == schedule


def test_a_phase_without_a_target_is_never_ended_by_the_probe():
    schedule = SftSchedule.from_config({"after_tool_turns_first": 10, "tool_trajectories_steps": 5})
    assert not schedule.wants_probe_decision(0)
    assert not schedule.reached(0, {"sft/probe_answer_after_tool_acc": 1.0})


def test_a_target_without_a_probe_is_refused_with_the_fix(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    with pytest.raises(ConfigError, match="sft.after_tool_until_acc ends a phase on the SFT probe, but sft.probe_tasks is 0"):
        small_config(tmp_path, train_path, eval_path, "no-probe", sft={"after_tool_until_acc": 0.5})


def test_a_run_ends_the_after_tool_phase_on_the_probe_and_logs_where(tmp_path, vbar_data):
    """A target of 0 is met by any probe: the phase must end at the first one (step 2 of a 10-step cap)."""
    train_path, eval_path = vbar_data
    config = small_config(tmp_path, train_path, eval_path, "probe-ends", rl={"enabled": False},
                          sft={"steps": 4, "batch_size": 2, "after_tool_turns_first": 10, "tool_trajectories_steps": 1,
                               "after_tool_until_acc": 0.0, "probe_tasks": 2, "probe_every": 2})
    stderr = io.StringIO()
    assert train(config, events=EventStream(stdout=io.StringIO(), stderr=stderr)) == 0
    assert "SFT phase answers_after_tool ended at step 2: the probe reached its target" in stderr.getvalue(), stderr.getvalue()
    state = json.loads(sorted((tmp_path / "probe-ends" / "checkpoints").iterdir())[-1].joinpath("trainer_state.json").read_text())
    assert state["sft_schedule"]["after_tool_ended_early_at"] == 2
    assert state["sft_schedule"]["tool_trajectories_end"] == 3
    probed = [m["sft/step"] for m in read_json_lines(tmp_path / "probe-ends" / "metrics.jsonl") if "sft/probe_call_acc" in m]
    assert probed == [2, 4]


def test_a_calls_without_images_phase_comes_first_and_shifts_the_others():
    schedule = SftSchedule.from_config({"calls_without_images_first": 4, "after_tool_turns_first": 3, "tool_trajectories_steps": 2,
                                        "direct_answer_fraction": 0.5, "after_tool_until_acc": 0.9})
    assert [schedule.phase(step) for step in range(10)] == (["calls_without_images"] * 4 + ["answers_after_tool"] * 3
                                                            + ["tool_trajectories"] * 2 + ["mixture"])
    assert [schedule.after_tool(step) for step in (3, 4, 6, 7)] == [False, True, True, False]
    assert not schedule.wants_probe_decision(2)  # the first phase has a fixed length
    assert schedule.end_phase(5) == "answers_after_tool" and schedule.phase(5) == "tool_trajectories"


def test_the_calls_phase_ended_by_the_probe_moves_every_later_phase_with_it():
    schedule = SftSchedule.from_config({"calls_without_images_first": 800, "after_tool_turns_first": 500, "tool_trajectories_steps": 300,
                                        "calls_without_images_until_acc": 0.9})
    assert schedule.wants_probe_decision(200) and not schedule.reached(200, {"sft/probe_call_acc": 0.5})
    assert schedule.reached(200, {"sft/probe_call_acc": 0.95})
    assert schedule.end_phase(200) == "calls_without_images"
    assert (schedule.calls_end, schedule.after_tool_end, schedule.tool_trajectories_end, schedule.calls_ended_early_at) == (200, 700, 1000, 200)
    assert schedule.phase(199) == "calls_without_images" and schedule.phase(200) == "answers_after_tool"
