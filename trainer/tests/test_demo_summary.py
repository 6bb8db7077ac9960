"""summary.json from two arms' run directories: the shape the issue asks for, accuracies with Wilson
intervals that match the counts, the held-out split's provenance, and the three claims checked on
the numbers (met and not met). Run directories are written here the way the trainer writes them."""
import json
import math

from vistool_trainer.run.demo_report import demo_table, write_demo_report
from vistool_trainer.run.demo_summary import demo_summary
from vistool_trainer.run.run_directory import append_json_line, write_json_atomic

Z = 1.959963984540054


def _wilson(k, n):
    p = k / n
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def _arm(root, arm, evaluations, rl_clipfrac, checksum=123.5):
    run = root / arm
    (run / "rollouts").mkdir(parents=True)
    write_json_atomic(run / "run.json", {"status": "finished", "evaluations": evaluations, "initial_weights_checksum": checksum})
    step = 0
    for sft_step in range(1, 4):
        step += 1
        append_json_line(run / "metrics.jsonl", {"step": step, "stage": "sft", "sft/step": sft_step, "sft/loss": 1.0 / sft_step, "timing/step_s": 0.5})
    for rl_step, clip in enumerate(rl_clipfrac, start=1):
        step += 1
        append_json_line(run / "metrics.jsonl", {"step": step, "stage": "rl", "rl/step": rl_step, "reward/mean": 0.3 + 0.1 * rl_step,
                                                 "actor/pg_clipfrac": clip, "tool/call_rate": 0.5, "timing/step_s": 1.0})
        append_json_line(run / "metrics.jsonl", {"step": step, "stage": "eval", "label": f"rl_step_{rl_step}", "eval/n": 300.0,
                                                 "eval/acc_tools" if arm == "tools" else "eval/acc_no_tools": 0.4 + 0.1 * rl_step})


def _eval(setting, correct, n=300, calls=0.0, errors=0.0):
    record = {"eval/n": float(n), f"eval/acc_{setting}": correct / n, f"eval/correct_{setting}": float(correct)}
    if setting == "tools":
        record.update({"eval/tool_call_rate": calls, "eval/tool_error_rate": errors, "eval/acc_no_tools": 0.33})
    return record


def _heldout(root):
    path = root / "data" / "eval" / "tasks.jsonl"
    path.parent.mkdir(parents=True)
    generator = {"version": 2, "seed": 1, "split": "test", "index": 0, "attempt": 0, "kind": "vbar", "difficulty": 2, "image_size": [224, 112],
                 "families": ["level"], "labels": list("ABCDEF"), "categories": [6, 6], "shuffle_labels": True}
    answers = ["low", "medium", "high"] * 100
    path.write_text("".join(json.dumps({"id": f"t{i}", "answer": a, "generator": {**generator, "index": i}}) + "\n" for i, a in enumerate(answers)))


def test_the_summary_has_the_asked_shape_and_every_number_follows_from_the_run_directories(tmp_path):
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 120, calls=0.1), "after_rl": _eval("tools", 270, calls=0.97, errors=0.01)}, [0.02, 0.05, 0.01])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 104)}, [0.0, 0.03, 0.02])
    _heldout(tmp_path)
    summary = demo_summary(tmp_path, minutes=12.5)
    assert set(summary) >= {"arms", "eval_split", "minutes"} and summary["minutes"] == 12.5
    for arm in ("tools", "text"):
        for label in ("after_sft", "after_rl"):
            assert set(summary["arms"][arm][label]) >= {"acc", "acc_ci95", "n", "tool_call_rate", "tool_error_rate"}
    after = summary["arms"]["tools"]["after_rl"]
    assert after["acc"] == 270 / 300 and after["n"] == 300
    low, high = _wilson(270, 300)
    assert abs(after["acc_ci95"][0] - low) < 1e-9 and abs(after["acc_ci95"][1] - high) < 1e-9
    assert after["tool_call_rate"] == 0.97 and after["tool_error_rate"] == 0.01 and after["acc_without_tools"] == 0.33
    assert summary["arms"]["text"]["after_rl"]["tool_call_rate"] == 0.0  # the tools are off in that arm
    split = summary["eval_split"]
    assert split["seed"] == 1 and split["split"] == "test" and split["n"] == 300 and abs(split["chance"] - 1 / 3) < 1e-12
    assert "--family level" in split["command"] and "--shuffle-labels" in split["command"] and "--categories 6-6" in split["command"]
    assert "index" not in split and "attempt" not in split
    claims = {t["claim"].split(":")[0]: t for t in summary["targets"]}
    assert len(summary["targets"]) == 3 and all(t["met"] for t in summary["targets"]), claims
    assert summary["arms"]["tools"]["budget"] == {"sft_steps": 3, "rl_steps": 3, "sft_seconds": 1.5, "rl_seconds": 3.0}


