"""sft_schedule.py: the warm-up's phases (answers after the tool, tool trajectories, the mixture)
and their early ends on the SFT probe, through a real training run against the real env server."""
import io
import json

import pytest

from test_end_to_end import small_config
from vistool_trainer.config import SftConfig, from_dict
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.run_config import ConfigError
from vistool_trainer.run.run_directory import read_json_lines
from vistool_trainer.algorithms.sft_schedule import SftSchedule
from vistool_trainer.run.train import train


def test_fixed_phases_follow_the_step_caps_in_order():
    schedule = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 3, "calls_without_images_steps": 2, "tool_trajectories_steps": 2,
                                        "direct_answer_fraction": 0.6}))
    assert [schedule.phase(step) for step in range(9)] == (["answers_after_tool"] * 3 + ["calls_without_images"] * 2
                                                           + ["tool_trajectories"] * 2 + ["mixture"] * 2)
    assert [schedule.direct_share(step) for step in range(9)] == [0.0] * 7 + [0.6, 0.6]
    assert [schedule.after_tool(step) for step in range(4)] == [True, True, True, False]
    assert [schedule.calls_without_images(step) for step in (2, 3, 4, 5)] == [False, True, True, False]
    # A phase without steps is skipped.
    skipped = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 2, "tool_trajectories_steps": 1}))
    assert [skipped.phase(step) for step in range(4)] == ["answers_after_tool"] * 2 + ["tool_trajectories", "mixture"]


def test_a_probe_that_reaches_its_target_ends_the_phase_and_moves_the_later_ones():
    schedule = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 100, "calls_without_images_steps": 50, "tool_trajectories_steps": 30,
                                        "direct_answer_fraction": 0.5, "after_tool_until_acc": 0.9, "calls_without_images_until_acc": 0.8,
                                        "tool_trajectories_until_acc": 0.8}))
    assert schedule.wants_probe_decision(40)
    assert not schedule.reached(40, {"sft/probe_answer_after_tool_acc": 0.89})
    assert schedule.reached(40, {"sft/probe_answer_after_tool_acc": 0.9})
    assert schedule.end_phase(40) == "answers_after_tool"
    # The later phases start at once and keep their lengths.
    assert schedule.ends == [40, 90, 120]
    assert (schedule.phase(39), schedule.phase(40), schedule.phase(89), schedule.phase(90), schedule.phase(120)) == (
        "answers_after_tool", "calls_without_images", "calls_without_images", "tool_trajectories", "mixture")
    # The call probe, not the answer probe, decides the call phases.
    assert not schedule.reached(60, {"sft/probe_answer_after_tool_acc": 1.0, "sft/probe_call_acc": 0.5})
    assert schedule.reached(60, {"sft/probe_call_acc": 0.8})
    assert schedule.end_phase(60) == "calls_without_images" and schedule.ends == [40, 60, 90]
    assert schedule.end_phase(70) == "tool_trajectories"
    assert schedule.phase(70) == "mixture" and schedule.direct_share(70) == 0.5
    assert not schedule.wants_probe_decision(80)  # the mixture runs to sft.steps
    assert schedule.ended_early_at == [40, 60, 70]
    # The state survives a resume as it was.
    assert SftSchedule.from_config(from_dict(SftConfig, {}), json.loads(json.dumps(schedule.state()))) == schedule


def test_a_phase_without_a_target_is_never_ended_by_the_probe():
    schedule = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 10, "tool_trajectories_steps": 5}))
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
    assert state["sft_schedule"]["ended_early_at"] == [2, None, None]
    assert state["sft_schedule"]["ends"] == [2, 2, 3]
    probed = [m["sft/step"] for m in read_json_lines(tmp_path / "probe-ends" / "metrics.jsonl") if "sft/probe_call_acc" in m]
    assert probed == [2, 4]


def test_with_calls_alongside_the_answer_phase_waits_for_both_probes():
    schedule = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 100, "tool_trajectories_steps": 10, "after_tool_until_acc": 0.9,
                                        "calls_alongside_answers": True}))
    assert not schedule.reached(50, {"sft/probe_answer_after_tool_acc": 0.95, "sft/probe_call_without_images_acc": 0.5})
    assert not schedule.reached(50, {"sft/probe_answer_after_tool_acc": 0.5, "sft/probe_call_without_images_acc": 0.95})
    # The calls are trained without images in this phase: their probe without images decides, not the one with.
    assert not schedule.reached(50, {"sft/probe_answer_after_tool_acc": 0.9, "sft/probe_call_acc": 1.0})
    assert schedule.reached(50, {"sft/probe_answer_after_tool_acc": 0.9, "sft/probe_call_without_images_acc": 0.9})
    alone = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 100, "after_tool_until_acc": 0.9}))
    assert alone.reached(50, {"sft/probe_answer_after_tool_acc": 0.9, "sft/probe_call_acc": 0.0})


