"""logging.report_to: a real training run (real env server, micro policy) also writes TensorBoard
event files and an offline W&B run, and both hold the values metrics.jsonl holds, under its names.
The values are read back with the libraries' own readers (TensorBoard's EventAccumulator, W&B's
`wandb leet inspect`), not with this package's code."""
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_end_to_end import small_config
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.report_to import ReporterMissing, metric_values, open_reporters, rollout_markdown, wandb_mode
from vistool_trainer.run.run_directory import read_json_lines
from vistool_trainer.run.train import train


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    """No API key, no network use, W&B's own folders inside the test's tmp dir."""
    for key in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_PROJECT", "WANDB_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    for key in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(key, str(tmp_path / "wandb-home" / key.lower()))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.netrc key
    (tmp_path / "home").mkdir()


@pytest.fixture(scope="module")
def reported_run(tmp_path_factory, vbar_data):
    """One short SFT + RL run with both reporters (module-scoped: a run with W&B takes ~20 s)."""
    import os

    tmp = tmp_path_factory.mktemp("report-to")
    saved = {key: os.environ.get(key) for key in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_PROJECT", "HOME", "WANDB_CACHE_DIR",
                                                  "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR")}
    for key in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_PROJECT", "WANDB_DATA_DIR"):
        os.environ.pop(key, None)
    (tmp / "home").mkdir()
    os.environ["HOME"] = str(tmp / "home")
    for key in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_ARTIFACT_DIR"):
        os.environ[key] = str(tmp / "wandb-home" / key.lower())
    try:
        train_path, eval_path = vbar_data
        config = small_config(tmp, train_path, eval_path, "reported",
                              logging={"report_to": ["tensorboard", "wandb"], "rollouts_per_step": 4, "report_rollouts_per_step": 2},
                              sft={"steps": 3, "batch_size": 4, "probe_tasks": 2, "probe_every": 2},
                              rl={"steps": 2, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False})
        stderr = io.StringIO()
        code = train(config, events=EventStream(stdout=io.StringIO(), stderr=stderr))
        assert code == 0, stderr.getvalue()[-3000:]
        yield tmp / "reported", stderr.getvalue()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _numeric_lines(run: Path) -> list[dict]:
    return [line for line in read_json_lines(run / "metrics.jsonl") if metric_values(line)]


def test_tensorboards_own_reader_finds_every_metric_line_under_its_name(reported_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run, _ = reported_run
    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"scalars": 0, "images": 0, "tensors": 0})
    events.Reload()
    lines = _numeric_lines(run)
    expected: dict[str, list[tuple[int, float]]] = {}
    for line in lines:
        for key, value in metric_values(line).items():
            expected.setdefault(key, []).append((int(line["step"]), value))
    assert {"sft/loss", "reward/mean", "actor/pg_clipfrac", "eval/acc_tools", "sft/probe_call_acc"} <= set(expected)
    assert set(events.Tags()["scalars"]) == set(expected)
    for key, points in expected.items():
        read = [(event.step, event.value) for event in events.Scalars(key)]
        assert [step for step, _ in read] == [step for step, _ in points], key
        # TensorBoard stores float32: equal to the metrics.jsonl value at that precision.
        assert all(abs(got - want) <= 1e-6 * max(1.0, abs(want)) for (_, got), (_, want) in zip(read, points)), key
    # Each RL step's sampled rollouts: the transcript as text and the chart as an image, at the step they were written.
    rollout_steps = sorted(int(path.stem.split("-")[1]) for path in (run / "rollouts").glob("step-*.jsonl"))
    assert len(rollout_steps) == 2
    # torch's writer files add_text("rollouts/0") under the text plugin's tag "rollouts/0/text_summary".
    assert {"rollouts/0/text_summary", "rollouts/1/text_summary"} == set(events.Tags()["tensors"])
    assert [event.step for event in events.Tensors("rollouts/0/text_summary")] == rollout_steps
    first = read_json_lines(run / "rollouts" / f"step-{rollout_steps[0]:06d}.jsonl")[0]
    text = events.Tensors("rollouts/0/text_summary")[0].tensor_proto.string_val[0].decode()
    assert text == rollout_markdown(first)
    charts = events.Images("rollouts/0/chart")
    assert [image.step for image in charts] == rollout_steps and charts[0].width == 112 and charts[0].height == 112


