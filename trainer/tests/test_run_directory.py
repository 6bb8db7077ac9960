import json
import multiprocessing
import os
import time

from vistool_trainer.run.run_directory import RunDirectory, append_json_line, read_json_lines, write_json_atomic


def _writer(path, worker):
    for index in range(200):
        append_json_line(path, {"worker": worker, "index": index, "pad": "x" * 5000})


def test_concurrent_appends_never_interleave_lines(tmp_path):
    path = tmp_path / "metrics.jsonl"
    processes = [multiprocessing.Process(target=_writer, args=(path, worker)) for worker in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 600
    records = [json.loads(line) for line in lines]
    for worker in range(3):
        assert [r["index"] for r in records if r["worker"] == worker] == list(range(200))


def test_a_torn_last_line_is_skipped_by_readers(tmp_path):
    path = tmp_path / "metrics.jsonl"
    append_json_line(path, {"step": 1})
    with open(path, "a") as stream:
        stream.write('{"step": 2, "rew')
    assert read_json_lines(path) == [{"step": 1}]


def test_atomic_json_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "run.json"
    write_json_atomic(path, {"status": "running"})
    write_json_atomic(path, {"status": "finished"})
    assert json.loads(path.read_text()) == {"status": "finished"}
    assert os.listdir(tmp_path) == ["run.json"]


def test_run_directory_has_the_contract_layout_and_finds_only_complete_checkpoints(tmp_path):
    run = RunDirectory(tmp_path / "run")
    assert {p.name for p in run.root.iterdir()} == {"rollouts", "images", "checkpoints", "logs"}
    (run.checkpoint_path(3)).mkdir()
    (run.checkpoint_path(3) / "trainer_state.json").write_text("{}")
    (run.checkpoint_path(5)).mkdir()  # interrupted while writing: no trainer_state.json
    assert run.latest_checkpoint() == run.checkpoint_path(3)
    run.append_rollout(7, {"prompt_id": "a"})
    assert run.rollouts_path(7).name == "step-000007.jsonl"


def test_resume_drops_metric_lines_written_after_the_checkpoint(tmp_path):
    run = RunDirectory(tmp_path / "run")
    for step in range(1, 6):
        run.append_metrics({"step": step})
    run.metrics_after_resume(3)
    assert [r["step"] for r in read_json_lines(run.metrics_path)] == [1, 2, 3]


def test_every_metrics_record_carries_its_wall_time_in_unix_seconds(tmp_path):
    run = RunDirectory(tmp_path / "run")
    before = time.time()
    run.append_metrics({"step": 1, "stage": "sft"})
    run.append_metrics({"step": 2, "stage": "rl"})
    after = time.time()
    records = read_json_lines(run.metrics_path)
    times = [record["time"] for record in records]
    assert all(isinstance(value, float) for value in times)
    assert before <= times[0] <= times[1] <= after
    # A record that already says when it happened (a replayed or merged line) keeps its own time.
    run.append_metrics({"step": 3, "time": 1234.5})
    assert read_json_lines(run.metrics_path)[-1]["time"] == 1234.5


def test_a_fresh_train_into_a_folder_that_holds_a_run_is_refused_before_anything_is_written(tmp_path):
    """`train` without --resume into an old run's folder would append to its metrics and prune its
    checkpoints; the CLI refuses with what to do instead and leaves the old records byte for byte."""
    import subprocess
    import sys

    old = tmp_path / "old"
    (old / "checkpoints" / "step-000005").mkdir(parents=True)
    append_json_line(old / "metrics.jsonl", {"step": 5, "sft/loss": 0.5})
    before = (old / "metrics.jsonl").read_bytes()
    config = tmp_path / "run.vistool.json"
    config.write_text(json.dumps({"name": "again", "output_dir": str(old)}))
    result = subprocess.run([sys.executable, "-m", "vistool_trainer", "train", "--config", str(config)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "already holds a run (metrics.jsonl, checkpoints up to step-000005)" in result.stderr and "--resume" in result.stderr
    failed = json.loads(result.stdout.splitlines()[-1])
    assert failed["event"] == "failed" and str(old) in failed["error"]
    assert (old / "metrics.jsonl").read_bytes() == before
    assert not (old / "run.json").exists() and not (old / "config.json").exists()


def test_a_run_killed_with_sigkill_reads_as_stopped_though_run_json_says_running():
    import signal
    import subprocess
    import sys

    from vistool_trainer.run.run_directory import run_status

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert run_status({"status": "running", "pid": child.pid}) == "running"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert run_status({"status": "running", "pid": child.pid}) == "stopped"
    assert run_status({"status": "finished", "pid": child.pid}) == "finished"
    assert run_status({}) == "missing"


def test_a_folder_the_editor_marked_starting_or_left_empty_is_not_a_run_to_protect(tmp_path):
    from vistool_trainer.run.run_directory import RunDirectoryInUse, refuse_to_mix_runs

    refuse_to_mix_runs(tmp_path / "absent")
    (tmp_path / "empty" / "checkpoints").mkdir(parents=True)
    (tmp_path / "empty" / "metrics.jsonl").write_text("")
    refuse_to_mix_runs(tmp_path / "empty")
    write_json_atomic(tmp_path / "empty" / "run.json", {"status": "starting", "pid": 1})  # the extension, just before it spawns
    refuse_to_mix_runs(tmp_path / "empty")
    write_json_atomic(tmp_path / "empty" / "run.json", {"status": "finished"})
    import pytest

    with pytest.raises(RunDirectoryInUse, match="run.json, status finished"):
        refuse_to_mix_runs(tmp_path / "empty")
