"""The per-task records of an evaluation (run/eval_records.py): a task's arms on consecutive lines,
in the rollout-record schema, written whole; a second write of a label replaces the first; the
step of a checkpoint evaluated afterwards comes from its trainer_state.json or its folder name."""
import json
from pathlib import Path

from record_schemas import assert_valid_rollout_records
from vistool_trainer.model.conversation import Conversation
from vistool_trainer.rollouts.rollout import Rollout
from vistool_trainer.run.eval_records import eval_records_path, write_eval_records
from vistool_trainer.run.evaluate_command import checkpoint_step
from vistool_trainer.run.run_directory import read_json_lines


def rollout(prompt_id: str, correct: bool) -> Rollout:
    trajectory = {"prompt_id": prompt_id, "task": {"question": "q", "answer": "1", "kind": "vbar", "difficulty": 1, "image": "ab" * 32},
                  "turns": [{"role": "assistant", "text": "<answer>1</answer>", "calls": [], "errors": [], "answer": "1"}],
                  "answer": "1", "end_reason": "answer", "tool_calls": 0, "tool_errors": 0}
    return Rollout(prompt_id=prompt_id, group=0, conversation=Conversation(prompts=[[]]), reward=1.0 if correct else 0.0, components={"accuracy": float(correct)},
                   weights={"accuracy": 1.0}, correct=correct, trajectory=trajectory)


def test_a_tasks_arms_are_consecutive_lines_in_the_record_schema(tmp_path: Path) -> None:
    arms = {"tools": [rollout("a", True), rollout("b", False)], "no_tools": [rollout("a", False), rollout("b", False)]}
    path = write_eval_records(tmp_path, "after_rl", 40, arms)
    assert path == tmp_path / "rollouts" / "eval-after_rl.jsonl"
    records = read_json_lines(path)
    assert [(r["prompt_id"], r["arm"], r["group"], r["correct"]) for r in records] == [
        ("a", "tools", 0, True), ("a", "no_tools", 1, False), ("b", "tools", 0, False), ("b", "no_tools", 1, False)]
    assert {r["label"] for r in records} == {"after_rl"} and {r["step"] for r in records} == {40}
    assert all("advantage" not in r and "kept" not in r for r in records)
    assert_valid_rollout_records(records)
    # A resumed run evaluating the same label again replaces the file, it never doubles it; no temporary file stays.
    write_eval_records(tmp_path, "after_rl", 41, {"tools": [rollout("a", True)]})
    assert [(r["prompt_id"], r["step"]) for r in read_json_lines(path)] == [("a", 41)]
    assert sorted(p.name for p in (tmp_path / "rollouts").iterdir()) == ["eval-after_rl.jsonl"]


def test_labels_become_safe_file_names_and_a_checkpoints_step_is_found(tmp_path: Path) -> None:
    assert eval_records_path(tmp_path, "../x y").name == "eval-x_y.jsonl"
    assert eval_records_path(tmp_path, "...").name == "eval-eval.jsonl"
    folder = tmp_path / "checkpoints" / "step-000120"
    folder.mkdir(parents=True)
    assert checkpoint_step(folder) == 120
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 118}))
    assert checkpoint_step(folder) == 118
