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


def _finished_run(root, seed, threads, tools_rl, text_rl, task="bars"):
    import json
    root.mkdir(parents=True)
    (root / "demo.json").write_text(json.dumps({"seed": seed, "threads": threads, "task": task}))
    (root / "summary.json").write_text(json.dumps({
        "minutes": 21.44, "time_caps_reached": {},
        "targets": [{"met": True}, {"met": tools_rl > 0.5}, {"met": True}],
        "arms": {"tools": {"after_sft": {"acc": 0.3333}, "budget": {"sft_steps": 700},
                           "after_rl": {"acc": tools_rl, "acc_ci95": [tools_rl - 0.04, tools_rl + 0.03], "tool_call_rate": 0.99}},
                 "text": {"after_rl": {"acc": text_rl}}}}))
    return root


def test_recording_runs_replaces_the_same_seed_and_threads_and_the_table_gives_min_median_max(tmp_path):
    import json
    from vistool_trainer.run.demo_range import range_table, record_runs
    store = tmp_path / "demo-range.json"
    store.write_text(json.dumps({"bars": {"runs": [{"seed": 1, "threads": 1, "tools_after_rl": 0.5, "tools_after_sft": 0.3,
                                                     "text_after_rl": None, "sft_steps": 1}]}}))
    runs = [_finished_run(tmp_path / "a", 1, 1, 0.9167, 0.3333), _finished_run(tmp_path / "b", 5, 2, 0.43, 0.337),
            _finished_run(tmp_path / "c", 2, 1, 0.95, 0.30)]
    ranges = record_runs(runs, store, cpu="AMD EPYC", date="2026-12-06")
    stored = json.loads(store.read_text())["bars"]
    assert stored == ranges["bars"] and stored["cpu"] == "AMD EPYC"
    # Seed 1 at 1 thread replaced (0.5 → 0.9167); ordered by threads, then seed.
    assert [(r["seed"], r["threads"], r["tools_after_rl"]) for r in stored["runs"]] == [(1, 1, 0.9167), (2, 1, 0.95), (5, 2, 0.43)]
    assert stored["runs"][2]["claims_met"] == 2 and stored["runs"][2]["claims"] == 3 and stored["runs"][0]["minutes"] == 21.4
    table = range_table(stored["runs"]).splitlines()
    assert table[2] == "| 1 | 1 | 700 | 33.3 % | 91.7 % [87.7, 94.7] (0.99) | 33.3 % | 3 of 3 |"
    # min / median / max of tools after RL over 0.9167, 0.95, 0.43: 43.0 / 91.7 / 95.0
    assert table[5] == "| tools after RL: min / median / max | | | | 43.0 / 91.7 / 95.0 % over 3 runs | | |"


def test_recording_a_folder_that_is_not_a_finished_run_names_what_is_missing(tmp_path):
    import pytest
    from vistool_trainer.run.demo_range import record_runs
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "demo.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="summary.json is missing"):
        record_runs([tmp_path / "half"], tmp_path / "store.json")