def test_claims_that_the_numbers_do_not_support_are_reported_as_not_met(tmp_path):
    # A 12-point gap (short of 15), overlapping intervals, a tool-call rate that falls, and a step without clipping.
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 130, calls=0.9), "after_rl": _eval("tools", 136, calls=0.5)}, [0.02, 0.0])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 100)}, [0.01, 0.01])
    _heldout(tmp_path)
    summary = demo_summary(tmp_path)
    assert [t["met"] for t in summary["targets"]] == [False, False, False]
    assert "+12.0 points" in summary["targets"][0]["measured"] and "overlap" in summary["targets"][0]["measured"]
    assert "0.900 → 0.500" in summary["targets"][1]["measured"]
    assert "on 1 of 2 RL steps" in summary["targets"][2]["measured"]
    text = demo_table(summary)
    assert text.count("NOT MET") == 3


def test_the_report_shows_both_arms_the_intervals_and_the_claims_and_escapes_model_text(tmp_path):
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 120, calls=0.1), "after_rl": _eval("tools", 270, calls=0.97)}, [0.02, 0.05])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 104)}, [0.0, 0.03])
    _heldout(tmp_path)
    hostile = {"task": {"question": "<script>alert(1)</script>", "answer": "low", "image": "abc"}, "reward": 1.2, "correct": True,
               "advantage": 0.5, "turns": [{"role": "assistant", "text": "<img src=x onerror=alert(2)>"}]}
    append_json_line(tmp_path / "tools" / "rollouts" / "step-000005.jsonl", hostile)
    summary = demo_summary(tmp_path, minutes=3.0)
    write_demo_report(tmp_path, summary)
    page = (tmp_path / "report.html").read_text()
    assert "<script>" not in page and "<img src=x" not in page and "&lt;script&gt;" in page
    low, high = _wilson(270, 300)
    assert f"[{100 * low:.1f}%, {100 * high:.1f}%]" in page
    assert page.count("<svg") >= 4  # reward, held-out accuracy, tool calls, clipping (and SFT loss)
    assert "not met" not in page and page.count(">met<") == 3


def test_the_report_says_where_the_warm_up_phases_ended_and_what_the_probe_read(tmp_path):
    from vistool_trainer.run.demo_report import warmup_html
    from vistool_trainer.algorithms.sft_schedule import SftSchedule
    from vistool_trainer.config import SftConfig, from_dict

    sft = {"steps": 1000, "after_tool_turns_first": 550, "calls_without_images_steps": 200, "tool_trajectories_steps": 250,
           "direct_answer_fraction": 0.6, "after_tool_until_acc": 0.9, "tool_trajectories_until_acc": 0.9, "probe_tasks": 64, "probe_every": 50}
    run = tmp_path / "tools"
    run.mkdir()
    # The schedule as the trainer leaves it: phase 1 ended early at 350, the others ran their caps.
    schedule = SftSchedule.from_config(from_dict(SftConfig, sft))
    schedule.end_phase(350)
    write_json_atomic(run / "run.json", {"status": "finished", "sft_schedule": schedule.state()})
    append_json_line(run / "metrics.jsonl", {"step": 1000, "stage": "sft", "sft/step": 1000, "sft/probe_call_acc": 0.97,
                                             "sft/probe_answer_after_tool_acc": 0.95, "sft/probe_direct_answer_acc": 0.34})
    text = warmup_html(run, sft)
    assert "in 4 phases" in text
    assert "steps 1–350" in text and "ended at step 350, when the probe's sft/probe_answer_after_tool_acc reached 0.9" in text
    assert "<b>calls without images</b>, steps 351–550" in text and "ran its cap of 200 steps;" in text
    assert "steps 551–800" in text and "ran its cap of 250 steps (the probe's sft/probe_call_acc stayed under 0.9)" in text
    assert "steps 801–1000: 40% whole tool trajectories, 60% direct answers" in text
    assert "reading the edited image 95.0%, writing the call 97.0%, reading the raw chart 34.0%" in text
    # A run without a recorded schedule says so rather than inventing phases.
    (run / "run.json").write_text(json.dumps({"status": "failed"}))
    assert "did not record its phases" in warmup_html(run, sft)


