"""Where a demo's numbers fall in the range stored in examples/demo-range.json (run/demo_range.py)."""
from vistool_trainer.run.demo_range import stored_fingerprint, DEMO_RANGE, load_ranges, placement, range_lines, spread


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
    assert lines[4].endswith("gave tools after RL 99.0 % on the CPU the range was measured on; here 57.7 %, not the same: "
                             "this machine follows another trajectory")
    assert range_lines(_summary(0.99), "bars", 2, ranges)[-1].endswith("here 99.0 %, the same")
    # 173 of 300 is stored as 0.5767 (4 decimals): the run's own 0.57666... is the same measurement, 174 of 300 is not.
    ranges["bars"]["runs"][1]["tools_after_rl"] = 0.5767
    assert range_lines(_summary(173 / 300), "bars", 2, ranges)[-1].endswith("here 57.7 %, the same")
    assert range_lines(_summary(174 / 300), "bars", 2, ranges)[-1].endswith("here 58.0 %, not the same: this machine follows another trajectory")
    ranges["bars"]["runs"][1]["tools_after_rl"] = 0.99
    # A run stored without its text arm places the tools arm alone.
    ranges["bars"]["runs"][0]["text_after_rl"] = None
    assert "text after RL" in range_lines(_summary(0.99), "bars", 2, ranges)[3]
    assert range_lines(_summary(0.99), "geometry", 2, ranges) == [
        "no measured range is stored for the geometry demo (examples/demo-range.json)"]


def test_the_stored_range_covers_what_the_docs_say_was_measured():
    ranges = load_ranges(DEMO_RANGE)
    for task in ("bars", "geometry", "search"):
        for run in ranges.get(task, {}).get("runs", []):
            assert {"seed", "threads", "tools_after_rl", "tools_after_sft", "text_after_rl", "sft_steps"} <= set(run)
            assert 0 <= run["tools_after_rl"] <= 1
            assert run["text_after_rl"] is None or 0 <= run["text_after_rl"] <= 1  # None: the text arm was not run


def test_the_stored_bars_range_was_measured_with_the_recipe_the_repo_ships():
    """A change to examples/micro-cpu.vistool.json (or to a default it relies on) must come with a
    re-measured range: `make demo` would otherwise tell every user their run is of another recipe."""
    from vistool_trainer.config import to_dict
    from vistool_trainer.run.demo import demo_config
    from vistool_trainer.run.demo_range import recipe_fingerprint
    from vistool_trainer.run.demo_range import stored_fingerprint
    stored = load_ranges(DEMO_RANGE)["bars"]
    shipped = recipe_fingerprint(to_dict(demo_config("runs/demo", minutes=20, model="micro", device="cpu", arm="tools")))
    assert stored_fingerprint(stored) == shipped


def _tools_config(seed=1, threads=1, sft_steps=2500, root="runs/x"):
    return {"name": "demo-tools", "seed": seed, "threads": threads, "output_dir": f"{root}/tools",
            "data": {"train": f"{root}/data/train/tasks.jsonl", "eval": f"{root}/data/eval/tasks.jsonl", "generate": {"n_train": 4000}},
            "sft": {"steps": sft_steps, "max_seconds": 900.0}, "rl": {"steps": 30, "max_seconds": 240.0}}


def _finished_run(root, seed, threads, tools_rl, text_rl, task="bars", sft_steps=2500, kernels=None):
    """A finished demo folder; `kernels` (asked, recorded): a run of this code that asked for a kernel
    path (asked None: the CPU's own); None: a run finished before the path was recorded."""
    import json
    root.mkdir(parents=True)
    (root / "tools.vistool.json").write_text(json.dumps(_tools_config(seed, threads, sft_steps, str(root))))
    demo = {"seed": seed, "threads": threads, "task": task}
    recorded = {}
    if kernels is not None:
        demo["cpu_kernels"], recorded = kernels[0], {"cpu_capability": kernels[1]}
    (root / "demo.json").write_text(json.dumps(demo))
    (root / "summary.json").write_text(json.dumps({
        "minutes": 21.44, "time_caps_reached": {},
        "targets": [{"met": True}, {"met": tools_rl > 0.5}, {"met": True}],
        "arms": {"tools": {**recorded, "after_sft": {"acc": 0.3333}, "budget": {"sft_steps": 700},
                           "after_rl": {"acc": tools_rl, "acc_ci95": [tools_rl - 0.04, tools_rl + 0.03], "tool_call_rate": 0.99}},
                 "text": {"after_rl": {"acc": text_rl}}}}))
    return root


