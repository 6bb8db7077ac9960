"""checkpoint.sft_every_steps: the SFT warm-up saves checkpoints as it goes, so a run killed inside
it (the OOM killer, a closed laptop) resumes from the newest one and reaches the weights an
uninterrupted run reaches, instead of starting its warm-up over."""
import io
import json
import shutil

import torch
from safetensors.torch import load_file

from test_end_to_end import small_config
from vistool_trainer.run.events import EventStream
from vistool_trainer.run.train import train


def _quiet() -> EventStream:
    return EventStream(stdout=io.StringIO(), stderr=io.StringIO())


def test_a_run_killed_in_sft_resumes_from_its_periodic_checkpoint_to_the_same_weights(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    sections = {"sft": {"steps": 5, "batch_size": 4}, "rl": {"enabled": False}, "eval": {"n": 3, "max_new_tokens": 8, "before_and_after": False},
                "checkpoint": {"every_steps": 1, "sft_every_steps": 2, "keep": 5}}
    assert train(small_config(tmp_path, train_path, eval_path, "straight", **sections), events=_quiet()) == 0
    saved = sorted(path.name for path in (tmp_path / "straight" / "checkpoints").glob("step-*"))
    assert saved == ["step-000002", "step-000004", "step-000005"]  # every 2 SFT steps, and the stage's end
    state = json.loads((tmp_path / "straight" / "checkpoints" / "step-000004" / "trainer_state.json").read_text())
    assert state["stage"] == "sft" and state["sft_step"] == 4
    assert (tmp_path / "straight" / "checkpoints" / "step-000004" / "optimizer.pt").exists()

    # A run killed after step 3: what it left is the straight run's directory up to its step-2 checkpoint.
    shutil.copytree(tmp_path / "straight", tmp_path / "killed")
    for later in ("step-000004", "step-000005"):
        shutil.rmtree(tmp_path / "killed" / "checkpoints" / later)
    killed = small_config(tmp_path, train_path, eval_path, "killed", **sections)
    said = io.StringIO()
    assert train(killed, resume=True, events=EventStream(stdout=io.StringIO(), stderr=said)) == 0
    assert "resumed from" in said.getvalue() and "step-000002" in said.getvalue()
    steps = [json.loads(line).get("sft/step") for line in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()]
    assert [step for step in steps if step is not None] == [1, 2, 3, 4, 5]  # the lines after the checkpoint written once
    final = lambda name: load_file(str(tmp_path / name / "checkpoints" / "step-000005" / "policy" / "model.safetensors"))
    a, b = final("straight"), final("killed")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)


def test_zero_saves_no_checkpoint_inside_sft(tmp_path, vbar_data):
    train_path, eval_path = vbar_data
    sections = {"sft": {"steps": 3, "batch_size": 4}, "rl": {"enabled": False}, "eval": {"n": 3, "max_new_tokens": 8, "before_and_after": False},
                "checkpoint": {"every_steps": 1, "sft_every_steps": 0, "keep": 5}}
    assert train(small_config(tmp_path, train_path, eval_path, "none", **sections), events=_quiet()) == 0
    assert sorted(path.name for path in (tmp_path / "none" / "checkpoints").glob("step-*")) == ["step-000003"]