def test_a_stage_stopped_by_its_time_cap_is_said_first_in_the_report_and_last_on_the_console(tmp_path):
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 100, calls=0.0), "after_rl": _eval("tools", 290, calls=1.0)}, [0.02, 0.05])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 104)}, [0.0, 0.03])
    _heldout(tmp_path)
    quiet = demo_summary(tmp_path)
    write_demo_report(tmp_path, quiet)
    assert quiet["time_caps_reached"] == [] and "TIME CAP" not in demo_table(quiet)
    assert 'class="timecap"' not in (tmp_path / "report.html").read_text()
    # The tools arm's SFT was stopped by its cap, as run/time_caps.py records it.
    run_file = tmp_path / "tools" / "run.json"
    run = json.loads(run_file.read_text())
    run["time_caps_reached"] = {"sft": {"step": 852, "steps": 1300, "max_seconds": 840.0, "phase": "mixture"}}
    write_json_atomic(run_file, run)
    summary = demo_summary(tmp_path)
    assert summary["time_caps_reached"] == [
        "the tools arm's SFT was stopped by its time cap of 840 s after 852 of its 1300 steps (in its mixture phase)"]
    assert all(t["met"] for t in summary["targets"])  # the claims are still checked on the numbers, and the cap is said beside them
    assert demo_table(summary).splitlines()[-1].startswith("TIME CAP REACHED: the tools arm's SFT was stopped")
    write_demo_report(tmp_path, summary)
    page = (tmp_path / "report.html").read_text()
    banner = page.index('class="timecap"')
    assert banner < page.index("<h2>")  # above every section
    assert "after 852 of its 1300 steps" in page[banner:page.index("<h2>")]


def _bars_rollout(prompt, label, gold, masked, answer):
    """A tools-arm rollout of the bars task as the trainer records it: the question quotes its label."""
    turns = []
    if masked is not None:
        call = {"name": "focus_on_x_values_with_mask", "arguments": {"x_values": [masked]}}
        turns += [{"role": "assistant", "text": f"<tool_call>{json.dumps(call)}</tool_call>", "calls": [{**call, "ok": True, "image_out": f"e{masked}"}]},
                  {"role": "tool", "text": "ok", "images": [f"e{masked}"]}]
    turns.append({"role": "assistant", "text": f"<answer>{answer}</answer>"})
    return {"prompt_id": prompt, "task": {"question": f'Is the value low, medium or high for "{label}"?', "answer": gold, "kind": "vbar",
                                          "difficulty": 2, "image": "chart"},
            "turns": turns, "answer": answer, "correct": answer == gold, "reward": 1.0, "advantage": 0.0}


def test_the_showcased_rollouts_follow_a_stated_rule_and_say_which_label_the_call_masked(tmp_path):
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 120, calls=0.1), "after_rl": _eval("tools", 270, calls=0.97)}, [0.02, 0.05])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 104)}, [0.0, 0.03])
    _heldout(tmp_path)
    # The last RL step: a right answer after masking another bar than the question's first, then one prompt four times.
    records = [_bars_rollout("p2", "D", "high", "B", "high"), *[_bars_rollout("p1", "A", "low", "A", "low")] * 3,
               _bars_rollout("p1", "A", "low", None, "medium"), _bars_rollout("p3", "C", "medium", "C", "medium"),
               _bars_rollout("p4", "E", "high", "E", "medium")]
    for record in records:
        append_json_line(tmp_path / "tools" / "rollouts" / "step-000005.jsonl", record)
    write_demo_report(tmp_path, demo_summary(tmp_path))
    page = (tmp_path / "report.html").read_text()
    pair = page[page.index('<div class="pair">'):]
    pair = pair[:pair.index("</div>")]
    # The pair shows a call on the question's own label; the caption says which label it masked.
    assert "for &quot;A&quot;?" in pair or "for &quot;C&quot;?" in pair, pair
    assert "masked the question&#x27;s label" in pair, pair
    section = page[page.index("<h2>Rollouts of the tools arm's last RL step</h2>"):]
    shown = section.split('<div class="rollout">')[1:]
    questions = [part[:part.index("</b>")] for part in shown]
    # One rollout per (gold, answer) cell, no prompt twice, and the rule said above them.
    assert len(questions) == len(set(questions)) == 4, questions
    assert "one rollout per (gold, answer) pair" in section
    # The call that masked another label than the question's is said to have done so, wherever it is shown.
    assert "masked &quot;B&quot;, not the question&#x27;s &quot;D&quot;" in section