def test_recording_runs_replaces_the_same_seed_and_threads_and_the_table_gives_min_median_max(tmp_path):
    import json
    from vistool_trainer.run.demo_range import recipe_of, range_table, record_runs
    store = tmp_path / "demo-range.json"
    recipe = recipe_of(_tools_config())
    store.write_text(json.dumps({"bars": {"recipe_config": recipe, "runs": [{"seed": 1, "threads": 1, "tools_after_rl": 0.5, "cpu": "AMD EPYC",
                                                                                  "tools_after_sft": 0.3, "text_after_rl": None, "sft_steps": 1}]}}))
    runs = [_finished_run(tmp_path / "a", 1, 1, 0.9167, 0.3333), _finished_run(tmp_path / "b", 5, 2, 0.43, 0.337),
            _finished_run(tmp_path / "c", 2, 1, 0.95, 0.30)]
    ranges = record_runs(runs, store, cpu="AMD EPYC", date="2026-12-06")
    stored = json.loads(store.read_text())["bars"]
    assert stored == ranges["bars"] and stored["date"] == "2026-12-06"
    # Seed 1 at 1 thread on the same CPU replaced (0.5 → 0.9167; --cpu names the CPU of runs that did not
    # record theirs); ordered by threads, then seed.
    assert [(r["seed"], r["threads"], r["tools_after_rl"], r["cpu"]) for r in stored["runs"]] == [
        (1, 1, 0.9167, "AMD EPYC"), (2, 1, 0.95, "AMD EPYC"), (5, 2, 0.43, "AMD EPYC")]
    assert stored["runs"][2]["claims_met"] == 2 and stored["runs"][2]["claims"] == 3 and stored["runs"][0]["minutes"] == 21.4
    table = range_table(stored["runs"]).splitlines()
    # Runs that did not record their kernel path say so rather than name one.
    assert table[0].startswith("| seed | threads | kernels | CPU | SFT steps |")
    assert table[2] == "| 1 | 1 | not recorded | AMD EPYC | 700 | 33.3 % | 91.7 % [87.7, 94.7] (0.99) | 33.3 % | 3 of 3 |"
    # min / median / max of tools after RL over 0.9167, 0.95, 0.43: 43.0 / 91.7 / 95.0
    assert table[5] == "| tools after RL: min / median / max | | | | | | 43.0 / 91.7 / 95.0 % over 3 runs | | |"