def test_the_mixture_ends_sft_on_the_choice_probe_and_never_before_it():
    schedule = SftSchedule.from_config(from_dict(SftConfig, {"after_tool_turns_first": 10, "direct_answer_fraction": 0.6,
                                                             "mixture_until_direct_rate": 0.9}))
    assert not schedule.wants_probe_decision(5)  # phase 1 has no target here
    assert schedule.wants_probe_decision(10) and schedule.phase(10) == "mixture"
    # The choice probe decides, and a probe without the rate (no direct answers held out) never ends it.
    assert not schedule.reached(10, {"sft/probe_first_turn_direct_rate": 0.89, "sft/probe_call_acc": 1.0})
    assert not schedule.reached(10, {"sft/probe_call_acc": 1.0})
    assert schedule.reached(10, {"sft/probe_first_turn_direct_rate": 0.9})
    assert not schedule.finished(20)
    assert schedule.end_phase(20) == "mixture"
    assert schedule.mixture_ended_at == 20 and schedule.finished(20) and not schedule.finished(19)
    assert not schedule.wants_probe_decision(20)
    assert SftSchedule.from_config(from_dict(SftConfig, {}), json.loads(json.dumps(schedule.state()))) == schedule
    # A checkpoint written before the mixture had a target resumes with none.
    old = {key: value for key, value in schedule.state().items() if key not in ("mixture_target", "mixture_ended_at")}
    assert SftSchedule.from_config(from_dict(SftConfig, {}), old).mixture_target is None


def test_a_run_ends_sft_when_the_probe_sees_the_greedy_policy_answer_directly(tmp_path, vbar_data):
    """A target of 0 is met by the first probe in the mixture: SFT ends there (step 2 of its 8) and RL starts."""
    train_path, eval_path = vbar_data
    config = small_config(tmp_path, train_path, eval_path, "mixture-ends", rl={"steps": 1},
                          sft={"steps": 8, "batch_size": 2, "direct_answer_fraction": 0.5, "mixture_until_direct_rate": 0.0,
                               "probe_tasks": 2, "probe_every": 2})
    stderr = io.StringIO()
    assert train(config, events=EventStream(stdout=io.StringIO(), stderr=stderr)) == 0
    assert "SFT phase mixture ended at step 2 (and with it SFT)" in stderr.getvalue(), stderr.getvalue()
    metrics = read_json_lines(tmp_path / "mixture-ends" / "metrics.jsonl")
    assert [m["sft/step"] for m in metrics if m["stage"] == "sft"] == [1, 2]
    probed = [m for m in metrics if m["stage"] == "sft" and m["sft/step"] == 2][0]
    assert 0.0 <= probed["sft/probe_first_turn_direct_rate"] <= 1.0 and "sft/probe_first_turn_call_rate" in probed
    assert [m["rl/step"] for m in metrics if m["stage"] == "rl"] == [1]
    run = json.loads((tmp_path / "mixture-ends" / "run.json").read_text())
    assert run["status"] == "finished" and run["sft_schedule"]["mixture_ended_at"] == 2
    assert "time_caps_reached" not in run