def test_a_warm_up_phase_that_lowered_an_earlier_skill_is_a_yellow_note_in_the_report(tmp_path):
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 99, calls=0.0), "after_rl": _eval("tools", 173, calls=1.0)}, [0.02, 0.05])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 100)}, [0.0, 0.03])
    _heldout(tmp_path)
    quiet = demo_summary(tmp_path)
    write_demo_report(tmp_path, quiet)
    assert quiet["warmup_erosion"] == [] and 'class="erosion"' not in (tmp_path / "report.html").read_text()
    # What the trainer's guard writes into run.json (algorithms/warmup_guard.py), issue 40's numbers.
    run_file = tmp_path / "tools" / "run.json"
    run = json.loads(run_file.read_text())
    run["warmup_erosion"] = [{"skill": "sft/probe_answer_after_tool_acc", "taught_by": "answers_after_tool", "taught_step": 550,
                              "rate_then": 0.95, "lowered_by": "mixture", "lowered_step": 650, "rate_now": 0.75, "drop": 0.2}]
    write_json_atomic(run_file, run)
    summary = demo_summary(tmp_path)
    assert summary["warmup_erosion"] == ["the tools arm's mixture phase lowered probe_answer_after_tool_acc from 0.95 "
                                         "(end of answers_after_tool, SFT step 550) to 0.75 (SFT step 650)"]
    assert "A WARM-UP PHASE LOWERED AN EARLIER SKILL: the tools arm's mixture phase" in demo_table(summary)
    write_demo_report(tmp_path, summary)
    page = (tmp_path / "report.html").read_text()
    note = page.index('class="erosion"')
    assert note < page.index("<h2>") and "from 0.95" in page[note:page.index("<h2>")]


