"""The typed run state (run/run_state.py) reads and writes trainer_state.json exactly as the
string-keyed dict it replaced did: a checkpoint written before it loads, and one written after
it reads the same to every reader (resume, `eval`'s step, the report, the panels)."""
import json

import pytest

from vistool_trainer.run.run_state import RunState, StepBudget

# trainer_state.json files as the trainer wrote them before the typed state, one per stage.
WRITTEN_BEFORE = [
    {"global_step": 0, "sft_step": 0, "rl_step": 0, "stage": "start"},
    {"global_step": 7, "sft_step": 0, "rl_step": 0, "stage": "perception", "perception_step": 7},
    {"global_step": 19, "sft_step": 12, "rl_step": 0, "stage": "sft", "perception_step": 7,
     "sft_schedule": {"lengths": [4, 0, 0], "targets": [0.9, None, None], "ends": [3, 3, 3], "ended_early_at": [3, None, None],
                      "direct_answer_fraction": 0.0, "calls_alongside": False, "mixture_target": None, "mixture_ended_at": None}},
    {"global_step": 42, "sft_step": 30, "rl_step": 12, "stage": "rl", "sft_schedule": {"lengths": [0], "targets": [None]}},
    {"global_step": 50, "sft_step": 30, "rl_step": 20, "stage": "done"},
]


@pytest.mark.parametrize("saved", WRITTEN_BEFORE)
def test_a_checkpoint_written_before_the_typed_state_loads_and_is_written_back_byte_for_byte(saved):
    text = json.dumps(saved, indent=2)
    state = RunState.from_dict(json.loads(text))
    assert json.dumps(state.to_dict(), indent=2) == text
    assert (state.global_step, state.stage) == (saved["global_step"], saved["stage"])


def test_a_new_run_writes_what_the_dict_did_as_its_stages_add_their_keys():
    state = RunState()
    assert state.to_dict() == {"global_step": 0, "sft_step": 0, "rl_step": 0, "stage": "start"}
    state.stage, state.perception_step, state.global_step = "perception", 1, 1
    state.sft_schedule = {"lengths": [1]}
    assert list(state.to_dict()) == ["global_step", "sft_step", "rl_step", "stage", "perception_step", "sft_schedule"]


def test_keys_this_version_does_not_know_are_kept_and_a_stage_it_does_not_know_is_refused():
    state = RunState.from_dict({"global_step": 3, "sft_step": 3, "rl_step": 0, "stage": "sft", "future_key": [1, 2]})
    assert state.to_dict()["future_key"] == [1, 2]
    with pytest.raises(ValueError, match="stage 'warmup' is not one of start, perception, sft, rl, done"):
        RunState.from_dict({"global_step": 3, "stage": "warmup"})


def test_the_step_budget_is_spent_one_step_at_a_time():
    budget = StepBudget.of(2)
    assert not budget.spent
    budget.spend()
    budget.spend()
    assert budget.spent and not StepBudget.of(None).spent
