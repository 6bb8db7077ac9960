"""The e2e's test-only fault injection (vistool_verl/fault_injection.py): off by default, the share
it is given of tool-call turns fails, the same calls for the same seed, only turns that called a
tool, each logged where the e2e checks read it."""
from __future__ import annotations

import json

import pytest

from vistool_verl.fault_injection import MESSAGE, RATE_VARIABLE, SEED_VARIABLE, InjectedFaults

CALLED = {"done": False, "info": {"calls": [{"name": "zoom"}]}, "observation": {"messages": []}}


def test_off_unless_the_variable_is_set():
    faults = InjectedFaults.from_environment({})
    assert faults.rate == 0.0 and all(faults.apply(CALLED, "t", 1, "u", s, 1) is CALLED for s in range(100))


def test_the_share_is_the_rate_and_the_same_seed_fails_the_same_calls():
    faults = InjectedFaults.from_environment({RATE_VARIABLE: "0.1", SEED_VARIABLE: "7"})
    where = [(f"task-{t}", step, session, turn) for t in range(50) for step in (1, 2) for session in range(4) for turn in (1, 2)]
    failed = [w for w in where if faults.fails(*w)]
    assert 0.07 < len(failed) / len(where) < 0.13
    assert failed == [w for w in where if InjectedFaults(0.1, 7).fails(*w)]
    assert failed != [w for w in where if InjectedFaults(0.1, 8).fails(*w)]


def test_only_a_turn_that_called_a_tool_fails_and_each_fault_is_logged(tmp_path):
    faults = InjectedFaults(1.0, 0)
    answered = {"done": True, "info": {"calls": []}, "observation": {"messages": []}}
    assert faults.apply(answered, "t", 1, "u", 0, 1, str(tmp_path)) is answered
    assert faults.apply({"error": {"status": 410}}, "t", 1, "u", 0, 1, str(tmp_path)) == {"error": {"status": 410}}
    assert faults.apply(CALLED, "t", 2, "uid-1", 3, 1, str(tmp_path)) == {"error": {"status": 503, "message": MESSAGE}}
    lines = (tmp_path / "logs" / "injected-faults.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"task": "t", "step": 2, "uid": "uid-1", "session": 3, "turn": 1}]


@pytest.mark.parametrize("rate,message", [("lots", "must be a number from 0 to 1"), ("1.5", "must be from 0 to 1")])
def test_a_bad_rate_is_refused_with_what_it_must_be(rate, message):
    with pytest.raises(ValueError, match=message):
        InjectedFaults.from_environment({RATE_VARIABLE: rate})