def test_an_offline_wandb_run_holds_every_metric_line_and_the_rollout_tables(reported_run):
    run, log = reported_run
    offline = sorted((run / "wandb").glob("offline-run-*"))
    assert len(offline) == 1, list((run / "wandb").iterdir())
    assert "W&B is offline (no W&B API key" in log and f"wandb sync {offline[0]}" in log
    inspected = subprocess.run([str(Path(sys.executable).parent / "wandb"), "leet", "inspect", str(offline[0]), "--json"],
                               capture_output=True, text=True, timeout=120)
    assert inspected.returncode == 0, inspected.stderr
    records = [json.loads(line) for line in inspected.stdout.splitlines() if line.startswith("{")]
    history = [record["history"]["item"] for record in records if record.get("type") == "history"]
    # W&B flattens a logged table into rollouts.* keys (its file, size, rows).
    logged = [{key: value for key, value in item.items() if not key.startswith(("_", "rollouts."))} for item in history]
    expected = [{**metric_values(line), "step": line["step"]} for line in _numeric_lines(run)]
    metric_rows = [row for row in logged if set(row) != {"step"}]
    assert len(metric_rows) == len(expected)
    for got, want in zip(metric_rows, expected):
        assert set(got) == set(want)
        assert all(abs(float(got[key]) - float(want[key])) <= 1e-9 * max(1.0, abs(float(want[key]))) for key in want)
    tables = [item for item in history if "rollouts._type" in item]
    assert len(tables) == 2 and all(item["rollouts._type"] == "table-file" and item["rollouts.nrows"] == 2 for item in tables)
    # The tables with their images are an artifact W&B stages for upload: in the run directory.
    staged = [path for path in (run / "wandb" / "artifacts" / "staging").iterdir()]
    staged_tables = [json.loads(path.read_text()) for path in staged if path.read_bytes()[:1] == b"{"]
    assert staged_tables and all(table["columns"][-2:] == ["chart", "tool_output"] and len(table["data"]) == 2 for table in staged_tables)
    first = read_json_lines(sorted((run / "rollouts").glob("step-*.jsonl"))[0])[0]
    assert any(table["data"][0][:2] == [first["step"], first["prompt_id"]] for table in staged_tables)
    chart_bytes = (run / "images" / f"{first['task']['image']}.png").read_bytes()
    assert any(path.read_bytes() == chart_bytes for path in staged)
    run_record = next(record["run"] for record in records if record.get("type") == "run")
    assert run_record["config"]["update"]["logging"]["report_to"] == ["tensorboard", "wandb"]
    assert json.loads((run / "run.json").read_text())["wandb_run_id"] == run_record["run_id"]


def test_a_missing_library_stops_the_run_before_it_starts_and_says_what_to_install(tmp_path, vbar_data, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` now raises ImportError
    with pytest.raises(ReporterMissing, match=r"wandb is not installed: pip install 'vistool-trainer\[wandb\]'"):
        open_reporters(["wandb"], tmp_path, "x", {}, "vistool", 1, "id", print)
    train_path, eval_path = vbar_data
    config = small_config(tmp_path, train_path, eval_path, "missing", logging={"report_to": ["wandb"]})
    stdout = io.StringIO()
    assert train(config, events=EventStream(stdout=stdout, stderr=io.StringIO())) == 1
    failed = [json.loads(line) for line in stdout.getvalue().splitlines() if json.loads(line)["event"] == "failed"]
    assert failed and "pip install 'vistool-trainer[wandb]'" in failed[0]["error"]
    assert not any(line.get("stage") == "sft" for line in read_json_lines(tmp_path / "missing" / "metrics.jsonl"))


def test_wandb_goes_offline_without_a_key_or_a_network_and_follows_wandb_mode():
    never = lambda host: False  # noqa: E731
    always = lambda host: True  # noqa: E731
    assert wandb_mode({}, always, never) == ("offline", "no W&B API key (WANDB_API_KEY, or `wandb login` for api.wandb.ai)")
    assert wandb_mode({"WANDB_API_KEY": "k"}, never, never) == ("offline", "api.wandb.ai cannot be reached from this machine")
    assert wandb_mode({"WANDB_API_KEY": "k"}, always, never)[0] == "online"
    assert wandb_mode({}, always, always)[0] == "online"  # a key from `wandb login` (~/.netrc)
    assert wandb_mode({"WANDB_MODE": "disabled"}, never, never) == ("disabled", "WANDB_MODE is set")
    seen = []
    wandb_mode({"WANDB_API_KEY": "k", "WANDB_BASE_URL": "https://wandb.example.org:8443"}, lambda host: seen.append(host) or True, never)
    assert seen == ["wandb.example.org"]


def test_only_numbers_are_metrics_and_model_text_cannot_break_out_of_its_block():
    assert metric_values({"step": 3, "time": 1.0, "stage": "rl", "label": "x", "reward/mean": 0.5, "flag": True, "none": None}) == {
        "reward/mean": 0.5, "flag": 1.0}
    text = rollout_markdown({"task": {"question": "Q", "answer": "low"}, "answer": "low", "correct": True, "reward": 1.2,
                             "turns": [{"role": "assistant", "text": "````\n<b>x</b>"}]})
    assert "`````\n````\n<b>x</b>\n`````" in text
