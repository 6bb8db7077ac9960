"""`demo --resume` (make demo RESUME=1): an interrupted demo continues in its own folder with the
settings it started with; finished arms are kept byte for byte, a paused arm continues from its
newest checkpoint, an arm with no checkpoint starts over with its old folder kept aside."""
import io
import json
import os
import subprocess
import sys

from vistool_trainer.run.demo import ARMS, run_demo
from vistool_trainer.run.demo_resume import arm_state, disagreements, move_aside

TINY = {"data.generate.n_train": 12, "rl.fresh_tasks": 4, "data.generate.n_eval": 6, "eval.n": 6, "eval.every_steps": 0,
        "sft.steps": 2, "sft.batch_size": 4, "rl.steps": 2, "rl.prompts_per_step": 2, "rl.group_size": 2,
        "rl.micro_batch_size": 4, "rl.max_new_tokens": 8, "eval.max_new_tokens": 8, "policy.micro.vocab_size": 400,
        "checkpoint.every_steps": 1, "logging.rollouts_per_step": 4, "sft.probe_tasks": 2, "sft.probe_every": 1,
        "sft.after_tool_turns_first": 0, "sft.calls_without_images_steps": 0, "sft.tool_trajectories_steps": 0,
        "sft.mixture_until_direct_rate": 0.0, "eval.counterfactual": False}


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_an_arm_is_new_finished_resumable_or_to_restart_by_its_run_json_and_checkpoints(tmp_path):
    assert arm_state(tmp_path / "absent") == "new"
    _write(tmp_path / "done" / "run.json", json.dumps({"status": "finished"}))
    _write(tmp_path / "done" / "checkpoints" / "step-000003" / "trainer_state.json", "{}")
    assert arm_state(tmp_path / "done") == "finished"
    # Killed mid-run: run.json still says running; a checkpoint that finished writing makes it resumable.
    _write(tmp_path / "killed" / "run.json", json.dumps({"status": "running"}))
    _write(tmp_path / "killed" / "checkpoints" / "step-000002" / "trainer_state.json", "{}")
    assert arm_state(tmp_path / "killed") == "resume"
    # A checkpoint cut off before trainer_state.json (written last) is not one.
    _write(tmp_path / "torn" / "run.json", json.dumps({"status": "interrupted"}))
    _write(tmp_path / "torn" / "checkpoints" / "step-000001" / "policy" / "config.json", "{}")
    assert arm_state(tmp_path / "torn") == "restart"
    _write(tmp_path / "garbled" / "run.json", "{not json")
    assert arm_state(tmp_path / "garbled") == "restart"

    kept = move_aside(tmp_path / "torn")
    assert kept.name.startswith("torn-abandoned-") and (kept / "run.json").exists() and not (tmp_path / "torn").exists()
    (tmp_path / "torn").mkdir()
    assert move_aside(tmp_path / "torn") != kept and kept.exists()


def test_only_settings_given_and_different_from_the_stored_demo_disagree():
    stored = {"task": "geometry", "seed": 3, "threads": 1, "model": "micro", "device": "cpu"}
    assert disagreements(stored, {"task": "geometry", "seed": 3, "threads": None, "model": "micro"}) == []
    assert disagreements(stored, {"task": "bars", "seed": 3, "threads": 2}) == [
        "task 'bars' (the demo in this folder has 'geometry')", "threads 2 (the demo in this folder has 1)"]


def test_resume_refuses_a_folder_without_a_demo_and_settings_that_differ(tmp_path):
    stderr = io.StringIO()
    assert run_demo(str(tmp_path / "empty"), 5, stderr=stderr, resume=True) == 2
    assert "nothing to resume" in stderr.getvalue() and "no demo.json" in stderr.getvalue()
    assert not (tmp_path / "empty").exists()  # nothing written where nothing was

    root = tmp_path / "demo"
    _write(root / "demo.json", json.dumps({"task": "bars", "seed": 1, "threads": 2, "model": "micro", "device": "cpu"}))
    stderr = io.StringIO()
    assert run_demo(str(root), 5, stderr=stderr, resume=True) == 2
    assert "tools.vistool.json is missing" in stderr.getvalue()
    stderr = io.StringIO()
    assert run_demo(str(root), 5, stderr=stderr, overrides={"sft.steps": 3}, resume=True) == 2
    assert "--set sft.steps" in stderr.getvalue() and "recipe it started with" in stderr.getvalue()


def test_a_paused_arm_continues_from_its_checkpoint_and_a_finished_arm_is_kept(tmp_path):
    """The real thing on tiny budgets: a whole demo, then its text arm replaced by one paused after one
    step (`train --max-steps 1`, which leaves a checkpoint as an interrupt does), then `--resume`."""
    root = tmp_path / "demo"
    stderr = io.StringIO()
    assert run_demo(str(root), minutes=5, overrides={**TINY, "seed": 2}, stderr=stderr, threads=1) == 0, stderr.getvalue()[-3000:]
    tools_run = (root / "tools" / "run.json").read_bytes()
    tools_metrics = (root / "tools" / "metrics.jsonl").read_bytes()
    text_config = json.loads((root / "text.vistool.json").read_text())

    move_aside(root / "text")
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    paused = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(root / "text.vistool.json"), "--max-steps", "1"],
                            capture_output=True, text=True, env=environment, timeout=600)
    assert paused.returncode == 0, paused.stderr[-3000:]
    assert arm_state(root / "text") == "resume"
    assert json.loads((root / "text" / "run.json").read_text())["status"] != "finished"

    # Another task than the demo's is refused before anything runs.
    stderr = io.StringIO()
    assert run_demo(str(root), 5, stderr=stderr, task="geometry", resume=True) == 2
    assert "task 'geometry' (the demo in this folder has 'bars')" in stderr.getvalue()

    stderr = io.StringIO()
    assert run_demo(str(root), 5, stderr=stderr, overrides={"seed": 2}, resume=True) == 0, stderr.getvalue()[-3000:]
    said = stderr.getvalue()
    assert "tools finished (kept)" in said and "text continues from its newest checkpoint" in said
    # The finished arm was not touched; the text arm kept its config (the SFT budget the tools arm set).
    assert (root / "tools" / "run.json").read_bytes() == tools_run and (root / "tools" / "metrics.jsonl").read_bytes() == tools_metrics
    assert json.loads((root / "text.vistool.json").read_text()) == text_config
    text_run = json.loads((root / "text" / "run.json").read_text())
    assert text_run["status"] == "finished"
    log = (root / "text" / "logs" / "trainer.log").read_text()
    assert "resumed from" in log and "step-000001" in log
    rl_steps = sorted({line["rl/step"] for line in map(json.loads, (root / "text" / "metrics.jsonl").read_text().splitlines())
                       if line.get("stage") == "rl" and "rl/step" in line})
    assert rl_steps == [1, 2]
    summary = json.loads((root / "summary.json").read_text())
    assert all(summary["arms"][arm]["after_rl"]["n"] == 6 for arm in ARMS)
    assert len(json.loads((root / "demo.json").read_text())["resumed_at"]) == 1
