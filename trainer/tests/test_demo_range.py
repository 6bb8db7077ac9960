"""Where a demo's numbers fall in the range stored in examples/demo-range.json (run/demo_range.py)."""
from vistool_trainer.run.demo_range import DEMO_RANGE, load_ranges, placement, range_lines, spread


def test_placement_names_below_inside_the_ends_and_above():
    values = [0.9, 0.95, 0.99]
    assert spread([0.99, 0.9, 0.95, 0.97]) == (0.9, 0.96, 0.99)
    assert placement(0.577, values) == "below the measured range"
    assert placement(0.9, values) == "at its minimum"
    assert placement(0.96, values) == "inside it (2 of 3 measured runs lower)"
    assert placement(0.99, values) == "at its maximum"
    assert placement(1.0, values) == "above the measured range"


def _summary(tools_rl, tools_sft=0.33, text_rl=0.33, seed=1):
    return {"seed": seed, "arms": {"tools": {"after_sft": {"acc": tools_sft}, "after_rl": {"acc": tools_rl}},
                                   "text": {"after_rl": {"acc": text_rl}}}}


def test_the_closing_lines_place_each_measure_and_compare_the_same_seed_and_threads():
    ranges = {"bars": {"cpu": "AMD EPYC", "date": "2026-12-06", "runs": [
        {"seed": 1, "threads": 1, "tools_after_sft": 0.33, "tools_after_rl": 0.95, "text_after_rl": 0.33},
        {"seed": 1, "threads": 2, "tools_after_sft": 0.33, "tools_after_rl": 0.99, "text_after_rl": 0.30},
        {"seed": 2, "threads": 2, "tools_after_sft": 0.36, "tools_after_rl": 0.92, "text_after_rl": 0.36}]}}
    lines = range_lines(_summary(0.577), "bars", 2, ranges)
    assert "seeds 1, 2 x threads 1, 2, AMD EPYC" in lines[0] and "another trajectory" in lines[0]
    assert lines[1] == "  tools after RL: 57.7 % — below the measured range (min 92.0 / median 95.0 / max 99.0 %)"
    assert lines[2].startswith("  tools after SFT: 33.0 % — at its minimum")
    assert lines[3].startswith("  text after RL: 33.0 % — inside it (1 of 3 measured runs lower)")
    assert lines[4].endswith("gave tools after RL 99.0 % where the range was measured; here 57.7 %, not the same: "
                             "this machine follows another trajectory")
    assert range_lines(_summary(0.99), "bars", 2, ranges)[-1].endswith("here 99.0 %, the same")
    # A run stored without its text arm places the tools arm alone.
    ranges["bars"]["runs"][0]["text_after_rl"] = None
    assert "text after RL" in range_lines(_summary(0.99), "bars", 2, ranges)[3]
    assert range_lines(_summary(0.99), "geometry", 2, ranges) == [
        "no measured range is stored for the geometry demo (examples/demo-range.json)"]


def test_the_stored_range_covers_what_the_docs_say_was_measured():
    ranges = load_ranges(DEMO_RANGE)
    for task in ("bars", "geometry"):
        for run in ranges.get(task, {}).get("runs", []):
            assert {"seed", "threads", "tools_after_rl", "tools_after_sft", "text_after_rl", "sft_steps"} <= set(run)
            assert 0 <= run["tools_after_rl"] <= 1
            assert run["text_after_rl"] is None or 0 <= run["text_after_rl"] <= 1  # None: the text arm was not run