def _eval_record(prompt, label, gold, answer, masked, arm="tools"):
    """One kept evaluation record (run/eval_records.py's shape): the question quotes `label`, the
    first call masks `masked` (None: no call)."""
    turns = []
    if masked is not None:
        turns.append({"role": "assistant", "calls": [{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": [masked]}, "ok": True}]})
    turns.append({"role": "assistant", "calls": [], "answer": answer})
    return {"prompt_id": prompt, "task": {"question": f'Is the value low, medium or high for "{label}"?', "answer": gold}, "turns": turns,
            "answer": answer, "correct": answer.strip(".").lower() == gold, "arm": arm, "group": 0 if arm == "tools" else 1}


def test_summary_json_has_the_grid_the_off_target_calls_and_the_differences_with_their_intervals(tmp_path):
    # Expected numbers worked by hand and, for the intervals, from Newcombe's formulas written out
    # in a separate script (not this code): paired (1, 2, 1, 2) → [−0.31503, 0.55851]; hybrid
    # 270/300 − 104/300 → [0.48542, 0.61256]; Wilson 1/2 → [0.09453, 0.90547], 2/4 → [0.15004, 0.84996].
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 120, calls=0.1), "after_rl": _eval("tools", 270, calls=0.97)}, [0.02, 0.05, 0.01])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 104)}, [0.0, 0.03, 0.02])
    gold = ["low", "medium", "high", "low", "medium", "high"]
    labels = list("ABCDEF")
    after_rl = [("low", "A"), ("Medium.", "B"), ("medium", "C"), ("low", "A"), ("low", "E"), ("medium", "X")]
    after_sft = ["low", "low", "high", "medium", "low", "low"]
    rollouts = tmp_path / "tools" / "rollouts"
    (rollouts / "eval-after_rl.jsonl").write_text("".join(
        json.dumps(_eval_record(f"t{i}", labels[i], gold[i], answer, masked)) + "\n"
        + json.dumps(_eval_record(f"t{i}", labels[i], gold[i], "low", None, arm="no_tools")) + "\n"
        for i, (answer, masked) in enumerate(after_rl)))
    (rollouts / "eval-after_sft.jsonl").write_text("".join(json.dumps(_eval_record(f"t{i}", labels[i], gold[i], a, None)) + "\n" for i, a in enumerate(after_sft)))
    summary = demo_summary(tmp_path)
    rl = summary["arms"]["tools"]["after_rl"]
    # Normalised as the scorer compares ("Medium." is "medium"); never answered "high".
    assert rl["grid"] == {"gold": ["low", "medium", "high"], "answers": ["low", "medium", "high"], "counts": [[2, 0, 0], [1, 1, 0], [0, 2, 0]]}
    off = rl["off_target"]
    assert (off["calls"], off["off_target"]) == (6, 2)
    assert (off["off_target_accuracy"]["correct"], off["off_target_accuracy"]["n"]) == (1, 2)
    assert (off["on_target_accuracy"]["correct"], off["on_target_accuracy"]["n"]) == (2, 4)
    assert all(abs(a - b) < 1e-5 for a, b in zip(off["off_target_accuracy"]["acc_ci95"], (0.09453, 0.90547)))
    change = summary["arms"]["tools"]["after_rl_minus_after_sft"]
    assert (change["both_right"], change["fixed"], change["broken"], change["both_wrong"]) == (1, 2, 1, 2)
    assert abs(change["diff"] - 1 / 6) < 1e-12 and change["method"] == "newcombe-paired"
    assert abs(change["ci95"][0] + 0.31503) < 1e-5 and abs(change["ci95"][1] - 0.55851) < 1e-5
    between = summary["differences"]["tools_minus_text"]["after_rl"]
    assert between["method"] == "newcombe-hybrid" and abs(between["diff"] - 166 / 300) < 1e-12
    assert abs(between["ci95"][0] - 0.48542) < 1e-5 and abs(between["ci95"][1] - 0.61256) < 1e-5
    # The text arm kept no records here: no grid, no change, and nothing invented.
    assert "grid" not in summary["arms"]["text"]["after_rl"] and "after_rl_minus_after_sft" not in summary["arms"]["text"]


def test_summary_json_carries_the_tool_effect_per_checkpoint_and_the_report_states_it_with_its_limits(tmp_path):
    from vistool_trainer.algorithms.intervals import newcombe_paired
    # The paper's paired table (Newcombe 1998): 36 right both ways, 12 only as run, 2 only withheld → 0.2 [0.0569, 0.3404].
    diff, low, high = newcombe_paired(36, 12, 2, 0)
    after_rl = {**_eval("tools", 48, n=50, calls=0.4), "eval/tool_effect": diff, "eval/tool_effect_lo": low, "eval/tool_effect_hi": high,
                "eval/answer_changed_rate": 0.7, "eval/counterfactual_n": 20.0, "eval/call_on_target_rate": 0.75}
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 20, n=50, calls=0.1), "after_rl": after_rl}, [0.02])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 20, n=50), "after_rl": _eval("no_tools", 21, n=50)}, [0.0])
    _heldout(tmp_path)
    summary = demo_summary(tmp_path, minutes=1)
    effect = summary["arms"]["tools"]["after_rl"]["tool_effect"]
    assert effect == {"effect": diff, "ci95": [low, high], "n": 50, "answer_changed_rate": 0.7, "method": "newcombe-paired"}
    assert abs(effect["ci95"][0] - 0.0569) < 1e-4 and abs(effect["ci95"][1] - 0.3404) < 1e-4
    assert summary["arms"]["tools"]["after_rl"]["call_on_target_rate"] == 0.75
    # Not measured: null, never a guess.
    assert summary["arms"]["tools"]["after_sft"]["tool_effect"] is None
    assert summary["arms"]["tools"]["after_sft"]["call_on_target_rate"] is None
    assert summary["arms"]["text"]["after_rl"]["tool_effect"] is None
    json.dumps(summary, allow_nan=False)

    text = demo_table(summary)
    assert "tool effect" in text and "+20.0 points [+5.7, +34.0]" in text
    write_demo_report(tmp_path, summary)
    page = (tmp_path / "report.html").read_text()
    assert "tool effect" in page and "+20.0 points</b> [+5.7, +34.0]" in page
    assert "answer changed in 70.0%" in page and "calls on target: 75.0%" in page
    assert "tool effect not measured" in page and "calls on target: not measured" in page
    assert "not that the policy read the right thing" in page