def test_a_stage_its_time_cap_stops_is_recorded_and_said_loudly(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    config = small_config(tmp_path, train_path, eval_path, "capped", sft={"steps": 50, "max_seconds": 0.0},
                          rl={"steps": 5, "max_seconds": 0.0})
    stderr = io.StringIO()
    stdout = io.StringIO()
    assert train(config, events=EventStream(stdout=stdout, stderr=stderr)) == 0
    run = json.loads((tmp_path / "capped" / "run.json").read_text())
    assert run["status"] == "finished"
    assert run["time_caps_reached"] == {"sft": {"step": 0, "steps": 50, "max_seconds": 0.0, "phase": "mixture"},
                                        "rl": {"step": 0, "steps": 5, "max_seconds": 0.0}}
    warnings = [json.loads(line)["message"] for line in stdout.getvalue().splitlines() if json.loads(line)["event"] == "warning"]
    assert any(w.startswith("TIME CAP REACHED: SFT stopped after 0 of its 50 steps") and "sft.max_seconds" in w for w in warnings), warnings
    assert any(w.startswith("TIME CAP REACHED: RL stopped after 0 of its 5 steps") for w in warnings), warnings


def test_with_a_hold_margin_a_later_phase_ends_only_while_the_earlier_skills_hold():
    """sft.hold_earlier_skills: issue 40's run, where reading fell from 0.95 (the reading phase's end)
    to 0.81 and 0.75 while the later phases ended on their own targets."""
    schedule = SftSchedule.from_config(from_dict(SftConfig, {
        "after_tool_turns_first": 600, "tool_trajectories_steps": 200, "calls_alongside_answers": True, "direct_answer_fraction": 0.6,
        "after_tool_until_acc": 0.9, "tool_trajectories_until_acc": 0.9, "mixture_until_direct_rate": 0.9, "hold_earlier_skills": 0.1}))
    answer, call, without, direct = ("sft/probe_answer_after_tool_acc", "sft/probe_call_acc", "sft/probe_call_without_images_acc",
                                     "sft/probe_first_turn_direct_rate")
    assert schedule.reached(550, {answer: 0.95, without: 1.0, call: 0.1})
    schedule.end_phase(550)
    assert schedule.phase_rates == {"answers_after_tool": {answer: 0.95}}
    # The call with the chart in view is there, but reading fell by 0.14: the tool trajectories go on.
    assert schedule.eroded("tool_trajectories", {answer: 0.81, without: 1.0, call: 0.95}) == [answer]
    assert not schedule.reached(600, {answer: 0.81, without: 1.0, call: 0.95})
    # 0.86 is within 0.1 of 0.95: it ends.
    assert schedule.reached(650, {answer: 0.86, without: 1.0, call: 0.97})
    schedule.end_phase(650)
    # The mixture's choice target is met, but the call fell from 0.97 to 0.80: SFT goes on.
    assert not schedule.reached(700, {answer: 0.9, without: 1.0, call: 0.8, direct: 1.0})
    assert schedule.reached(750, {answer: 0.9, without: 1.0, call: 0.95, direct: 1.0})
    # Without the margin the same probes end both phases at once (the recipe issue 40 ran).
    plain = SftSchedule.from_config(from_dict(SftConfig, {
        "after_tool_turns_first": 600, "tool_trajectories_steps": 200, "calls_alongside_answers": True, "direct_answer_fraction": 0.6,
        "after_tool_until_acc": 0.9, "tool_trajectories_until_acc": 0.9, "mixture_until_direct_rate": 0.9}))
    assert plain.reached(550, {answer: 0.95, without: 1.0, call: 0.1}) and plain.end_phase(550)
    assert plain.reached(600, {answer: 0.81, without: 1.0, call: 0.95}) and plain.end_phase(600) == "tool_trajectories"
    assert plain.reached(650, {answer: 0.75, without: 1.0, call: 0.97, direct: 1.0})
    # The margin survives a resume with the rest of the schedule.
    assert SftSchedule.from_config(SftConfig(), schedule.state()).phase_rates == schedule.phase_rates


def test_calls_first_runs_the_calls_without_images_before_the_reading():
    """sft.calls_first: the copy learned from text alone first; the reading phase, which trains the
    calls without images alongside, ends once both its answers and those calls are at the target."""
    schedule = SftSchedule.from_config(from_dict(SftConfig, {
        "calls_first": True, "calls_without_images_steps": 300, "calls_without_images_until_acc": 0.9, "after_tool_turns_first": 400,
        "after_tool_until_acc": 0.9, "tool_trajectories_steps": 100, "calls_alongside_answers": True, "direct_answer_fraction": 0.6,
        "hold_earlier_skills": 0.1}))
    answer, call, without = "sft/probe_answer_after_tool_acc", "sft/probe_call_acc", "sft/probe_call_without_images_acc"
    assert [schedule.phase(step) for step in (0, 299, 300, 699, 700, 799, 800)] == [
        "calls_without_images", "calls_without_images", "answers_after_tool", "answers_after_tool", "tool_trajectories",
        "tool_trajectories", "mixture"]
    assert schedule.calls_without_images(0) and not schedule.after_tool(0) and schedule.after_tool(300)
    # The calls phase's target reads the call with the chart in view.
    assert not schedule.reached(100, {call: 0.5, without: 1.0})
    assert schedule.reached(150, {call: 0.95, without: 1.0})
    assert schedule.end_phase(150) == "calls_without_images" and schedule.ends == [150, 550, 650]
    # The call with the chart in view is not held (it falls to 0 there, and the tool trajectories bring it
    # back); the calls without images, trained alongside, must be at the target.
    assert not schedule.reached(400, {answer: 0.95, without: 0.8, call: 0.0})
    assert schedule.reached(450, {answer: 0.95, without: 0.9, call: 0.0})
    assert schedule.phase_rates.get("calls_without_images") is None
    assert schedule.end_phase(450) == "answers_after_tool" and schedule.phase(450) == "tool_trajectories"
    # The order survives a resume, and a state saved before calls_first existed reads in the default order.
    assert SftSchedule.from_config(SftConfig(), schedule.state()).names == ["calls_without_images", "answers_after_tool", "tool_trajectories"]
    old = {key: value for key, value in schedule.state().items() if key != "names"}
    assert SftSchedule.from_config(SftConfig(), old).names == ["answers_after_tool", "calls_without_images", "tool_trajectories"]