def test_a_run_on_another_kernel_path_is_stored_beside_the_same_seed_and_placed_against_its_own(tmp_path):
    """`--cpu-kernels default` is another measurement of the same seed and threads: stored beside the
    run on the CPU's own path, not over it, and a closing line compares a run with the stored run of
    its own kernel path. A stored run without the fields ran the CPU's own path, shown as not recorded."""
    import json
    from vistool_trainer.run.demo_range import range_table, recipe_of, record_runs
    store = tmp_path / "demo-range.json"
    old = {"seed": 1, "threads": 2, "tools_after_rl": 0.99, "tools_after_sft": 0.3, "text_after_rl": 0.33, "sft_steps": 1}
    store.write_text(json.dumps({"bars": {"recipe_config": recipe_of(_tools_config()), "runs": [old]}}))
    stored = record_runs([_finished_run(tmp_path / "a", 1, 2, 0.577, 0.33, kernels=("default", "DEFAULT"))], store)["bars"]
    assert [(r["seed"], r["threads"], r.get("cpu_kernels"), r.get("cpu_capability"), r["tools_after_rl"]) for r in stored["runs"]] == [
        (1, 2, None, None, 0.99), (1, 2, "default", "DEFAULT", 0.577)]
    rows = range_table(stored["runs"]).splitlines()
    assert rows[2].startswith("| 1 | 2 | not recorded | not recorded | 1 |") and rows[3].startswith("| 1 | 2 | DEFAULT | not recorded | 700 |")
    # Stored again on the CPU's own path (recorded AVX2): it replaces the run that did not record one.
    stored = record_runs([_finished_run(tmp_path / "b", 1, 2, 0.98, 0.33, kernels=(None, "AVX2"))], store)["bars"]
    assert [(r.get("cpu_kernels"), r.get("cpu_capability"), r["tools_after_rl"]) for r in stored["runs"]] == [
        (None, "AVX2", 0.98), ("default", "DEFAULT", 0.577)]

    ranges = {"bars": {"cpu": "AMD EPYC", "runs": [old, stored["runs"][1]]}}
    head = range_lines({**_summary(0.577), "cpu_kernels": "default"}, "bars", 2, ranges)[0]
    assert "kernel path DEFAULT, not recorded)" in head
    summary = _summary(0.577)
    summary.update(cpu_kernels="default")
    summary["arms"]["tools"]["cpu_capability"] = "DEFAULT"
    assert range_lines(summary, "bars", 2, ranges)[-1] == (
        "  seed 1 at 2 threads, kernels DEFAULT, gave tools after RL 57.7 % on the CPU the range was measured on; here 57.7 %, the same")
    # The CPU's own path, not recorded by either side: compared with the stored run that asked for none.
    assert range_lines(_summary(0.99), "bars", 2, ranges)[-1] == (
        "  seed 1 at 2 threads, kernels not recorded, gave tools after RL 99.0 % on the CPU the range was measured on; here 99.0 %, the same")


def test_recording_a_folder_that_is_not_a_finished_run_names_what_is_missing(tmp_path):
    import pytest
    from vistool_trainer.run.demo_range import record_runs
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "demo.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="summary.json is missing"):
        record_runs([tmp_path / "half"], tmp_path / "store.json")


def test_the_recipe_fingerprint_ignores_what_differs_by_design_and_sees_the_rest():
    import hashlib
    import json
    from vistool_trainer.run.demo_range import recipe_fingerprint
    base = recipe_fingerprint(_tools_config())
    # Seed, threads, paths and time caps differ from run to run of one recipe.
    assert recipe_fingerprint(_tools_config(seed=5, threads=2, root="/elsewhere")) == base
    assert recipe_fingerprint({**_tools_config(), "sft": {"steps": 2500, "max_seconds": None}}) == base
    assert recipe_fingerprint(_tools_config(sft_steps=1500)) != base
    # By hand: the config as the schema resolves it, less those keys, as sorted compact JSON, sha256, 12 hex digits.
    from vistool_trainer.config import to_dict
    from vistool_trainer.run.run_config import resolve_config
    resolved = to_dict(resolve_config(_tools_config()))
    for key in ("$schema", "name", "output_dir", "seed", "threads"):
        del resolved[key]
    del resolved["data"]["train"], resolved["data"]["eval"]
    for section in resolved.values():
        if isinstance(section, dict):
            section.pop("max_seconds", None)
            for sub in section.values():
                if isinstance(sub, dict):
                    sub.pop("max_seconds", None)
    by_hand = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    assert base == hashlib.sha256(by_hand.encode()).hexdigest()[:12]
    # A config today's schema refuses is hashed as written.
    refused = {"sft": {"steps": -1}}
    assert recipe_fingerprint(refused) == hashlib.sha256(b'{"sft":{"steps":-1}}').hexdigest()[:12]


