"""The curriculum's perception stage (`curriculum.perception_first`, V-Thinker's first stage):
point-localisation SFT before the interactive stages, with its own perception/* metrics. The end
to end test runs it against the REAL env server on tasks from the REAL generator."""
import io
import json

from record_schemas import assert_valid_metrics_lines
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.rollouts.rollout import Rollout
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.run_config import resolve_config
from vistool_trainer.run.run_directory import read_json_lines
from vistool_trainer.run.train import train
from vistool_trainer.trainers.perception import perception_metrics, perception_sft_config


def rollout(correct: bool, reward: float, distance: float | None) -> Rollout:
    components = {} if distance is None else {"point_distance_px": distance}
    return Rollout(prompt_id="p", group=0, conversation=Conversation(prompts=[[]]), reward=reward, components=components, correct=correct)


def test_perception_metrics_average_what_was_measured_and_say_null_when_nothing_was():
    metrics = perception_metrics([rollout(True, 1.0, 3.0), rollout(False, 0.5, 9.0), rollout(False, 0.0, None), rollout(True, 1.0, 0.0)])
    # By hand: 2 of 4 within tolerance; distances 3, 9, 0 over the 3 answers a point was read from.
    assert metrics == {"perception/acc": 0.5, "perception/point_distance_px": 4.0, "perception/answered": 0.75,
                       "perception/reward": 0.625, "perception/n": 4.0}
    assert perception_metrics([rollout(False, 0.0, None)])["perception/point_distance_px"] is None
    assert perception_metrics([])["perception/acc"] is None


def test_the_perception_stage_uses_its_own_budget_and_none_of_the_tool_phases():
    config = resolve_config({"sft": {"steps": 900, "lr": 0.01, "after_tool_turns_first": 50, "direct_answer_fraction": 0.5, "probe_tasks": 8},
                             "curriculum": {"perception_first": True, "perception": {"steps": 12, "batch_size": 5, "lr": 0.003, "max_seconds": 60}}})
    stage = perception_sft_config(config)
    assert (stage.steps, stage.batch_size, stage.lr, stage.max_seconds) == (12, 5, 0.003, 60)
    assert (stage.after_tool_turns_first, stage.direct_answer_fraction, stage.probe_tasks) == (0, 0.0, 0)
    assert config.sft.steps == 900, "the run's own SFT settings are left as they were"


def test_a_geometry_run_with_the_curriculum_trains_perception_first_and_reports_it(tmp_path, cli_bundle):
    stdout = io.StringIO()
    config = resolve_config({
        "name": "curriculum", "seed": 4, "output_dir": str(tmp_path / "run"), "device": "cpu",
        "data": {"generate": {"kind": "geometry", "n_train": 12, "n_eval": 4, "difficulty": 1, "image_size": "224x112",
                              "families": ["above_below"]}},
        "curriculum": {"perception_first": True, "perception": {"n_train": 12, "n_eval": 3, "steps": 3, "batch_size": 4}},
        "policy": {"model": "micro", "system_prompt": "", "micro": {"vocab_size": 400}},
        "env": {"max_turns": 2, "max_tool_calls": 1},
        "sft": {"steps": 2, "batch_size": 4},
        "rl": {"steps": 1, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 8, "dynamic_sampling": False},
        "eval": {"n": 3, "max_new_tokens": 8, "before": False},
        "checkpoint": {"every_steps": 0, "keep": 2},
    })
    code = train(config, events=EventStream(stdout=stdout, stderr=io.StringIO()))
    events = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert code == 0, [e for e in events if e["event"] == "failed"]
    assert [e["stage"] for e in events if e["event"] == "stage"] == ["perception", "sft", "rl"]
    run = tmp_path / "run"
    metrics = read_json_lines(run / "metrics.jsonl")
    assert_valid_metrics_lines(metrics)
    perception = [m for m in metrics if m["stage"] == "perception"]
    assert [m["perception/step"] for m in perception] == [1, 2, 3]
    assert all(m["perception/loss"] > 0 for m in perception)
    # The global step runs on through the stages: perception 1–3, SFT 4–5, RL 6.
    assert [m["step"] for m in metrics if m["stage"] != "eval"] == [1, 2, 3, 4, 5, 6]
    evals = {m["label"]: m for m in metrics if m["stage"] == "eval"}
    assert list(evals) == ["after_perception", "after_sft", "after_rl"]
    for label, line in evals.items():
        assert line["perception/n"] == 3 and 0 <= line["perception/acc"] <= 1, label
        assert "eval/acc_tools" in line, "the interactive held-out set is evaluated at every checkpoint too"
    # The perception tasks were generated as geometry `locate` tasks next to the run's own data.
    task = json.loads((run / "data" / "perception-train" / "tasks.jsonl").read_text().splitlines()[0])
    assert (task["kind"], task["family"], task["query"]["tolerance_px"]) == ("geometry", "locate", 7)
    assert json.loads((run / "run.json").read_text())["evaluations"]["after_perception"]["perception/n"] == 3