def test_off_target_calls_follow_the_scanners_verdict_where_every_called_record_was_scanned():
    from vistool_trainer.run.eval_summary import off_target
    # The question-label rule would call t0 and t1 on target (each masks its own label) and t2 off.
    records = [_eval_record("t0", "A", "low", "low", "A"), _eval_record("t1", "B", "high", "low", "B"),
               _eval_record("t2", "C", "high", "high", "E"), _eval_record("t3", "D", "low", "low", None)]
    for record, findings in zip(records, (["off_target_call"], [], ["repeated_call"], [])):
        record["findings"] = findings
    off = off_target(records)
    # Judged: t0-t2 (t3 made no call); off: t0 (right); on: t1 (wrong) and t2 (right).
    assert off["rule"] == "scanner" and (off["calls"], off["off_target"]) == (3, 1)
    assert (off["off_target_accuracy"]["correct"], off["off_target_accuracy"]["n"]) == (1, 1)
    assert (off["on_target_accuracy"]["correct"], off["on_target_accuracy"]["n"]) == (1, 2)
    del records[1]["findings"]  # one called record from before the scanners: the older rule for all
    older = off_target(records)
    assert older["rule"] == "question-label" and older["off_target"] == 1 and older["off_target_accuracy"]["correct"] == 1


def test_summary_and_report_say_the_threads_the_kernel_path_and_the_cpu_each_arm_recorded(tmp_path):
    from vistool_trainer.run.demo_report import arm_process_words
    _arm(tmp_path, "tools", {"after_sft": _eval("tools", 120, calls=0.1), "after_rl": _eval("tools", 270, calls=0.97)}, [0.02, 0.05])
    _arm(tmp_path, "text", {"after_sft": _eval("no_tools", 100), "after_rl": _eval("no_tools", 104)}, [0.0, 0.03])
    _heldout(tmp_path)
    write_json_atomic(tmp_path / "demo.json", {"seed": 1, "threads": 2, "cpu_kernels": "default", "model": "micro", "device": "cpu"})
    for arm in ("tools", "text"):
        run = json.loads((tmp_path / arm / "run.json").read_text())
        write_json_atomic(tmp_path / arm / "run.json", {**run, "cpu_capability": "DEFAULT", "cpu": "AMD EPYC (family 25, model 17)"})
    summary = demo_summary(tmp_path)
    assert summary["threads"] == 2 and summary["cpu_kernels"] == "default"
    assert summary["arms"]["tools"]["cpu_capability"] == summary["arms"]["text"]["cpu_capability"] == "DEFAULT"
    assert summary["arms"]["tools"]["cpu"] == "AMD EPYC (family 25, model 17)"
    write_demo_report(tmp_path, summary)
    assert ("(2 trainer threads per arm; ATen kernels DEFAULT (asked with --cpu-kernels default), on AMD EPYC (family 25, model 17))"
            in (tmp_path / "report.html").read_text())
    # The CPU's own path; one arm's trainer did not record it, nor the CPU (a run from before either was recorded).
    summary.update(cpu_kernels=None)
    for arm in ("tools", "text"):
        summary["arms"][arm]["cpu"] = None
    summary["arms"]["text"]["cpu_capability"] = None
    assert arm_process_words(summary) == "2 trainer threads per arm; ATen kernels tools DEFAULT, text not recorded (the CPU's own)"
    summary["arms"]["tools"]["cpu_capability"] = None
    assert arm_process_words(summary) == "2 trainer threads per arm; ATen kernel path not recorded"