def test_a_run_of_another_recipe_is_not_placed_and_recording_it_replaces_the_range(tmp_path):
    import json
    from vistool_trainer.run.demo_range import recipe_fingerprint, recipe_of, record_runs, stored_fingerprint
    old, new = recipe_fingerprint(_tools_config(sft_steps=1500)), recipe_fingerprint(_tools_config())
    ranges = {"bars": {"recipe_config": recipe_of(_tools_config(sft_steps=1500)), "measured": "seeds 1 and 5", "runs": [
        {"seed": 1, "threads": 2, "tools_after_sft": 0.33, "tools_after_rl": 0.98, "text_after_rl": 0.33}]}}
    lines = range_lines(_summary(0.9), "bars", 2, ranges, recipe=new)
    assert len(lines) == 1 and f"another recipe (fingerprint {old}, this run's {new}" in lines[0]
    assert range_lines(_summary(0.98), "bars", 2, ranges, recipe=old)[-1].endswith("here 98.0 %, the same")
    store = tmp_path / "demo-range.json"
    store.write_text(json.dumps(ranges))
    stored = record_runs([_finished_run(tmp_path / "a", 5, 2, 0.97, 0.33)], store)["bars"]
    assert stored_fingerprint(stored) == new and "measured" not in stored
    assert [(r["seed"], r["threads"]) for r in stored["runs"]] == [(5, 2)]
    # A stored recipe lacking a key added since is resolved with its default: still the same recipe.
    del stored["recipe_config"]["rl"]["failed_groups"]
    assert stored_fingerprint(stored) == new


def test_a_key_added_since_a_run_was_made_does_not_change_its_fingerprint():
    """A stored run's config lacks keys added to the schema later; resolved, it gets their defaults
    and hashes as a config written today with those defaults does."""
    import json
    from vistool_trainer.run.demo_range import recipe_fingerprint
    from vistool_trainer.run.demo import demo_config
    from vistool_trainer.config import to_dict
    today = to_dict(demo_config("runs/x", minutes=20, model="micro", device="cpu", arm="tools"))
    older = json.loads(json.dumps(today))
    # Both at their schema defaults in today's demo config (rl.failed_groups "drop", sft.weight_decay 0).
    del older["rl"]["failed_groups"], older["sft"]["weight_decay"]
    assert recipe_fingerprint(older) == recipe_fingerprint(today)
    # A changed value is another recipe (the demo sets calls_first; without it the default, false, is another warm-up).
    del older["sft"]["calls_first"]
    assert recipe_fingerprint(older) != recipe_fingerprint(today)


def test_the_search_demo_is_placed_in_its_own_range_never_the_bars_one():
    """The search variant's one finished run is stored under its task and recipe: a search run of
    that recipe is placed against it, one of another recipe is told so, never placed in the bars range."""
    stored = load_ranges(DEMO_RANGE)["search"]
    assert [(run["seed"], run["threads"], run["tools_after_rl"]) for run in stored["runs"]] == [(1, 1, 0.2533)]
    lines = range_lines(_summary(0.5), "search", 2, recipe=stored_fingerprint(stored))
    assert lines[0].startswith("the search demo measured on 1 run (seed 1 x threads 1, ")
    assert lines[1] == "  tools after RL: 50.0 % — above the measured range (min 25.3 / median 25.3 / max 25.3 %)"
    other = range_lines(_summary(0.5), "search", 2, recipe="anything")
    assert other[0].startswith("the stored range of the search demo (examples/demo-range.json) was measured with another recipe")

def test_a_run_on_another_cpu_is_stored_beside_and_compared_with_the_run_of_its_own_cpu(tmp_path):
    """Two machines sold under one name round differently (their BLAS picks its code by CPU): a run's CPU,
    recorded by its trainer, is part of what it measured. The same seed, threads and path on another CPU is
    stored beside, the closing line compares a run with the run of its own CPU first, and names the CPUs."""
    import json
    from vistool_trainer.run.demo_range import range_table, recipe_of, record_runs
    store = tmp_path / "demo-range.json"
    older = {"seed": 1, "threads": 1, "cpu_kernels": None, "cpu_capability": "AVX2", "cpu": "AMD EPYC (no AVX-512)",
             "tools_after_rl": 0.9233, "tools_after_sft": 0.33, "text_after_rl": 0.24, "sft_steps": 700}
    store.write_text(json.dumps({"bars": {"recipe_config": recipe_of(_tools_config()), "cpu": "a note from before", "runs": [older]}}))
    root = _finished_run(tmp_path / "a", 1, 1, 0.97, 0.33, kernels=(None, "AVX512"))
    summary_file = root / "summary.json"
    summary = json.loads(summary_file.read_text())
    summary["arms"]["tools"]["cpu"] = "AMD EPYC (family 25, model 17)"
    summary_file.write_text(json.dumps(summary))
    # --cpu names only runs that did not record theirs: this one did.
    stored = record_runs([root], store, cpu="ignored here")["bars"]
    assert [(r["cpu"], r["cpu_capability"], r["tools_after_rl"]) for r in stored["runs"]] == [
        ("AMD EPYC (no AVX-512)", "AVX2", 0.9233), ("AMD EPYC (family 25, model 17)", "AVX512", 0.97)]
    assert [row.split(" | ")[3] for row in range_table(stored["runs"]).splitlines()[2:4]] == [
        "AMD EPYC (no AVX-512)", "AMD EPYC (family 25, model 17)"]

    here = _summary(0.97)
    here["arms"]["tools"].update(cpu_capability="AVX512", cpu="AMD EPYC (family 25, model 17)")
    lines = range_lines(here, "bars", 1, {"bars": stored})
    assert "CPUs AMD EPYC (family 25, model 17); AMD EPYC (no AVX-512)" in lines[0] and "a note from before" not in lines[0]
    assert lines[-1] == ("  seed 1 at 1 threads, kernels AVX512, gave tools after RL 97.0 % on AMD EPYC (family 25, model 17); "
                         "here 97.0 %, the same")
    # A run of the CPU's own path on a third CPU (AVX2, like the first): compared with the first, by its path.
    there = _summary(0.9233)
    there["arms"]["tools"].update(cpu_capability="AVX2", cpu="Intel Xeon (family 6, model 85)")
    assert range_lines(there, "bars", 1, {"bars": stored})[-1].endswith("gave tools after RL 92.3 % on AMD EPYC (no AVX-512); "
                                                                          "here 92.3 %, the same")


def test_the_cpu_is_read_from_proc_cpuinfo_with_its_family_and_model():
    from vistool_trainer.run.cpu_kernels import cpu_model
    cpuinfo = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n"
               "flags\t\t: fpu avx2 avx512f\n\nprocessor\t: 1\ncpu family\t: 99\nmodel\t\t: 1\nmodel name\t: Other\n")
    assert cpu_model(cpuinfo) == "AMD EPYC (family 25, model 17)"
    # Without family and model (an ARM kernel's cpuinfo has neither): the name alone.
    assert cpu_model("processor\t: 0\nmodel name\t: Neoverse-N1\n") == "Neoverse-N1"


def test_a_run_that_capped_onednn_is_another_measurement_and_says_so():
    """Since 2026-12-07 a kernel path caps oneDNN too (run/cpu_kernels.py): a stored run from before,
    which capped ATen's path alone, is not the same measurement, and the table says which is which."""
    from vistool_trainer.run.demo_range import kernels_label, run_identity
    before = {"seed": 4, "threads": 1, "cpu_kernels": "default", "cpu_capability": "DEFAULT", "cpu": "AMD EPYC"}
    after = {**before, "onednn_max_cpu_isa": "SSE41"}
    assert run_identity(before) != run_identity(after)
    assert kernels_label(before) == "DEFAULT" and kernels_label(after) == "DEFAULT, oneDNN SSE41"
    here = _summary(0.9, seed=4)
    here.update(cpu_kernels="default")
    here["arms"]["tools"].update(cpu_capability="DEFAULT", onednn_max_cpu_isa="SSE41", cpu="AMD EPYC")
    ranges = {"bars": {"runs": [{**before, "tools_after_rl": 0.97, "tools_after_sft": 0.3, "text_after_rl": 0.3}]}}
    # Only the ATen-only run is stored: no run of this one's path to compare with, so no such line.
    assert not any(line.startswith("  seed 4") for line in range_lines(here, "bars", 1, ranges))
    ranges["bars"]["runs"].append({**after, "tools_after_rl": 0.9, "tools_after_sft": 0.3, "text_after_rl": 0.3})
    assert range_lines(here, "bars", 1, ranges)[-1].endswith("kernels DEFAULT, oneDNN SSE41, gave tools after RL 90.0 % on AMD EPYC; "
                                                             "here 90.0 %, the same")
